// SPDX-License-Identifier: Apache-2.0
// Plugin losses: a training config's {"type": "plugin:acme.Huber"} resolves to pluginLossDef(),
// an OpDef outside the op table whose shape rule and CPU kernel call the plugin. The plugin gives
// per-sample values and gradients; the kernel reduces them as the built-in losses do (mean over
// the batch, the term's weight through KernelIo::gradScale).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "engine/ops/op_table.h"
#include "engine/ops/plugin_registry.h"

namespace kiln::engine::ops {

// The def every plugin loss resolves to; its node's op is the loss type ("plugin:acme.Huber").
const OpDef& pluginLossDef();
bool isPluginLossDef(const OpDef* def);

// The loaded plugin loss of a "plugin:<name>" type, or null.
const PluginLoss* findPluginLoss(std::string_view type);
// The loss's attributes as given (`given`), checked against its schema with defaults filled in;
// errors name `field` (e.g. "training.loss[0]") and the attribute.
Result<AttrMap> resolvePluginLossAttrs(const PluginLoss& loss, const AttrMap& given,
                                       const std::string& field);

// The C view of a plugin loss or metric: its attribute values in schema order and the
// prediction and target shapes. It owns a copy of the attributes it points into.
class PluginTermContext {
public:
    PluginTermContext(std::string label, const std::vector<AttrSpec>& specs, const AttrMap& attrs,
                      const Shape& predictions, const Shape& targets);
    PluginTermContext(const PluginTermContext&) = delete;
    PluginTermContext& operator=(const PluginTermContext&) = delete;

    const KilnOpContext& context() const { return m_ctx; }
    // Calls the plugin's shape check, or, without one, requires predictions with a batch
    // dimension and as many values per sample as the targets. ShapeMismatch naming `label`.
    Status checkShapes(KilnLossShapeFn check) const;

private:
    std::string m_label;
    AttrMap m_attrs;
    std::vector<KilnAttrValue> m_values;
    KilnShape m_shapes[2]{};
    Shape m_predictions, m_targets;
    KilnOpContext m_ctx{};
};

}  // namespace kiln::engine::ops
