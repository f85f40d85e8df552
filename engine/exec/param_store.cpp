// SPDX-License-Identifier: Apache-2.0
// Parameter creation and Keras-style initialisation.
#include "engine/exec/param_store.h"

#include <cmath>
#include <cstring>
#include <functional>

#include "engine/core/rng.h"

namespace kiln::engine::exec {
namespace {

// Keras fan computation: for a kernel [.., in, out] the receptive field is the product of the
// leading dimensions.
void fans(const Shape& s, double& fanIn, double& fanOut) {
    if (s.rank() < 2) {
        fanIn = fanOut = static_cast<double>(s.numel());
        return;
    }
    double receptive = 1;
    for (int i = 0; i < s.rank() - 2; ++i) receptive *= static_cast<double>(s[i]);
    fanIn = receptive * static_cast<double>(s[s.rank() - 2]);
    fanOut = receptive * static_cast<double>(s[s.rank() - 1]);
}

uint64_t nameHash(const std::string& s) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a: stable across platforms, unlike std::hash
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return h;
}

void initialise(Parameter& p, uint64_t seed) {
    float* v = p.value.data<float>();
    int64_t n = p.value.numel();
    uint64_t stream = nameHash(p.name);
    double fanIn, fanOut;
    fans(p.spec.shape, fanIn, fanOut);
    double limit = 0;
    switch (p.spec.init) {
    case ops::Init::Zeros: std::fill_n(v, n, 0.0f); return;
    case ops::Init::Ones: std::fill_n(v, n, 1.0f); return;
    case ops::Init::GlorotUniform: limit = std::sqrt(6.0 / (fanIn + fanOut)); break;
    case ops::Init::HeUniform: limit = std::sqrt(6.0 / fanIn); break;
    case ops::Init::Uniform005: limit = 0.05; break;
    }
    for (int64_t i = 0; i < n; ++i)
        v[i] = static_cast<float>((2.0 * rng::uniform(seed, stream, static_cast<uint64_t>(i)) - 1.0) * limit);
}

}  // namespace

ParamStore ParamStore::create(const ops::ModelInfo& model, uint64_t seed) {
    ParamStore store;
    store.m_nodeParams.resize(model.nodes.size());
    for (size_t i = 0; i < model.nodes.size(); ++i) {
        const auto& ni = model.nodes[i];
        if (ni.paramOwner != static_cast<int>(i)) continue;
        for (const auto& spec : ni.params) {
            Parameter p;
            p.name = model.graph.nodes[i].name + "/" + spec.name;
            p.node = static_cast<int>(i);
            p.spec = spec;
            p.value = Tensor(spec.shape);
            p.grad = Tensor(spec.shape);
            p.trainable = spec.trainable && ni.trainable;
            p.lrMultiplier = ni.lrMultiplier;
            p.decay = spec.name == "kernel" || spec.name == "depthwise_kernel" || spec.name == "embeddings";
            initialise(p, seed);
            store.m_nodeParams[i].push_back(static_cast<int>(store.m_params.size()));
            store.m_params.push_back(std::move(p));
        }
    }
    for (size_t i = 0; i < model.nodes.size(); ++i) {
        int owner = model.nodes[i].paramOwner;
        if (owner != static_cast<int>(i)) store.m_nodeParams[i] = store.m_nodeParams[static_cast<size_t>(owner)];
    }
    return store;
}

Parameter* ParamStore::find(const std::string& name) {
    for (auto& p : m_params)
        if (p.name == name) return &p;
    return nullptr;
}

void ParamStore::zeroGrads() {
    for (auto& p : m_params)
        if (p.trainable) std::memset(p.grad.raw(), 0, p.grad.bytes());
}

}  // namespace kiln::engine::exec
