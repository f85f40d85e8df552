// SPDX-License-Identifier: Apache-2.0
// The Plugin row's pieces that others need: which plugin operation a node runs, its attributes
// resolved against the plugin's schema, and a call context for the plugin's shape functions.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "engine/ops/op_table.h"
#include "engine/ops/plugin_registry.h"

namespace kiln::engine::ops {

// The node's "plugin_op" attribute ("" when absent or not a string).
std::string pluginOpName(const Node& node);
// The loaded operation a Plugin node runs, or null when no loaded plugin provides it.
const PluginOp* pluginOpOf(const Node& node);
// resolveAttrs for a Plugin node: "plugin_op" plus the operation's schema with defaults. When
// the operation is not loaded, the attributes come back as written (nothing is lost on save).
Result<AttrMap> resolvePluginAttrs(const Node& node);

// Attribute values in the order of `specs` (every one present in `attrs`, as resolveAttrs leaves
// them); the strings and lists point into `attrs`.
std::vector<KilnAttrValue> pluginAttrValues(const std::vector<AttrSpec>& specs, const AttrMap& attrs);
KilnShape toKilnShape(const Shape& shape);
// KilnParallelForFn over a kiln ThreadPool passed as `pool`.
void pluginParallelFor(void* pool, int64_t n, KilnRangeFn fn, void* user);

// A dense row-major tensor view for a plugin kernel.
KilnTensor pluginTensor(float* data, const Shape& shape);
// The plugin's failure message in a kernel's error buffer, or a stand-in when it left none.
std::string pluginMessage(const char* buffer, size_t size);

// The plugin's C view of one node: attribute values in schema order and input shapes. It points
// into `attrs` and must not outlive it.
class PluginCall {
public:
    PluginCall(const PluginOp& op, const Node& node, const AttrMap& attrs, std::span<const Shape> inputs);
    PluginCall(const PluginCall&) = delete;
    PluginCall& operator=(const PluginCall&) = delete;

    const KilnOpContext& context() const { return m_ctx; }
    // The output shape (batch from input 0), after checking arity and every parameter's shape.
    Result<Shape> shape() const;
    Result<Shape> paramShape(const Shape& output, int32_t index) const;

private:
    Error fail(const std::string& why) const;

    const PluginOp& m_op;
    std::string m_node;
    std::vector<KilnAttrValue> m_values;
    std::vector<KilnShape> m_inputs;
    KilnOpContext m_ctx{};
};

}  // namespace kiln::engine::ops
