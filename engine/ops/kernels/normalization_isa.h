// SPDX-License-Identifier: Apache-2.0
// The batch-normalisation kernels compiled per instruction set (normalization_isa.cpp);
// normalization.cpp dispatches to one.
#pragma once

#include "engine/ops/kernels/normalization.h"

namespace kiln::engine::kernels {

// Same contracts as the functions of the same names in normalization.h.
#define KILN_BATCH_NORM_DECLARE(isa)                                                                        \
    namespace isa {                                                                                         \
    void batchNormForwardTraining(int64_t rows, int64_t c, const float* x, const float* gamma,              \
                                  const float* beta, const BatchNormParams& params, float* y, float* saveMean, \
                                  float* saveInvStd, float* movingMean, float* movingVar, ThreadPool& pool, \
                                  const BatchNormFusion& fusion); \
    void batchNormForwardInference(int64_t rows, int64_t c, const float* x, const float* gamma,             \
                                   const float* beta, const float* movingMean, const float* movingVar,      \
                                   float epsilon, float* y, ThreadPool& pool, const BatchNormFusion& fusion); \
    void batchNormBackwardTraining(int64_t rows, int64_t c, const float* x, const float* gamma,             \
                                   const float* saveMean, const float* saveInvStd, const float* dy, float* dx, \
                                   float* dgamma, float* dbeta, ThreadPool& pool, const BatchNormFusion& fusion); \
    void batchNormBackwardInference(int64_t rows, int64_t c, const float* x, const float* gamma,            \
                                    const float* movingMean, const float* movingVar, float epsilon,         \
                                    const float* dy, float* dx, float* dgamma, float* dbeta, ThreadPool& pool, \
                                    const BatchNormFusion& fusion); \
    }
KILN_BATCH_NORM_DECLARE(avx2)
KILN_BATCH_NORM_DECLARE(avx512)
#undef KILN_BATCH_NORM_DECLARE

}  // namespace kiln::engine::kernels
