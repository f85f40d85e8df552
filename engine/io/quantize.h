// SPDX-License-Identifier: Apache-2.0
// Int8 post-training quantisation: which values of a model are quantised, their ranges collected
// on calibration batches, the quantisation parameters made from them, and a simulation of the
// quantised model on Kiln's CPU plan (weights rounded to int8, activations rounded to their grid)
// that computes what the exported QDQ model computes.
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

// Ops with an int8 path: their weights are quantised per output channel and their activation
// input and output get quantise/dequantise pairs. Every other op computes in float.
bool hasInt8Path(ops::OpKind kind);

// Names of the nodes whose output values are quantised: every Dense, Conv2D and DepthwiseConv2D,
// and the node producing each one's input (through Dropout, Flatten and Reshape, which pass their
// input's values on).
std::set<std::string> quantizedValues(const ops::ModelInfo& model);

// Asymmetric int8 parameters for an activation range; the range is widened to hold 0 so that 0 is
// exact (padding, ReLU), and an empty range gets scale 1.
QuantParams activationParams(ValueRange range);

// Symmetric int8 scales (zero point 0, values −127..127) for a weight tensor viewed as
// [rows, channels] with the output channel fastest, as Kiln stores Dense [in, out], Conv2D
// [kh, kw, in, out] and DepthwiseConv2D [kh, kw, C, m] kernels. Per channel: one scale per output
// channel (maxabs / 127); otherwise one for the tensor. An all-zero channel gets scale 1.
std::vector<float> weightScales(const float* weights, int64_t rows, int64_t channels, bool perChannel);

// Rounds w / scale to int8 (half to even, clamped to −127..127).
std::vector<int8_t> quantizeWeights(const float* weights, int64_t rows, int64_t channels,
                                    const std::vector<float>& scales);

// In place: value → dequantize(quantize(value)), as QuantizeLinear then DequantizeLinear do.
void fakeQuantize(float* values, int64_t count, QuantParams p);

// Collects the ranges of the named values over batches of inputs run through a CPU plan.
class RangeCollector {
public:
    // `values`: node names whose ranges are wanted (see quantizedValues).
    static Result<std::unique_ptr<RangeCollector>> create(const ops::ModelInfo& model, exec::ParamStore& params,
                                                          std::set<std::string> values, int64_t batch,
                                                          ThreadPool& pool);
    // One batch: one [batch, ...] buffer per model Input (first `count` samples are used, count <= batch).
    Status add(const std::vector<const float*>& inputs, int64_t count);
    int64_t samples() const { return m_samples; }
    const std::map<std::string, ValueRange>& ranges() const { return m_ranges; }

private:
    RangeCollector() = default;
    const ops::ModelInfo* m_model = nullptr;
    std::unique_ptr<exec::Plan> m_plan;
    std::set<std::string> m_values;
    std::map<std::string, ValueRange> m_ranges;
    int64_t m_samples = 0;
    int64_t m_count = 0;  // samples of the batch being run
};

// The quantisation of one model: parameters per quantised value and how weights are quantised.
struct Int8Quantization {
    std::map<std::string, QuantParams> values;  // node name → parameters of its output
    bool perChannel = true;
};

// Parameters for every value of `quantizedValues(model)`; NotFound-free: a value without a
// collected range is an Internal error naming the node.
Result<Int8Quantization> makeQuantization(const ops::ModelInfo& model, const std::map<std::string, ValueRange>& ranges,
                                          bool perChannel);

// Runs the int8 model as the exported QDQ model computes it: a copy of the weights with every
// Dense/Conv kernel rounded to int8 and back, and the quantised values rounded to their grid
// after the step that computes them.
class Int8Simulator {
public:
    static Result<std::unique_ptr<Int8Simulator>> create(const ops::ModelInfo& model, const exec::ParamStore& params,
                                                         const Int8Quantization& quant, int64_t batch, ThreadPool& pool);
    float* input(size_t k) { return m_plan->input(k); }
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

// A copy of `params` whose Dense/Conv kernels are rounded to int8 and back (shares nothing with it).
exec::ParamStore fakeQuantizedWeights(const ops::ModelInfo& model, const exec::ParamStore& params, bool perChannel);

}  // namespace kiln::engine::io
