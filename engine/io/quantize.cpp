// SPDX-License-Identifier: Apache-2.0
// Int8 post-training quantisation: value selection, ranges, scales and the CPU simulation of the
// quantised model. Rounding is half to even (std::nearbyint in the default rounding mode), as
// ONNX QuantizeLinear rounds.
#include "engine/io/quantize.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

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

bool hasSeparateActivation(const ops::ModelInfo& model, int i) {
    const auto& ni = model.nodes[static_cast<size_t>(i)];
    if (!hasInt8Path(ni.def->kind)) return false;
    const std::string act = ni.attrs.getString("activation");
    return act != "linear" && act != "relu" && act != "relu6";
}

int foldedBatchNorm(const ops::ModelInfo& model, int i) {
    const OpKind kind = model.nodes[static_cast<size_t>(i)].def->kind;
    if (!hasInt8Path(kind) || model.nodes[static_cast<size_t>(i)].attrs.getString("activation") != "linear") return -1;
    if (std::find(model.outputs.begin(), model.outputs.end(), i) != model.outputs.end()) return -1;
    int consumer = -1;
    for (int j : model.order)
        for (int in : model.nodes[static_cast<size_t>(j)].inputs)
            if (in == i) {
                if (consumer >= 0) return -1;  // a second consumer (or the same one twice)
                consumer = j;
            }
    if (consumer < 0) return -1;
    const auto& bn = model.nodes[static_cast<size_t>(consumer)];
    if (bn.def->kind != OpKind::BatchNormalization || bn.output.rank() < 2) return -1;
    return consumer;
}

std::set<std::string> quantizedValues(const ops::ModelInfo& model, QuantScheme scheme) {
    std::set<std::string> out;
    for (int i : model.order) {
        const auto& ni = model.nodes[static_cast<size_t>(i)];
        const std::string& name = model.graph.nodes[static_cast<size_t>(i)].name;
        if (scheme == QuantScheme::FullInteger) {
            const OpKind k = ni.def->kind;
            if (ops::isLoss(k) || k == OpKind::Dropout || k == OpKind::Flatten || k == OpKind::Reshape) continue;
            out.insert(name);
            if (hasSeparateActivation(model, i)) out.insert(name + kPreActivation);
            continue;
        }
        if (!hasInt8Path(ni.def->kind)) continue;
        out.insert(name);
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

int weightLimit(QuantScheme scheme) { return scheme == QuantScheme::Qdq ? kReducedWeightLimit : kInt8WeightLimit; }

std::vector<float> weightScales(const float* w, int64_t rows, int64_t channels, bool perChannel, int limit) {
    std::vector<float> maxAbs(static_cast<size_t>(perChannel ? channels : 1), 0.0f);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < channels; ++c) {
            float& m = maxAbs[static_cast<size_t>(perChannel ? c : 0)];
            m = std::max(m, std::fabs(w[r * channels + c]));
        }
    for (float& m : maxAbs) m = symmetricScale(m, limit);
    return maxAbs;
}

float symmetricScale(float maxAbs, int limit) {
    return maxAbs > 0.0f && std::isfinite(maxAbs) ? maxAbs / static_cast<float>(limit) : 1.0f;
}

int8_t quantizeSymmetric(float w, float scale, int limit) {
    const auto l = static_cast<float>(limit);
    return static_cast<int8_t>(std::clamp(std::nearbyint(w / scale), -l, l));
}

std::vector<int8_t> quantizeWeights(const float* w, int64_t rows, int64_t channels, const std::vector<float>& scales,
                                    int limit) {
    std::vector<int8_t> q(static_cast<size_t>(rows * channels));
    const bool perChannel = scales.size() > 1;
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < channels; ++c) {
            const float s = scales[static_cast<size_t>(perChannel ? c : 0)];
            q[static_cast<size_t>(r * channels + c)] = quantizeSymmetric(w[r * channels + c], s, limit);
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
        self->observe(node, v, count, batch, "");
    };
    KILN_ASSIGN(rc->m_plan, exec::Plan::compile(model, params, opts, pool));

    // Values before a separate activation: the same model with those activations linear. The
    // parameters are laid out alike (an activation has none), so the same store serves.
    Graph linear = model.graph;
    bool needed = false;
    for (size_t i = 0; i < linear.nodes.size(); ++i)
        if (rc->m_values.count(linear.nodes[i].name + kPreActivation)) {
            linear.nodes[i].attrs.set("activation", std::string("linear"));
            needed = true;
        }
    if (needed) {
        KILN_ASSIGN(ops::ModelInfo lm, ops::analyzeModel(linear));
        rc->m_linearModel = std::make_unique<ops::ModelInfo>(std::move(lm));
        opts.observe = [self, batch](const std::string& node, float* v, int64_t count) {
            self->observe(node, v, count, batch, kPreActivation);
        };
        KILN_ASSIGN(rc->m_linearPlan, exec::Plan::compile(*rc->m_linearModel, params, opts, pool));
    }
    return rc;
}

void RangeCollector::observe(const std::string& node, const float* v, int64_t count, int64_t batch, const char* suffix) {
    const std::string name = *suffix ? node + suffix : node;
    if (!m_values.count(name)) return;
    // Only the first m_count samples of the batch are real.
    const int64_t n = count / batch * m_count;
    if (n <= 0) return;
    record(name, v, n);
}

void RangeCollector::record(const std::string& name, const float* v, int64_t n) {
    auto [lo, hi] = std::minmax_element(v, v + n);
    auto it = m_ranges.find(name);
    if (it == m_ranges.end()) m_ranges[name] = {*lo, *hi};
    else it->second = {std::min(it->second.min, *lo), std::max(it->second.max, *hi)};
    if (m_percentile > 0.0) m_histograms[name].add(v, n);
}

void RangeCollector::AbsHistogram::add(const float* v, int64_t n) {
    if (counts.empty()) counts.assign(kBins, 0);
    float maxAbs = 0.0f;
    for (int64_t e = 0; e < n; ++e)
        if (std::isfinite(v[e])) maxAbs = std::max(maxAbs, std::fabs(v[e]));
    // The first span just holds the first batch's largest |x|.
    if (top <= 0.0) top = std::max(static_cast<double>(maxAbs) * (1.0 + 1e-6), 1e-30);
    while (maxAbs >= top) {
        // Twice the span: bin k of the new histogram holds old bins 2k and 2k + 1.
        for (size_t k = 0; k < size_t{kBins} / 2; ++k) counts[k] = counts[2 * k] + counts[2 * k + 1];
        std::fill(counts.begin() + kBins / 2, counts.end(), 0);
        top *= 2.0;
    }
    const double perBin = kBins / top;
    for (int64_t e = 0; e < n; ++e) {
        if (!std::isfinite(v[e])) continue;
        const auto bin = std::min<int64_t>(static_cast<int64_t>(std::fabs(v[e]) * perBin), kBins - 1);
        ++counts[static_cast<size_t>(bin)];
        ++total;
    }
}

double RangeCollector::AbsHistogram::percentile(double p) const {
    if (total == 0) return 0.0;
    const double want = p / 100.0 * static_cast<double>(total);
    double seen = 0.0;
    const double width = top / kBins;
    for (int k = 0; k < kBins; ++k) {
        const double c = static_cast<double>(counts[static_cast<size_t>(k)]);
        if (seen + c >= want && c > 0) return width * (k + (want - seen) / c);
        seen += c;
    }
    return top;
}

std::map<std::string, ValueRange> RangeCollector::ranges() const {
    if (m_percentile <= 0.0) return m_ranges;
    std::map<std::string, ValueRange> out = m_ranges;
    for (auto& [name, r] : out) {
        auto h = m_histograms.find(name);
        if (h == m_histograms.end()) continue;
        const auto t = static_cast<float>(h->second.percentile(m_percentile));
        // Clipped to ±t but never widened: a ReLU output keeps its minimum 0.
        r = {std::max(r.min, -t), std::min(r.max, t)};
    }
    return out;
}

Status RangeCollector::add(const std::vector<const float*>& inputs, int64_t count) {
    const int64_t batch = m_plan->batch();
    if (inputs.size() != m_model->inputs.size() || count <= 0 || count > batch)
        return Error(ErrorCode::Internal, "calibration batch does not match the model inputs");
    for (size_t k = 0; k < inputs.size(); ++k) {
        const int node = m_model->inputs[k];
        const int64_t per = m_model->nodes[static_cast<size_t>(node)].output.numelFrom(1);
        // Input nodes have no step: their range is taken here.
        if (const std::string& name = m_model->graph.nodes[static_cast<size_t>(node)].name; m_values.count(name))
            record(name, inputs[k], per * count);
        for (exec::Plan* plan : {m_plan.get(), m_linearPlan.get()}) {
            if (!plan) continue;
            float* dst = plan->input(k);
            std::copy(inputs[k], inputs[k] + per * count, dst);
            // Pad a short batch with its first sample, whose values are already counted.
            for (int64_t s = count; s < batch; ++s) std::copy(inputs[k], inputs[k] + per, dst + s * per);
        }
    }
    m_count = count;
    KILN_TRY(m_plan->forward());
    if (m_linearPlan) KILN_TRY(m_linearPlan->forward());
    m_samples += count;
    return {};
}

ValueRange representable(QuantParams p) {
    return {static_cast<float>(-128 - p.zeroPoint) * p.scale, static_cast<float>(127 - p.zeroPoint) * p.scale};
}

namespace {

// The fixed output parameters of a node computing Softmax, Logistic or Tanh last, if it does.
std::optional<QuantParams> fixedOutput(const ops::ModelInfo& model, int i) {
    const auto& ni = model.nodes[static_cast<size_t>(i)];
    std::string act;
    switch (ni.def->kind) {
    case OpKind::Softmax: act = "softmax"; break;
    case OpKind::Sigmoid: act = "sigmoid"; break;
    case OpKind::Tanh: act = "tanh"; break;
    default:
        if (hasInt8Path(ni.def->kind)) act = ni.attrs.getString("activation");
    }
    if (act == "softmax" || act == "sigmoid") return kInt8UnitParams;
    if (act == "tanh") return kInt8TanhParams;
    return std::nullopt;
}

// Ops whose TFLite int8 kernel moves or selects input values without rescaling them: the output
// must have the input's parameters.
bool keepsInputParams(OpKind k) {
    switch (k) {
    case OpKind::Dropout:
    case OpKind::Flatten:
    case OpKind::Reshape:
    case OpKind::MaxPooling2D:
    case OpKind::AveragePooling2D:
    case OpKind::GlobalMaxPooling2D:
    case OpKind::ZeroPadding2D:
    case OpKind::UpSampling2D:
    case OpKind::Clip:
        return true;
    default:
        return false;
    }
}

}  // namespace

Result<Int8Quantization> makeQuantization(const ops::ModelInfo& model, const std::map<std::string, ValueRange>& ranges,
                                          bool perChannel, QuantScheme scheme) {
    Int8Quantization q;
    q.perChannel = perChannel;
    q.scheme = scheme;
    auto fromRange = [&](const std::string& name) -> Result<QuantParams> {
        auto it = ranges.find(name);
        if (it == ranges.end())
            return Error(ErrorCode::Internal, "no calibration range was collected for " + name).withNode(name);
        return activationParams(it->second);
    };
    if (scheme == QuantScheme::Qdq) {
        for (const auto& name : quantizedValues(model)) {
            KILN_ASSIGN(q.values[name], fromRange(name));
        }
        return q;
    }
    std::set<int> folded;  // Dense/Conv nodes whose value TFLite never materialises
    for (int i : model.order)
        if (foldedBatchNorm(model, i) >= 0) folded.insert(i);
    for (int i : model.order) {
        const auto& ni = model.nodes[static_cast<size_t>(i)];
        const std::string& name = model.graph.nodes[static_cast<size_t>(i)].name;
        if (ops::isLoss(ni.def->kind)) continue;
        if (hasSeparateActivation(model, i)) {
            KILN_ASSIGN(q.values[name + kPreActivation], fromRange(name + kPreActivation));
        }
        if (folded.count(i)) continue;
        if (auto fixed = fixedOutput(model, i)) {
            q.values[name] = *fixed;
        } else if (keepsInputParams(ni.def->kind)) {
            const std::string& producer = model.graph.nodes[static_cast<size_t>(ni.inputs[0])].name;
            auto it = q.values.find(producer);
            if (it == q.values.end())
                return Error(ErrorCode::Internal, "no quantisation parameters for " + producer).withNode(producer);
            q.values[name] = it->second;
        } else {
            KILN_ASSIGN(q.values[name], fromRange(name));
        }
    }
    return q;
}

exec::ParamStore fakeQuantizedWeights(const ops::ModelInfo& model, const exec::ParamStore& params, bool perChannel,
                                      int limit) {
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
        const auto scales = weightScales(data, rows, channels, perChannel, limit);
        const auto q = quantizeWeights(data, rows, channels, scales, limit);
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
    sim->m_params = fakeQuantizedWeights(model, params, quant.perChannel, weightLimit(quant.scheme));
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
