// SPDX-License-Identifier: Apache-2.0
// kiln-serve's gRPC front end: tensorflow.serving.PredictionService (Predict, GetModelMetadata)
// and ModelService (GetModelStatus) on top of the same model manager as the REST API.
#pragma once

#include <memory>
#include <string>

#include "engine/core/error.h"

namespace kiln::engine::serve {
class ModelManager;
class Metrics;
}

namespace kiln::app {

class GrpcServer {
public:
    GrpcServer(engine::serve::ModelManager& manager, engine::serve::Metrics* metrics, int timeoutMs);
    ~GrpcServer();
    // Starts listening on address:port (port 0 picks one); returns the bound port.
    engine::Result<int> start(const std::string& address, int port);
    void stop();

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace kiln::app
