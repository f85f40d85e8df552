// SPDX-License-Identifier: Apache-2.0
// Kiln's own CUDA kernels (elementwise, activations, reductions, losses, dropout, batch norm,
// fused optimizer updates, precision casts), with the CPU kernels' semantics. Launchers are plain
// C++ functions taking a stream; they enqueue and return without synchronising.
#pragma once

#include <cstdint>

#include "engine/backends/cuda/caching_allocator.h"

namespace kiln::engine::cuda::k {

enum class Act { Linear, ReLU, ReLU6, LeakyReLU, Sigmoid, Tanh, GeluExact, GeluTanh, SiLU, HardSigmoid, HardSwish };

void fill(float* p, float value, int64_t n, StreamHandle s);
void accumulate(const float* x, float* y, int64_t n, StreamHandle s);           // y += x
void add(const float* a, const float* b, float* y, int64_t n, StreamHandle s);  // y = a + b
void multiply(const float* a, const float* b, float* y, int64_t n, StreamHandle s);
// da += dy*b, db += dy*a (either may be null).
void multiplyBackward(const float* a, const float* b, const float* dy, float* da, float* db, int64_t n,
                      StreamHandle s);
void scale(float* p, float factor, int64_t n, StreamHandle s);
// y = a - b; da += dy, db -= dy (either may be null).
void subtract(const float* a, const float* b, float* y, int64_t n, StreamHandle s);
void subtractBackward(const float* dy, float* da, float* db, int64_t n, StreamHandle s);
// Channel scaling over [n, positions, c]: y = x * v[sample, channel] (v [n, c]); backward
// dx += dy * v and dv[b, ch] += Σ_p dy * x (either may be null).
void multiplyChannels(const float* x, const float* v, float* y, int64_t n, int64_t positions, int64_t c,
                      StreamHandle s);
void multiplyChannelsBackward(const float* x, const float* v, const float* dy, float* dx, float* dv, int64_t n,
                              int64_t positions, int64_t c, StreamHandle s);

// y = act(x) (y may equal x); dx += dy * act'(x or y). x must be given for
// ReLU6/LeakyReLU/GELU/SiLU/HardSigmoid/HardSwish; y for Sigmoid/Tanh; ReLU takes either.
void activationForward(Act act, const float* x, float* y, int64_t n, float alpha, StreamHandle s);
void activationBackward(Act act, const float* x, const float* y, const float* dy, float* dx, int64_t n,
                        float alpha, StreamHandle s);
// y = min(max(x, lo), hi); dx += dy * [lo < x < hi].
void clip(const float* x, float* y, int64_t n, float lo, float hi, StreamHandle s);
void clipBackward(const float* x, const float* dy, float* dx, int64_t n, float lo, float hi, StreamHandle s);
// y[r, c] += bias[c] then act, in place over [rows, cols].
void biasActivation(float* y, const float* bias, int64_t rows, int64_t cols, Act act, float alpha,
                    StreamHandle s);
// db[c] += sum over rows of dy[r, c].
void columnSums(const float* dy, int64_t rows, int64_t cols, float* db, StreamHandle s);
// Row softmax over [rows, cols], fp32 (used by the losses; the Softmax op uses cuDNN).
void softmaxRows(const float* x, float* y, int64_t rows, int64_t cols, StreamHandle s);
// Attention weights in place over [rows, tv], row r the scores of query position r % tq: the
// softmax of each row's first tv entries (causal: its first r % tq + 1, the rest set to 0), fp32.
void attentionSoftmax(float* p, int64_t rows, int64_t tq, int64_t tv, bool causal, StreamHandle s);
// Its gradient, scaled: ds = scale·p·(dp − Σ_j p·dp) per row (overwrites ds; masked entries have
// p = 0 and get 0).
void attentionSoftmaxBackward(const float* p, const float* dp, float* ds, int64_t rows, int64_t tv, float scale,
                              StreamHandle s);

// Global average pooling over h*w of NHWC [n, hw, c] -> [n, c], and its gradient (accumulating).
void globalAvgPool(const float* x, float* y, int64_t n, int64_t hw, int64_t c, StreamHandle s);
void globalAvgPoolBackward(const float* dy, float* dx, int64_t n, int64_t hw, int64_t c, StreamHandle s);
// Global max pooling over h*w of NHWC [n, hw, c] -> [n, c] with the winning pixel per output
// (first maximum; NaN wins), and its gradient dx[b, argmax, c] += dy[b, c].
void globalMaxPool(const float* x, float* y, int32_t* argmax, int64_t n, int64_t hw, int64_t c, StreamHandle s);
void globalMaxPoolBackward(const float* dy, const int32_t* argmax, float* dx, int64_t n, int64_t hw, int64_t c,
                           StreamHandle s);
// Integer-factor upsampling of NHWC [n, h, w, c] to [n, h*sh, w*sw, c]: nearest, or bilinear with
// half-pixel centres (as engine/ops/kernels/image.h). Backward accumulates (bilinear by atomics).
void upsample(const float* x, float* y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t sh, int64_t sw,
              bool bilinear, StreamHandle s);
void upsampleBackward(const float* dy, float* dx, int64_t n, int64_t h, int64_t w, int64_t c, int64_t sh,
                      int64_t sw, bool bilinear, StreamHandle s);
// y = x * scale + offset; dx += dy * scale.
void affine(const float* x, float* y, int64_t n, float scale, float offset, StreamHandle s);
void scaledAccumulate(const float* dy, float* dx, int64_t n, float scale, StreamHandle s);
// Concatenation along the last axis: input k of width widths[k] into [rows, total].
void concatLast(const float* x, float* y, int64_t rows, int64_t width, int64_t total, int64_t offset,
                StreamHandle s);
void concatLastBackward(const float* dy, float* dx, int64_t rows, int64_t width, int64_t total,
                        int64_t offset, StreamHandle s);
// Zero padding of NHWC images (for the asymmetric 'same' padding cuDNN cannot express).
void padNhwc(const float* x, float* y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t top, int64_t left,
             int64_t ph, int64_t pw, StreamHandle s);
void unpadNhwcAccumulate(const float* dy, float* dx, int64_t n, int64_t h, int64_t w, int64_t c, int64_t top,
                         int64_t left, int64_t ph, int64_t pw, StreamHandle s);

// Keras HWIO weights [kh, kw, ci, co] <-> cuDNN's NHWC filter layout [co, kh, kw, ci].
void hwioToOhwi(const float* w, float* o, int64_t kh, int64_t kw, int64_t ci, int64_t co, StreamHandle s);
void ohwiToHwioAccumulate(const float* o, float* w, int64_t kh, int64_t kw, int64_t ci, int64_t co,
                          StreamHandle s);

// 2-D pooling on NHWC with Keras geometry (asymmetric 'same' padding; averages count only the
// in-image elements). Backward accumulates; max routes each gradient to the first maximum.
struct PoolGeom {
    int64_t n, h, w, c, ph, pw, sh, sw, padTop, padLeft, oh, ow;
};
void maxPoolForward(const PoolGeom& g, const float* x, float* y, StreamHandle s);
void maxPoolBackward(const PoolGeom& g, const float* x, const float* dy, float* dx, StreamHandle s);
void avgPoolForward(const PoolGeom& g, const float* x, float* y, StreamHandle s);
void avgPoolBackward(const PoolGeom& g, const float* dy, float* dx, StreamHandle s);

// Dropout with the CPU's mask: element i kept when rng::uniform(seed, stream, i) >= rate.
void dropoutForward(const float* x, float* y, uint8_t* mask, int64_t n, float rate, uint64_t seed,
                    uint64_t stream, StreamHandle s);
void dropoutBackward(const float* dy, const uint8_t* mask, float* dx, int64_t n, float rate, StreamHandle s);
// Dropout with a noise shape, as kernels::dropoutBroadcastForward: element i (row-major over
// dims) takes the decision of noise position j = sum_k index_k * stride[k] (stride 0 along the
// shared axes), kept when rng::uniform(seed, stream, j) >= rate; the per-element mask is written
// for dropoutBackward. Training with 0 < rate < 1 only.
struct DropoutNoise {
    int rank = 0;
    int64_t dims[8] = {};
    int64_t stride[8] = {};
};
void dropoutBroadcastForward(const float* x, float* y, uint8_t* mask, int64_t n, const DropoutNoise& noise,
                             float rate, uint64_t seed, uint64_t stream, StreamHandle s);

// Batch norm over [rows, c] (fp32 statistics, biased variance, Keras momentum convention).
// Training forward writes mean/invStd and updates the moving statistics; `partial` is a
// workspace of 2*c doubles for the sums. syncSums (optional) lets a caller all-reduce the sums
// (count, sum, sum of squares) between the two phases: see batchNormStats/batchNormApply.
void batchNormStats(const float* x, int64_t rows, int64_t c, double* sums,
                    StreamHandle s);  // [2c]: sum, sumsq
void batchNormFinish(const double* sums, double count, int64_t c, float eps, float momentum, float* mean,
                     float* invStd, float* movingMean, float* movingVar, StreamHandle s);
void batchNormApply(const float* x, const float* mean, const float* invStd, const float* gamma,
                    const float* beta, float* y, int64_t rows, int64_t c, StreamHandle s);
void batchNormInference(const float* x, const float* movingMean, const float* movingVar, const float* gamma,
                        const float* beta, float eps, float* y, int64_t rows, int64_t c, StreamHandle s);
// Backward: sums [2c] of dy and dy*xhat; then dgamma/dbeta += the local sums and dx += ...
void batchNormBackwardSums(const float* x, const float* dy, const float* mean, const float* invStd,
                           int64_t rows, int64_t c, double* sums, StreamHandle s);
void batchNormBackwardParams(const double* sums, int64_t c, float* dgamma, float* dbeta, StreamHandle s);
void batchNormBackwardData(const float* x, const float* dy, const float* mean, const float* invStd,
                           const float* gamma, const double* sums, double count, float* dx, int64_t rows,
                           int64_t c, StreamHandle s);
// Keras's Normalization layer over [rows, c]: y = (x - mean) / max(sqrt(variance), 1e-7);
// backward ACCUMULATES dx += dy / max(sqrt(variance), 1e-7).
void fixedNormForward(const float* x, const float* mean, const float* variance, float* y, int64_t rows, int64_t c,
                      StreamHandle s);
void fixedNormBackward(const float* dy, const float* variance, float* dx, int64_t rows, int64_t c, StreamHandle s);
// Layer norm over each row of [rows, c]; saveMean/saveRstd [rows].
void layerNormForward(const float* x, const float* gamma, const float* beta, float eps, float* y,
                      float* saveMean, float* saveRstd, int64_t rows, int64_t c, StreamHandle s);
void layerNormBackward(const float* x, const float* gamma, const float* saveMean, const float* saveRstd,
                       const float* dy, float* dx, float* dgamma, float* dbeta, int64_t rows, int64_t c,
                       StreamHandle s);

// Losses (mean over the batch, Keras semantics as the CPU kernels). The mean loss goes to
// *lossOut (device float); gradients ACCUMULATE gradScale * dLoss/dx; `acc` is one device double
// of scratch. badLabel (device int, may be null, cleared by the caller) receives 1 + an invalid
// sample's index.
void sparseCrossEntropy(const float* logits, const float* labels, int64_t batch, int64_t classes,
                        float* lossOut, float* grad, float gradScale, int* badLabel, double* acc,
                        StreamHandle s);
void categoricalCrossEntropy(const float* logits, const float* targets, int64_t batch, int64_t classes,
                             float* lossOut, float* grad, float gradScale, double* acc, StreamHandle s);
void binaryCrossEntropy(const float* logits, const float* targets, int64_t n, float* lossOut, float* grad,
                        float gradScale, double* acc, StreamHandle s);
void meanSquaredError(const float* p, const float* t, int64_t n, float* lossOut, float* grad, float gradScale,
                      double* acc, StreamHandle s);
void meanAbsoluteError(const float* p, const float* t, int64_t n, float* lossOut, float* grad,
                       float gradScale, double* acc, StreamHandle s);
// Focal losses: binary elementwise over n values; categorical over [batch, classes] with dense
// targets, or with sparse labels (targets null, labels non-null, invalid ones reported in badLabel).
struct FocalParams {
    float gamma = 2.0f;
    float alpha = 0.25f;
    float labelSmoothing = 0.0f;
    bool fromLogits = false;
    bool classBalancing = false;
};
void binaryFocalCrossEntropy(const float* p, const float* t, int64_t n, const FocalParams& f, float* lossOut,
                             float* grad, float gradScale, double* acc, StreamHandle s);
void categoricalFocalCrossEntropy(const float* p, const float* targets, const float* labels, int64_t batch,
                                  int64_t classes, const FocalParams& f, float* lossOut, float* grad,
                                  float gradScale, int* badLabel, double* acc, StreamHandle s);

// Embedding lookup (indices as floats) and its scatter-add gradient.
void embeddingForward(const float* ids, const float* table, float* y, int64_t count, int64_t dim,
                      int64_t vocab, StreamHandle s);
void embeddingBackward(const float* ids, const float* dy, float* dtable, int64_t count, int64_t dim,
                       int64_t vocab, StreamHandle s);

// Gather (engine/ops/kernels/gather.h's layout: data [batch, outer, axis, inner], output
// [batch, outer, count, inner]; indices as floats, negative ones counting from the end, [batch,
// count] when perSample, else `count` for every sample). gatherIndexCheck lowers *firstBad
// (initialised by the caller to INT_MAX) to the first position of an index that is not an integer
// in [-axis, axis). The backward gives each element of dx to one thread, which adds its rows' dy in
// increasing j: deterministic, no atomics.
struct GatherShape {
    int64_t batch = 0, outer = 1, axis = 1, inner = 1, count = 0;
    bool perSample = false;
};
void gatherIndexCheck(const float* indices, int64_t n, int64_t axis, int* firstBad, StreamHandle s);
void gatherForward(const float* x, const float* indices, float* y, const GatherShape& g, StreamHandle s);
void gatherBackward(const float* indices, const float* dy, float* dx, const GatherShape& g, StreamHandle s);

// Fused optimizer updates (Keras semantics as engine/optim): gradScale multiplies g first
// (loss-scale unscaling and clipping); wdLr = lr*weightDecay for decoupled decay (0 for none).
void sgdUpdate(float* w, const float* g, float* momentumBuf, int64_t n, float lr, float momentum,
               bool nesterov, float wdLr, float gradScale, StreamHandle s);
void adamUpdate(float* w, const float* g, float* m, float* v, int64_t n, float alpha, float beta1,
                float beta2, float eps, float wdLr, float gradScale, StreamHandle s);

// Mixed precision: fp32 <-> fp16/bf16 (raw 16-bit storage), and a non-finite check that sets
// *flag = 1 when any of x[0..n) is inf or NaN (flag is not cleared).
void castToHalf(const float* x, uint16_t* y, int64_t n, StreamHandle s);
void castToBf16(const float* x, uint16_t* y, int64_t n, StreamHandle s);
void castFromHalf(const uint16_t* x, float* y, int64_t n, StreamHandle s);
void castFromBf16(const uint16_t* x, float* y, int64_t n, StreamHandle s);
void checkFinite(const float* x, int64_t n, int* flag, StreamHandle s);

// out[i] = rng::uniform(seed, stream, i): the RNG check against the CPU.
void uniform(float* out, int64_t n, uint64_t seed, uint64_t stream, StreamHandle s);

}  // namespace kiln::engine::cuda::k
