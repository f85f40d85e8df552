// SPDX-License-Identifier: Apache-2.0
// Model summary: per node output shape, trainable and frozen parameters, MACs and activation
// memory for a batch size, with totals; as text (like Keras model.summary()) and as JSON.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/ops/model.h"

namespace kiln::engine::ops {

struct SummaryRow {
    std::string name;
    std::string op;
    Shape output;
    std::vector<std::string> inputs;
    int64_t trainableParams = 0;
    int64_t frozenParams = 0;   // non-trainable: frozen nodes and moving statistics
    std::string sharedWith;     // parameters are those of this node (counted there)
    int64_t macs = 0;           // for the whole batch
    int64_t activationBytes = 0;  // output tensor for the whole batch, float32
};

struct ModelSummary {
    int64_t batch = 1;
    std::vector<SummaryRow> rows;  // topological order
    int64_t trainableParams = 0;
    int64_t frozenParams = 0;
    int64_t macs = 0;
    int64_t activationBytes = 0;
    int64_t parameterBytes = 0;
};

ModelSummary summarize(const ModelInfo& model, int64_t batch);
std::string summaryText(const ModelSummary& s, const std::string& title = {});
nlohmann::json summaryJson(const ModelSummary& s);
std::string humanBytes(int64_t bytes);  // "1.2 MiB"
std::string groupDigits(int64_t n);     // "1,234,567"

}  // namespace kiln::engine::ops
