// SPDX-License-Identifier: Apache-2.0
// The model's parameters and their gradients, shared by every plan compiled for the model
// (training, evaluation, the last partial batch). Names are "<node>/<param>", as in files.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "engine/core/tensor.h"
#include "engine/ops/model.h"

namespace kiln::engine::exec {

struct Parameter {
    std::string name;        // "fc1/kernel"
    int node = -1;           // owning node index
    ops::ParamSpec spec;
    Tensor value;
    Tensor grad;             // same shape; zeroed at the start of each training step
    bool trainable = true;   // spec.trainable && node trainable
    float lrMultiplier = 1.0f;
    bool decay = true;       // weight decay applies (kernels and embeddings, not biases or norms)
};

class ParamStore {
public:
    // Creates and initialises every parameter (Keras initialisers, counter-based RNG: the same
    // seed gives the same weights on any machine).
    static ParamStore create(const ops::ModelInfo& model, uint64_t seed);

    std::vector<Parameter>& params() { return m_params; }
    const std::vector<Parameter>& params() const { return m_params; }
    Parameter* find(const std::string& name);
    // Index of parameter k of node `node` (through shared weights).
    int index(int node, size_t k) const { return m_nodeParams[static_cast<size_t>(node)][k]; }
    void zeroGrads();

private:
    std::vector<Parameter> m_params;
    std::vector<std::vector<int>> m_nodeParams;
};

}  // namespace kiln::engine::exec
