// SPDX-License-Identifier: Apache-2.0
// Int8 post-training quantisation: value selection, ranges, scales and the CPU simulation of the
// quantised model. Rounding is half to even (std::nearbyint in the default rounding mode), as
// ONNX QuantizeLinear rounds.
#include "engine/io/quantize.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::engine::io {

using ops::OpKind;

bool hasInt8Path(OpKind kind) {
    return kind == OpKind::Dense || kind == OpKind::Conv2D || kind == OpKind::DepthwiseConv2D;
}

namespace {

// The node whose values node i passes on unchanged: Dropout (the identity at inference), Flatten
// and Reshape (the same values in another shape; the plan gives them no step of their own).
int passThrough(const ops::ModelInfo& model, int i) {
    for (;;) {
        const OpKind k = model.nodes[static_cast<size_t>(i)].def->kind;
        if (k != OpKind::Dropout && k != OpKind::Flatten && k != OpKind::Reshape) return i;
        i = model.nodes[static_cast<size_t>(i)].inputs[0];
    }
}

// Number of output channels of a quantised node's kernel: its last axis, or the last two for a
// depthwise kernel [kh, kw, C, m].
int64_t kernelChannels(OpKind kind, const Shape& w) {
    if (kind == OpKind::DepthwiseConv2D) return w[w.rank() - 2] * w[w.rank() - 1];
    return w[w.rank() - 1];
}

}  // namespace

std::set<std::string> quantizedValues(const ops::ModelInfo& model) {
    std::set<std::string> out;
    for (int i : model.order) {
        const auto& ni = model.nodes[static_cast<size_t>(i)];
        if (!hasInt8Path(ni.def->kind)) continue;
        out.insert(model.graph.nodes[static_cast<size_t>(i)].name);
        out.insert(model.graph.nodes[static_cast<size_t>(passThrough(model, ni.inputs[0]))].name);
    }
    return out;
}

QuantParams activationParams(ValueRange r) {
    const double lo = std::min(0.0, static_cast<double>(r.min));
    const double hi = std::max(0.0, static_cast<double>(r.max));
    QuantParams p;
    if (!(hi > lo) || !std::isfinite(hi - lo)) return p;  // constant zero (or unusable) value
    p.scale = static_cast<float>((hi - lo) / 255.0);
    // lo maps to −128; the zero point is where 0 lands, inside [−128, 127] as lo <= 0 <= hi.
    p.zeroPoint = static_cast<int32_t>(std::clamp(std::nearbyint(-128.0 - lo / p.scale), -128.0, 127.0));
    return p;
}

std::vector<float> weightScales(const float* w, int64_t rows, int64_t channels, bool perChannel) {
    std::vector<float> maxAbs(static_cast<size_t>(perChannel ? channels : 1), 0.0f);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < channels; ++c) {
            float& m = maxAbs[static_cast<size_t>(perChannel ? c : 0)];
            m = std::max(m, std::fabs(w[r * channels + c]));
        }
    for (float& m : maxAbs) m = m > 0.0f && std::isfinite(m) ? m / 127.0f : 1.0f;
    return maxAbs;
}

std::vector<int8_t> quantizeWeights(const float* w, int64_t rows, int64_t channels, const std::vector<float>& scales) {
    std::vector<int8_t> q(static_cast<size_t>(rows * channels));
    const bool perChannel = scales.size() > 1;
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < channels; ++c) {
            const float s = scales[static_cast<size_t>(perChannel ? c : 0)];
            const float v = std::clamp(std::nearbyint(w[r * channels + c] / s), -127.0f, 127.0f);
            q[static_cast<size_t>(r * channels + c)] = static_cast<int8_t>(v);
        }
    return q;
}

void fakeQuantize(float* v, int64_t n, QuantParams p) {
    const auto zp = static_cast<float>(p.zeroPoint);
    for (int64_t i = 0; i < n; ++i) {
        const float q = std::clamp(std::nearbyint(v[i] / p.scale) + zp, -128.0f, 127.0f);
        v[i] = (q - zp) * p.scale;
    }
}

Result<std::unique_ptr<RangeCollector>> RangeCollector::create(const ops::ModelInfo& model, exec::ParamStore& params,
                                                               std::set<std::string> values, int64_t batch,
                                                               ThreadPool& pool) {
    std::unique_ptr<RangeCollector> rc(new RangeCollector());
    rc->m_model = &model;
    rc->m_values = std::move(values);
    exec::CompileOptions opts;
    opts.batch = batch;
    opts.training = false;
    opts.fuse = false;  // every quantised value is its own step's output
    RangeCollector* self = rc.get();
    opts.observe = [self, batch](const std::string& node, float* v, int64_t count) {
        if (!self->m_values.count(node)) return;
        // Only the first m_count samples of the batch are real.
        const int64_t n = count / batch * self->m_count;
        if (n <= 0) return;
        auto [lo, hi] = std::minmax_element(v, v + n);
        auto it = self->m_ranges.find(node);
        if (it == self->m_ranges.end()) self->m_ranges[node] = {*lo, *hi};
        else it->second = {std::min(it->second.min, *lo), std::max(it->second.max, *hi)};
    };
    KILN_ASSIGN(rc->m_plan, exec::Plan::compile(model, params, opts, pool));
    return rc;
}

Status RangeCollector::add(const std::vector<const float*>& inputs, int64_t count) {
    const int64_t batch = m_plan->batch();
    if (inputs.size() != m_model->inputs.size() || count <= 0 || count > batch)
        return Error(ErrorCode::Internal, "calibration batch does not match the model inputs");
    for (size_t k = 0; k < inputs.size(); ++k) {
        const int node = m_model->inputs[k];
        const int64_t per = m_model->nodes[static_cast<size_t>(node)].output.numelFrom(1);
        // Input nodes have no step: their range is taken here.
        if (const std::string& name = m_model->graph.nodes[static_cast<size_t>(node)].name; m_values.count(name)) {
            auto [lo, hi] = std::minmax_element(inputs[k], inputs[k] + per * count);
            auto it = m_ranges.find(name);
            if (it == m_ranges.end()) m_ranges[name] = {*lo, *hi};
            else it->second = {std::min(it->second.min, *lo), std::max(it->second.max, *hi)};
        }
        float* dst = m_plan->input(k);
        std::copy(inputs[k], inputs[k] + per * count, dst);
        // Pad a short batch with its first sample, whose values are already counted.
        for (int64_t s = count; s < batch; ++s) std::copy(inputs[k], inputs[k] + per, dst + s * per);
    }
    m_count = count;
    KILN_TRY(m_plan->forward());
    m_samples += count;
    return {};
}

Result<Int8Quantization> makeQuantization(const ops::ModelInfo& model, const std::map<std::string, ValueRange>& ranges,
                                          bool perChannel) {
    Int8Quantization q;
    q.perChannel = perChannel;
    for (const auto& name : quantizedValues(model)) {
        auto it = ranges.find(name);
        if (it == ranges.end())
            return Error(ErrorCode::Internal, "no calibration range was collected for " + name).withNode(name);
        q.values[name] = activationParams(it->second);
    }
    return q;
}

exec::ParamStore fakeQuantizedWeights(const ops::ModelInfo& model, const exec::ParamStore& params, bool perChannel) {
    exec::ParamStore out = params;
    for (auto& p : out.params()) p.value = p.value.clone();
    std::set<int> done;  // shared kernels are rounded once
    for (int i : model.order) {
        const auto& ni = model.nodes[static_cast<size_t>(i)];
        if (!hasInt8Path(ni.def->kind)) continue;
        const int idx = out.index(i, 0);
        if (!done.insert(idx).second) continue;
        Tensor& w = out.params()[static_cast<size_t>(idx)].value;
        const int64_t channels = kernelChannels(ni.def->kind, w.shape());
        const int64_t rows = w.numel() / channels;
        float* data = w.data<float>();
        const auto scales = weightScales(data, rows, channels, perChannel);
        const auto q = quantizeWeights(data, rows, channels, scales);
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < channels; ++c)
                data[r * channels + c] = static_cast<float>(q[static_cast<size_t>(r * channels + c)]) *
                                         scales[scales.size() > 1 ? static_cast<size_t>(c) : 0];
    }
    return out;
}

Result<std::unique_ptr<Int8Simulator>> Int8Simulator::create(const ops::ModelInfo& model, const exec::ParamStore& params,
                                                             const Int8Quantization& quant, int64_t batch, ThreadPool& pool) {
    std::unique_ptr<Int8Simulator> sim(new Int8Simulator());
    sim->m_params = fakeQuantizedWeights(model, params, quant.perChannel);
    sim->m_quant = quant;
    sim->m_model = &model;
    exec::CompileOptions opts;
    opts.batch = batch;
    opts.training = false;
    opts.fuse = false;
    Int8Simulator* self = sim.get();
    opts.observe = [self](const std::string& node, float* v, int64_t count) {
        auto it = self->m_quant.values.find(node);
        if (it != self->m_quant.values.end()) fakeQuantize(v, count, it->second);
    };
    KILN_ASSIGN(sim->m_plan, exec::Plan::compile(model, sim->m_params, opts, pool));
    return sim;
}

Status Int8Simulator::forward() {
    for (size_t k = 0; k < m_model->inputs.size(); ++k) {
        const int node = m_model->inputs[k];
        auto it = m_quant.values.find(m_model->graph.nodes[static_cast<size_t>(node)].name);
        if (it == m_quant.values.end()) continue;
        fakeQuantize(m_plan->input(k), m_model->nodes[static_cast<size_t>(node)].output.withBatch(m_plan->batch()).numel(),
                     it->second);
    }
    return m_plan->forward();
}

}  // namespace kiln::engine::io
