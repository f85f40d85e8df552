// SPDX-License-Identifier: Apache-2.0
// Inverted dropout (float32). The keep mask comes from the counter-based Philox RNG, so the same
// (seed, stream) gives the same mask on any device, thread count or chunking.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/core/thread_pool.h"

namespace kiln::engine::kernels {

// Element i is kept when rng::uniform(seed, stream, i) >= rate; kept elements are scaled by
// 1/(1 - rate) so the expected value is unchanged (inverted dropout, as Keras).
//
// Training with 0 < rate < 1: y[i] = keep ? x[i] / (1 - rate) : 0, mask[i] = keep (0 or 1).
// Training with rate >= 1 (Keras rejects it; kept safe here): everything dropped, y = 0, mask = 0.
// Inference (training == false) or rate <= 0: y = x (identity copy) and mask = 1.
// mask is a caller buffer of n bytes, nullable when no backward will follow. y may equal x.
void dropoutForward(const float* x, float* y, uint8_t* mask, int64_t n, float rate, uint64_t seed,
                    uint64_t stream, bool training, ThreadPool& pool);

// dx += dy · mask / (1 - rate) (ACCUMULATES), with the same rate and training flag as the forward.
// In the identity case (inference or rate <= 0) dx += dy and mask is not read (may be null).
void dropoutBackward(const float* dy, const uint8_t* mask, float* dx, int64_t n, float rate,
                     bool training, ThreadPool& pool);

// Dropout with a noise shape (Keras's noise_shape): x has the row-major dims `dims`; noise[k] is 1
// where one draw is shared along axis k and dims[k] otherwise. The noise tensor (sizes noise[k])
// gets one keep decision per position j, rng::uniform(seed, stream, j) >= rate, exactly plain
// dropout's mask for an input of that size, and every element takes the decision of its position
// in it: noise (n, 1, 1, 1) on images drops or keeps whole samples (stochastic depth), noise
// (n, 1, 1, c) whole channels. `noiseKeep` is caller scratch of prod(noise) bytes. Training with
// 0 < rate < 1 writes y and the per-element mask as dropoutForward does, so dropoutBackward applies
// unchanged; the other cases are dropoutForward's.
void dropoutBroadcastForward(const float* x, float* y, uint8_t* mask, uint8_t* noiseKeep,
                             std::span<const int64_t> dims, std::span<const int64_t> noise, float rate,
                             uint64_t seed, uint64_t stream, bool training, ThreadPool& pool);

// The noise tensor's sizes for an input of sizes `dims` (batch included) and a noise_shape
// attribute (1: shared along the axis; -1 or the axis's size: one per index). Empty when every
// element gets its own decision (no noise shape, or none of its entries is 1 on an axis longer
// than 1): plain dropout then draws the very same mask.
std::vector<int64_t> dropoutNoiseDims(std::span<const int64_t> noiseShape, std::span<const int64_t> dims);

// The scale applied to kept elements: 1/(1 - rate), 0 when rate >= 1 (nothing is kept), 1 when
// rate <= 0.
float dropoutScale(float rate);

}  // namespace kiln::engine::kernels
