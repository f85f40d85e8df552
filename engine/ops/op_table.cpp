// SPDX-License-Identifier: Apache-2.0
// Assembles the op table from the family files, in enum order. The name list below is checked
// at compile time against the enum; the assembled rows are checked against it once at start-up.
#include "engine/ops/op_table.h"

#include "engine/ops/plugin_ops.h"

#include <cstdio>
#include <cstdlib>

namespace kiln::engine::ops {
namespace {

struct KindName {
    OpKind kind;
    std::string_view name;
};

constexpr std::array<KindName, kOpKindCount> kNames{{
    {OpKind::Input, "Input"},
    {OpKind::Dense, "Dense"},
    {OpKind::Conv2D, "Conv2D"},
    {OpKind::DepthwiseConv2D, "DepthwiseConv2D"},
    {OpKind::MaxPooling2D, "MaxPooling2D"},
    {OpKind::AveragePooling2D, "AveragePooling2D"},
    {OpKind::GlobalAveragePooling2D, "GlobalAveragePooling2D"},
    {OpKind::GlobalMaxPooling2D, "GlobalMaxPooling2D"},
    {OpKind::GlobalAveragePooling1D, "GlobalAveragePooling1D"},
    {OpKind::ZeroPadding2D, "ZeroPadding2D"},
    {OpKind::UpSampling2D, "UpSampling2D"},
    {OpKind::BatchNormalization, "BatchNormalization"},
    {OpKind::LayerNormalization, "LayerNormalization"},
    {OpKind::Normalization, "Normalization"},
    {OpKind::Dropout, "Dropout"},
    {OpKind::Flatten, "Flatten"},
    {OpKind::Reshape, "Reshape"},
    {OpKind::Rescaling, "Rescaling"},
    {OpKind::Concatenate, "Concatenate"},
    {OpKind::Add, "Add"},
    {OpKind::Subtract, "Subtract"},
    {OpKind::Multiply, "Multiply"},
    {OpKind::ReLU, "ReLU"},
    {OpKind::LeakyReLU, "LeakyReLU"},
    {OpKind::ReLU6, "ReLU6"},
    {OpKind::GELU, "GELU"},
    {OpKind::Sigmoid, "Sigmoid"},
    {OpKind::Tanh, "Tanh"},
    {OpKind::Softmax, "Softmax"},
    {OpKind::SiLU, "SiLU"},
    {OpKind::HardSigmoid, "HardSigmoid"},
    {OpKind::HardSwish, "HardSwish"},
    {OpKind::Clip, "Clip"},
    {OpKind::Embedding, "Embedding"},
    {OpKind::Gather, "Gather"},
    {OpKind::MultiHeadAttention, "MultiHeadAttention"},
    {OpKind::SparseCategoricalCrossentropy, "SparseCategoricalCrossentropy"},
    {OpKind::CategoricalCrossentropy, "CategoricalCrossentropy"},
    {OpKind::BinaryCrossentropy, "BinaryCrossentropy"},
    {OpKind::MeanSquaredError, "MeanSquaredError"},
    {OpKind::MeanAbsoluteError, "MeanAbsoluteError"},
    {OpKind::BinaryFocalCrossentropy, "BinaryFocalCrossentropy"},
    {OpKind::CategoricalFocalCrossentropy, "CategoricalFocalCrossentropy"},
    {OpKind::SparseCategoricalFocalCrossentropy, "SparseCategoricalFocalCrossentropy"},
    {OpKind::Placeholder, "Placeholder"},
    {OpKind::Plugin, "Plugin"},
}};

constexpr bool namesInEnumOrder() {
    for (int i = 0; i < kOpKindCount; ++i)
        if (static_cast<int>(kNames[static_cast<size_t>(i)].kind) != i) return false;
    return true;
}
static_assert(namesInEnumOrder(), "kNames must list every OpKind in enum order");
static_assert(static_cast<int>(OpKind::Plugin) + 1 == kOpKindCount, "kOpKindCount is stale");

std::array<OpDef, kOpKindCount> buildTable() {
    std::vector<OpDef> rows;
    for (auto family : {coreOps, convOps, imageOps, normOps, mergeOps, activationOps, attentionOps, lossOps, placeholderOps, pluginOps})
        for (auto& row : family()) rows.push_back(std::move(row));
    std::array<OpDef, kOpKindCount> table{};
    std::array<bool, kOpKindCount> filled{};
    for (auto& row : rows) {
        auto i = static_cast<size_t>(row.kind);
        if (i >= table.size() || filled[i] || kNames[i].name != row.name) {
            // A programming error in a family file: the table is the engine's foundation.
            std::fprintf(stderr, "kiln: op table row %s is misplaced or duplicated\n", std::string(row.name).c_str());
            std::abort();
        }
        filled[i] = true;
        table[i] = std::move(row);
    }
    for (size_t i = 0; i < table.size(); ++i)
        if (!filled[i]) {
            std::fprintf(stderr, "kiln: op %s has no table row\n", std::string(kNames[i].name).c_str());
            std::abort();
        }
    return table;
}

}  // namespace

const char* categoryName(Category c) {
    switch (c) {
    case Category::Input: return "Input";
    case Category::Core: return "Core";
    case Category::Convolution: return "Convolution";
    case Category::Pooling: return "Pooling";
    case Category::Normalization: return "Normalization";
    case Category::Regularization: return "Regularization";
    case Category::Merge: return "Merge";
    case Category::Activation: return "Activation";
    case Category::Loss: return "Loss";
    case Category::Plugin: return "Plugins";
    }
    return "?";
}

const std::array<OpDef, kOpKindCount>& opTable() {
    static const std::array<OpDef, kOpKindCount> table = buildTable();
    return table;
}

const OpDef& opDef(OpKind kind) { return opTable()[static_cast<size_t>(kind)]; }

const OpDef* findOp(std::string_view name) {
    for (const auto& row : opTable())
        if (row.name == name) return &row;
    return nullptr;
}

bool isLoss(OpKind kind) { return opDef(kind).category == Category::Loss; }

Result<AttrMap> resolveAttrs(const OpDef& def, const Node& node) {
    if (def.kind == OpKind::Plugin) return resolvePluginAttrs(node);
    return resolveAttrsWith(def.name, def.attrs, node);
}

Result<AttrMap> resolveAttrsWith(std::string_view opName, const std::vector<AttrSpec>& specs, const Node& node) {
    AttrMap out;
    const std::string name(opName);
    for (const auto& [key, value] : node.attrs.values()) {
        const AttrSpec* spec = nullptr;
        for (const auto& s : specs)
            if (s.name == key) spec = &s;
        if (!spec) {
            std::string known;
            for (const auto& s : specs) known += (known.empty() ? "" : ", ") + s.name;
            return Error(ErrorCode::UnknownAttribute, name + " \"" + node.name +
                                                          "\" has no attribute \"" + key + "\"" +
                                                          (known.empty() ? std::string(" (it takes none)")
                                                                         : " (it takes: " + known + ")"))
                .withNode(node.name)
                .with("attribute", key);
        }
        KILN_ASSIGN(AttrValue v, coerceAttr(*spec, value, node.name));
        out.set(key, std::move(v));
    }
    for (const auto& s : specs) {
        if (out.has(s.name)) continue;
        if (s.required)
            return Error(ErrorCode::BadAttribute, name + " \"" + node.name +
                                                      "\" needs the attribute \"" + s.name + "\" (" + s.doc + ")")
                .withNode(node.name)
                .with("attribute", s.name)
                .with("reason", "missing");
        out.set(s.name, s.defaultValue);
    }
    return out;
}

std::string opLabel(const ShapeContext& c) { return c.node.op + " \"" + c.node.name + "\""; }

Error shapeError(const ShapeContext& c, const std::string& why) {
    return Error(ErrorCode::ShapeMismatch, opLabel(c) + " " + why).withNode(c.node.name).with("reason", why);
}

}  // namespace kiln::engine::ops
