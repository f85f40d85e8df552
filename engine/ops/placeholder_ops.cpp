// SPDX-License-Identifier: Apache-2.0
// Placeholder: stands for an operation of an imported model that Kiln cannot compute (an ONNX op
// or a Keras layer the reader does not map). It keeps the original op or layer class, its
// attributes or config and its output shape so that the graph stays whole and editable; it has no
// kernel, so running, training and exporting refuse.
#include "engine/ops/op_helpers.h"

namespace kiln::engine::ops {
namespace {
using namespace detail;

std::string standsFor(const ShapeContext& c) {
    if (const std::string& keras = c.attrs.getString("keras_class"); !keras.empty()) return "the Keras layer " + keras;
    const std::string& domain = c.attrs.getString("onnx_domain");
    return "the ONNX operation " + (domain.empty() ? std::string() : domain + ".") + c.attrs.getString("onnx_op");
}

Result<Shape> placeholderShape(const ShapeContext& c) {
    if (c.attrs.getString("onnx_op").empty() && c.attrs.getString("keras_class").empty())
        return Error(ErrorCode::BadAttribute, opLabel(c) + " needs the attribute \"onnx_op\" or \"keras_class\" (what it stands for)")
            .withNode(c.node.name)
            .with("attribute", "onnx_op")
            .with("reason", "missing");
    const auto& dims = c.attrs.getInts("output_shape");
    if (dims.empty())
        return Error(ErrorCode::ShapeMismatch, opLabel(c) + " stands for " + standsFor(c) +
                                                   ", whose output shape is unknown; replace it with Kiln layers")
            .withNode(c.node.name)
            .with("reason", "unknown output shape of a placeholder");
    // The batch follows the inputs (symbolic in analysis, concrete in a plan).
    std::vector<int64_t> full{c.inputs.empty() ? Shape::kBatch : c.inputs[0][0]};
    full.insert(full.end(), dims.begin(), dims.end());
    return Shape(full);
}

Result<std::unique_ptr<CpuKernel>> placeholderKernel(const ShapeContext& c, const Shape&) {
    return Error(ErrorCode::Unsupported, opLabel(c) + " stands for " + standsFor(c) +
                                             ", which Kiln cannot compute; replace it with Kiln layers")
        .withNode(c.node.name)
        .with("what", "placeholder node " + c.node.name);
}

}  // namespace

std::vector<OpDef> placeholderOps() {
    std::vector<OpDef> rows;
    AttrSpec op{"onnx_op", AttrType::String, std::string(), false, std::nullopt, std::nullopt, {}, 0,
                "the ONNX operation this node stands for (empty for a Keras layer)"};
    AttrSpec domain{"onnx_domain", AttrType::String, std::string(), false, std::nullopt, std::nullopt, {}, 0,
                    "the operation's ONNX domain (empty: the default domain)"};
    AttrSpec attributes{"onnx_attributes", AttrType::String, std::string("{}"), false, std::nullopt, std::nullopt, {}, 0,
                        "the ONNX node's attributes, as a JSON object"};
    AttrSpec kerasClass{"keras_class", AttrType::String, std::string(), false, std::nullopt, std::nullopt, {}, 0,
                        "the Keras layer class this node stands for (empty for an ONNX operation)"};
    AttrSpec kerasConfig{"keras_config", AttrType::String, std::string("{}"), false, std::nullopt, std::nullopt, {}, 0,
                         "the Keras layer's config, as a JSON object"};
    rows.push_back({OpKind::Placeholder, "Placeholder", Category::Core, 0, -1,
                    {std::move(op), std::move(domain), std::move(attributes), std::move(kerasClass), std::move(kerasConfig),
                     intsAttr("output_shape", {}, 0, 1, "output shape after the batch, channels-last (empty: unknown)")},
                    placeholderShape, nullptr, nullptr, placeholderKernel,
                    "An imported operation Kiln cannot compute; replace it before training or export"});
    return rows;
}

}  // namespace kiln::engine::ops
