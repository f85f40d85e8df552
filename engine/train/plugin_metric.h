// SPDX-License-Identifier: Apache-2.0
// Plugin metrics: a Metric whose accumulators are a plugin's state doubles and whose reset,
// update and result call the plugin (engine/plugin/kiln/plugin.h, KilnMetricDesc).
#pragma once

#include <memory>
#include <string>

#include "engine/core/shape.h"
#include "engine/graph/attr.h"
#include "engine/train/metrics.h"

namespace kiln::engine::train {

// The metric of a "plugin:<name>" type, logged as `name`, with attributes `attrs` (checked
// against its schema, defaults filled in). `predictions` and `targets` are per-sample shapes
// (without the batch). Errors: ConfigError naming `field` when the plugin is not loaded or an
// attribute is wrong; ShapeMismatch when the plugin's shape check refuses.
Result<std::unique_ptr<Metric>> makePluginMetric(const std::string& type, const std::string& name,
                                                 const AttrMap& attrs, const Shape& predictions,
                                                 const Shape& targets,
                                                 const std::string& field = "training.metrics");

}  // namespace kiln::engine::train
