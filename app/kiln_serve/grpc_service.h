// SPDX-License-Identifier: Apache-2.0
// kiln-serve's gRPC front end: tensorflow.serving.PredictionService (Predict, GetModelMetadata)
// and ModelService (GetModelStatus) on top of the same model manager as the REST API.
#pragma once

#include <memory>
#include <string>

#include "engine/core/error.h"
#include "engine/serve/json_tensor.h"

namespace kiln::engine::serve {
class ModelManager;
class Metrics;
class InflightBudget;
}

namespace kiln::app {

struct GrpcOptions {
    int timeoutMs = 30000;
    int maxReceiveBytes = 64 << 20;  // larger messages are refused by gRPC (RESOURCE_EXHAUSTED)
    engine::serve::RequestLimits limits;  // batch and element budget of one Predict call
    // The server-wide cap on request tensors in flight (shared with REST); null: no cap. A call
    // that does not fit gets RESOURCE_EXHAUSTED at once.
    engine::serve::InflightBudget* inflight = nullptr;
};

class GrpcServer {
public:
    GrpcServer(engine::serve::ModelManager& manager, engine::serve::Metrics* metrics, GrpcOptions options);
    ~GrpcServer();
    // Starts listening on address:port (port 0 picks one); returns the bound port.
    engine::Result<int> start(const std::string& address, int port);
    void stop();

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace kiln::app
