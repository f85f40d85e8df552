// SPDX-License-Identifier: Apache-2.0
// Dynamic loss scaling for fp16 training: the loss is multiplied by a scale before backward so
// small gradients survive fp16; a step whose gradients overflow is skipped and the scale halved,
// and after `growthInterval` clean steps the scale doubles. Device-independent logic.
#pragma once

#include <cstdint>
#include <span>

#include "engine/core/error.h"

namespace kiln::engine::optim {

struct LossScalerConfig {
    float initialScale = 65536.0f;  // 2^16, as PyTorch's GradScaler and Keras
    float growthFactor = 2.0f;
    float backoffFactor = 0.5f;
    int64_t growthInterval = 2000;  // clean steps before the scale grows
    float minScale = 1.0f;
    float maxScale = 16777216.0f;  // 2^24
    bool dynamic = true;           // false: a fixed scale, overflowing steps still skipped

    Status validate() const;  // ConfigError {field, reason} with "mixed_precision.*" fields
};

class LossScaler {
public:
    explicit LossScaler(const LossScalerConfig& config = {});

    float scale() const { return m_scale; }
    // 1/scale, to unscale gradients before clipping and the optimizer.
    float inverseScale() const { return 1.0f / m_scale; }

    // Records whether the step's gradients were all finite and adapts the scale. Returns true
    // when the optimizer should apply the step, false when it must be skipped.
    bool update(bool gradientsFinite);

    // Host helper: true when every value is finite (CUDA uses a device reduction instead).
    static bool allFinite(std::span<const float> values);
    // Unscales in place and reports whether every value was finite.
    bool unscale(std::span<float> grads) const;

    int64_t skippedSteps() const { return m_skipped; }
    int64_t cleanStreak() const { return m_streak; }
    // For checkpoints.
    void restore(float scale, int64_t streak, int64_t skipped);

private:
    LossScalerConfig m_config;
    float m_scale;
    int64_t m_streak = 0;
    int64_t m_skipped = 0;
};

}  // namespace kiln::engine::optim
