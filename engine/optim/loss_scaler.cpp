// SPDX-License-Identifier: Apache-2.0
// Dynamic loss scaling (skip, back off on overflow; grow after a clean streak).
#include "engine/optim/loss_scaler.h"

#include <algorithm>
#include <cmath>

namespace kiln::engine::optim {
namespace {
Error bad(const char* field, const char* reason) {
    return Error(ErrorCode::ConfigError, std::string(field) + " " + reason)
        .with("field", field)
        .with("reason", reason);
}
}  // namespace

Status LossScalerConfig::validate() const {
    if (!(initialScale >= 1.0f) || !std::isfinite(initialScale))
        return bad("mixed_precision.initial_scale", "must be at least 1");
    if (!(growthFactor > 1.0f)) return bad("mixed_precision.growth_factor", "must be greater than 1");
    if (!(backoffFactor > 0.0f && backoffFactor < 1.0f))
        return bad("mixed_precision.backoff_factor", "must be between 0 and 1");
    if (growthInterval < 1) return bad("mixed_precision.growth_interval", "must be at least 1");
    if (!(minScale > 0.0f) || !(maxScale >= minScale))
        return bad("mixed_precision.max_scale", "must not be below min_scale");
    return {};
}

LossScaler::LossScaler(const LossScalerConfig& config)
    : m_config(config), m_scale(std::clamp(config.initialScale, config.minScale, config.maxScale)) {}

bool LossScaler::update(bool finite) {
    if (!finite) {
        ++m_skipped;
        m_streak = 0;
        if (m_config.dynamic) m_scale = std::max(m_config.minScale, m_scale * m_config.backoffFactor);
        return false;
    }
    if (m_config.dynamic && ++m_streak >= m_config.growthInterval) {
        m_scale = std::min(m_config.maxScale, m_scale * m_config.growthFactor);
        m_streak = 0;
    }
    return true;
}

bool LossScaler::allFinite(std::span<const float> values) {
    // Summing x*0 propagates NaN for inf and NaN alike, without a branch per element.
    float acc = 0.0f;
    for (float v : values) acc += v * 0.0f;
    return acc == 0.0f;
}

bool LossScaler::unscale(std::span<float> grads) const {
    const float inv = inverseScale();
    for (float& g : grads) g *= inv;
    return allFinite(grads);
}

void LossScaler::restore(float scale, int64_t streak, int64_t skipped) {
    m_scale = std::clamp(scale, m_config.minScale, m_config.maxScale);
    m_streak = streak;
    m_skipped = skipped;
}

}  // namespace kiln::engine::optim
