// SPDX-License-Identifier: Apache-2.0
// Int8 post-training quantisation: which values of a model are quantised, their ranges collected
// on calibration batches, the quantisation parameters made from them, and a simulation of the
// quantised model on Kiln's CPU plan (weights rounded to int8, activations rounded to their grid)
// that computes what the exported model computes. Two layouts share this: ONNX QDQ (only the
// Dense/Conv ops in int8) and TensorFlow Lite's full-integer model (every value int8).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine/core/thread_pool.h"
#include "engine/exec/param_store.h"
#include "engine/exec/plan.h"
#include "engine/ops/model.h"

namespace kiln::engine::io {

// Smallest and largest value a tensor took over the calibration samples.
struct ValueRange {
    float min = 0.0f;
    float max = 0.0f;
};

// value ≈ (q − zeroPoint) · scale with q an int8.
struct QuantParams {
    float scale = 1.0f;
    int32_t zeroPoint = 0;
};

// Which values an int8 model holds in int8.
enum class QuantScheme {
    // ONNX QDQ: the inputs and outputs of Dense, Conv2D and DepthwiseConv2D; the rest in float.
    Qdq,
    // TensorFlow Lite full integer: every value between the quantised model inputs and the
    // dequantised outputs, with the operators' own constraints (fixed output parameters of
    // Softmax, Logistic and Tanh; pooling, padding, resizing, reshaping and clipping keep their
    // input's parameters).
    FullInteger,
};

// The largest magnitude of an int8 weight in a scheme. QDQ keeps weights in −63..63 (7 bits):
// onnxruntime's x86 kernels without VNNI multiply uint8 activations by int8 weights with
// VPMADDUBSW, which adds two products in 16 bits with saturation, and 255 · 127 · 2 does not fit
// (measured on an AVX2-only AMD EPYC: outputs up to 29 grid steps off with −127..127, identical
// with −63..63; onnxruntime's own quantiser calls this reduce_range). TensorFlow Lite's int8
// kernels accumulate in 32 bits and keep −127..127.
inline constexpr int kInt8WeightLimit = 127;
inline constexpr int kReducedWeightLimit = 63;
int weightLimit(QuantScheme scheme);

// Ops with an int8 path: their weights are quantised per output channel and their activation
// input and output get quantise/dequantise pairs. Every other op computes in float (QDQ).
bool hasInt8Path(ops::OpKind kind);

// Suffix of the value a Dense/Conv node computes before an activation that is its own TFLite
// operator (sigmoid, tanh, softmax, gelu): "<node>/pre_activation".
inline constexpr const char* kPreActivation = "/pre_activation";
// Whether node i's activation attribute is applied by an operator of its own in the full-integer
// layout (anything but linear, relu and relu6, which TFLite fuses).
bool hasSeparateActivation(const ops::ModelInfo& model, int i);

// Names of the values whose ranges calibrate the scheme. Qdq: every Dense, Conv2D and
// DepthwiseConv2D, and the node producing each one's input (through Dropout, Flatten and Reshape,
// which pass their input's values on). FullInteger: every node but losses and those pass-through
// nodes, plus "<node>/pre_activation" for nodes with a separate activation.
std::set<std::string> quantizedValues(const ops::ModelInfo& model, QuantScheme scheme = QuantScheme::Qdq);

// The batch normalisation that the TensorFlow Lite exporter folds into node i (a Dense or
// convolution whose only consumer it is, when i is not a model output and has a linear
// activation), or -1. Node i's own value then never exists in the exported model.
int foldedBatchNorm(const ops::ModelInfo& model, int i);

// Asymmetric int8 parameters for an activation range; the range is widened to hold 0 so that 0 is
// exact (padding, ReLU), and an empty range gets scale 1.
QuantParams activationParams(ValueRange range);

// TFLite's int8 kernels of Softmax and Logistic write [0, 1) with scale 1/256 and zero point −128,
// Tanh's writes [−1, 1) with scale 1/128 and zero point 0; they refuse other output parameters.
inline constexpr QuantParams kInt8UnitParams{1.0f / 256.0f, -128};
inline constexpr QuantParams kInt8TanhParams{1.0f / 128.0f, 0};

// The symmetric int8 scale for weights whose largest magnitude is `maxAbs` (maxAbs / limit; 1
// for an all-zero or non-finite channel), and a weight rounded on it (half to even,
// −limit..limit); `limit` is kInt8WeightLimit or kReducedWeightLimit.
float symmetricScale(float maxAbs, int limit = kInt8WeightLimit);
int8_t quantizeSymmetric(float w, float scale, int limit = kInt8WeightLimit);

// Symmetric int8 scales (zero point 0, values −limit..limit) for a weight tensor viewed as
// [rows, channels] with the output channel fastest, as Kiln stores Dense [in, out], Conv2D
// [kh, kw, in, out] and DepthwiseConv2D [kh, kw, C, m] kernels. Per channel: one scale per output
// channel (maxabs / limit); otherwise one for the tensor. An all-zero channel gets scale 1.
std::vector<float> weightScales(const float* weights, int64_t rows, int64_t channels, bool perChannel,
                                int limit = kInt8WeightLimit);

// Rounds w / scale to int8 (half to even, clamped to −limit..limit).
std::vector<int8_t> quantizeWeights(const float* weights, int64_t rows, int64_t channels,
                                    const std::vector<float>& scales, int limit = kInt8WeightLimit);

// In place: value → dequantize(quantize(value)), as QuantizeLinear then DequantizeLinear do.
void fakeQuantize(float* values, int64_t count, QuantParams p);

// Collects the ranges of the named values over batches of inputs run through a CPU plan. A name
// "<node>/pre_activation" is collected on a second plan of the model in which those nodes'
// activations are linear (same parameters), so that the value before the activation is seen.
class RangeCollector {
public:
    // `values`: node names whose ranges are wanted (see quantizedValues).
    static Result<std::unique_ptr<RangeCollector>> create(const ops::ModelInfo& model, exec::ParamStore& params,
                                                          std::set<std::string> values, int64_t batch,
                                                          ThreadPool& pool);
    // One batch: one [batch, ...] buffer per model Input (first `count` samples are used, count <= batch).
    Status add(const std::vector<const float*>& inputs, int64_t count);
    int64_t samples() const { return m_samples; }
    // Percentile calibration: each range is clipped to ±(the `percentile`th percentile of |x|
    // over every value the tensor took), so that a few outliers do not stretch the int8 grid
    // for all the other values. 0 (the default) keeps the smallest and largest value. Set it
    // before the first add(); 0 < percentile <= 100.
    void setPercentile(double percentile) { m_percentile = percentile; }
    // The calibrated ranges (min/max, or clipped to the percentile).
    std::map<std::string, ValueRange> ranges() const;

private:
    // |x| counts in kBins equal bins over [0, top); top doubles (adjacent bins merge) when a
    // larger value arrives, so one pass over the samples suffices.
    struct AbsHistogram {
        static constexpr int kBins = 4096;
        std::vector<int64_t> counts;
        double top = 0.0;
        int64_t total = 0;
        void add(const float* v, int64_t n);
        // The value below which `percentile` % of the counted |x| lie (linear within a bin).
        double percentile(double percentile) const;
    };
    RangeCollector() = default;
    void observe(const std::string& node, const float* v, int64_t count, int64_t batch, const char* suffix);
    void record(const std::string& name, const float* v, int64_t n);
    const ops::ModelInfo* m_model = nullptr;
    std::unique_ptr<exec::Plan> m_plan;
    std::unique_ptr<ops::ModelInfo> m_linearModel;  // the pre-activation variant, when needed
    std::unique_ptr<exec::Plan> m_linearPlan;
    std::set<std::string> m_values;
    std::map<std::string, ValueRange> m_ranges;
    std::map<std::string, AbsHistogram> m_histograms;  // percentile calibration only
    double m_percentile = 0.0;
    int64_t m_samples = 0;
    int64_t m_count = 0;  // samples of the batch being run
};

// The quantisation of one model: parameters per quantised value and how weights are quantised.
struct Int8Quantization {
    std::map<std::string, QuantParams> values;  // node name → parameters of its output
    bool perChannel = true;
    QuantScheme scheme = QuantScheme::Qdq;
};

// Parameters for every value the scheme quantises (FullInteger: also the pass-through and
// fixed-parameter values, which need no range); a value without a collected range is an Internal
// error naming the node.
Result<Int8Quantization> makeQuantization(const ops::ModelInfo& model, const std::map<std::string, ValueRange>& ranges,
                                          bool perChannel, QuantScheme scheme = QuantScheme::Qdq);

// The real values an int8 with these parameters can hold: [(−128 − zp)·scale, (127 − zp)·scale].
ValueRange representable(QuantParams p);

// Runs the int8 model as the exported model computes it: a copy of the weights with every
// Dense/Conv kernel rounded to int8 and back, and the quantised values rounded to their grid
// after the step that computes them. Values inside one node's step are not rounded (the
// full-integer model's pre-activation of a Dense with a softmax, say), nor are the constants of
// operators TFLite builds from a node (batch-norm scales that are not folded, clip bounds).
class Int8Simulator {
public:
    static Result<std::unique_ptr<Int8Simulator>> create(const ops::ModelInfo& model, const exec::ParamStore& params,
                                                         const Int8Quantization& quant, int64_t batch, ThreadPool& pool);
    float* input(size_t k) { return m_plan->input(k); }
    int64_t batch() const { return m_plan->batch(); }
    // Quantises the quantised Input values in place, then runs the plan.
    Status forward();
    const float* output(size_t k) const { return m_plan->output(k); }

private:
    Int8Simulator() = default;
    exec::ParamStore m_params;
    Int8Quantization m_quant;
    const ops::ModelInfo* m_model = nullptr;
    std::unique_ptr<exec::Plan> m_plan;
};

// A copy of `params` whose Dense/Conv kernels are rounded to int8 (−limit..limit) and back
// (shares nothing with it).
exec::ParamStore fakeQuantizedWeights(const ops::ModelInfo& model, const exec::ParamStore& params, bool perChannel,
                                      int limit = kInt8WeightLimit);

}  // namespace kiln::engine::io
