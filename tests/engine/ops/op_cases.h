// SPDX-License-Identifier: Apache-2.0
// The op-level test cases shared by tst_op_harness (which runs them) and tst_op_table (which checks
// that every OpKind has at least one valid and one invalid case): attributes, concrete input
// shapes with how to fill them, and the expected output shape or error substring.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/graph/attr.h"
#include "engine/ops/op_table.h"

namespace kiln::tests::opcases {

using engine::AttrValue;
using engine::ops::OpKind;

// How the harness fills an input buffer.
enum class Fill {
    Uniform,        // uniform in [lo, hi]
    Distinct,       // a random permutation of evenly spaced values in [lo, hi] (no ties: max pooling)
    Ids,            // integer ids in [0, classes) (Embedding): not differentiable
    Labels,         // integer class labels in [0, classes) (sparse cross-entropy): not differentiable
    OneHot,         // one-hot rows over the last dimension
    Probabilities,  // positive rows over the last dimension that sum to 1
    Binary,         // 0 or 1
};

struct InputSpec {
    std::vector<int64_t> shape;  // concrete, batch first
    Fill fill = Fill::Uniform;
    double lo = -1.0;
    double hi = 1.0;
    int64_t classes = 0;  // Ids and Labels
};

using Attrs = std::vector<std::pair<std::string, AttrValue>>;

struct OpCase {
    OpKind kind;
    std::string name;  // unique, used as the data row name
    Attrs attrs;
    std::vector<InputSpec> inputs;
    std::vector<int64_t> output;  // expected output shape with the concrete batch (valid cases)
    std::string error;            // expected error substring; empty for a valid case
    bool trainable = true;        // the node's trainable flag (false: frozen BatchNormalization)

    bool valid() const { return error.empty(); }
};

// Attribute value builders.
inline AttrValue ai(int64_t v) {
    return v;
}
inline AttrValue af(double v) {
    return v;
}
inline AttrValue ab(bool v) {
    return v;
}
inline AttrValue as(const char* v) {
    return std::string(v);
}
inline AttrValue al(std::vector<int64_t> v) {
    return v;
}

// Input builders.
inline InputSpec uniform(std::vector<int64_t> shape, double lo = -1.0, double hi = 1.0) {
    return {std::move(shape), Fill::Uniform, lo, hi, 0};
}
inline InputSpec distinct(std::vector<int64_t> shape, double lo = -1.0, double hi = 1.0) {
    return {std::move(shape), Fill::Distinct, lo, hi, 0};
}
inline InputSpec ids(std::vector<int64_t> shape, int64_t vocab) {
    return {std::move(shape), Fill::Ids, 0, 0, vocab};
}
inline InputSpec labels(std::vector<int64_t> shape, int64_t classes) {
    return {std::move(shape), Fill::Labels, 0, 0, classes};
}
inline InputSpec oneHot(std::vector<int64_t> shape) {
    return {std::move(shape), Fill::OneHot, 0, 1, 0};
}
inline InputSpec probabilities(std::vector<int64_t> shape) {
    return {std::move(shape), Fill::Probabilities, 0, 1, 0};
}
inline InputSpec binary(std::vector<int64_t> shape) {
    return {std::move(shape), Fill::Binary, 0, 1, 0};
}

inline OpCase valid(OpKind kind, std::string name, Attrs attrs, std::vector<InputSpec> inputs,
                    std::vector<int64_t> output, bool trainable = true) {
    return {kind, std::move(name), std::move(attrs), std::move(inputs), std::move(output), {}, trainable};
}
inline OpCase invalid(OpKind kind, std::string name, Attrs attrs, std::vector<InputSpec> inputs,
                      std::string error) {
    return {kind, std::move(name), std::move(attrs), std::move(inputs), {}, std::move(error), true};
}

// Every case, grouped by op in enum order.
inline const std::vector<OpCase>& opCases() {
    using K = OpKind;
    static const std::vector<OpCase> cases = {
        // ---- Input ----
        valid(K::Input, "Input rank 3", {{"shape", al({3, 4})}}, {}, {2, 3, 4}),
        valid(K::Input, "Input int32", {{"shape", al({5})}, {"dtype", as("int32")}}, {}, {2, 5}),
        invalid(K::Input, "Input zero dimension", {{"shape", al({3, 0})}}, {}, "must be at least 1, got 0"),
        invalid(K::Input, "Input with an input", {{"shape", al({3})}}, {uniform({2, 3})},
                "takes 0 input(s) but has 1"),
        invalid(K::Input, "Input without shape", {}, {}, "needs the attribute \"shape\""),
        invalid(K::Input, "Input bad dtype", {{"shape", al({3})}, {"dtype", as("float64")}}, {},
                "must be one of float32, int32"),

        // ---- Dense ----
        valid(K::Dense, "Dense linear", {{"units", ai(4)}}, {uniform({3, 5})}, {3, 4}),
        valid(K::Dense, "Dense no bias", {{"units", ai(3)}, {"use_bias", ab(false)}}, {uniform({4, 5})},
              {4, 3}),
        valid(K::Dense, "Dense relu", {{"units", ai(4)}, {"activation", as("relu")}}, {uniform({3, 5})},
              {3, 4}),
        valid(K::Dense, "Dense relu6", {{"units", ai(4)}, {"activation", as("relu6")}},
              {uniform({3, 5}, -6, 6)}, {3, 4}),
        valid(K::Dense, "Dense sigmoid", {{"units", ai(4)}, {"activation", as("sigmoid")}}, {uniform({3, 5})},
              {3, 4}),
        valid(K::Dense, "Dense tanh", {{"units", ai(4)}, {"activation", as("tanh")}}, {uniform({3, 5})},
              {3, 4}),
        valid(K::Dense, "Dense softmax", {{"units", ai(4)}, {"activation", as("softmax")}}, {uniform({3, 5})},
              {3, 4}),
        valid(K::Dense, "Dense gelu", {{"units", ai(4)}, {"activation", as("gelu")}}, {uniform({3, 5})},
              {3, 4}),
        valid(K::Dense, "Dense linear explicit", {{"units", ai(1)}, {"activation", as("linear")}},
              {uniform({2, 7})}, {2, 1}),
        valid(K::Dense, "Dense batch 1 softmax", {{"units", ai(3)}, {"activation", as("softmax")}},
              {uniform({1, 5})}, {1, 3}),
        valid(K::Dense, "Dense large tanh", {{"units", ai(40)}, {"activation", as("tanh")}},
              {uniform({32, 24})}, {32, 40}),
        valid(K::Dense, "Dense rank 3", {{"units", ai(4)}}, {uniform({2, 3, 5})}, {2, 3, 4}),
        valid(K::Dense, "Dense rank 3 gelu", {{"units", ai(3)}, {"activation", as("gelu")}}, {uniform({2, 4, 5})},
              {2, 4, 3}),
        invalid(K::Dense, "Dense rank 4", {{"units", ai(4)}}, {uniform({2, 3, 3, 1})}, "add a Flatten before it"),
        invalid(K::Dense, "Dense rank 1", {{"units", ai(4)}}, {uniform({5})}, "expects a rank-2 or rank-3 input"),
        invalid(K::Dense, "Dense zero units", {{"units", ai(0)}}, {uniform({2, 5})},
                "must be at least 1, got 0"),
        invalid(K::Dense, "Dense without units", {}, {uniform({2, 5})}, "needs the attribute \"units\""),
        invalid(K::Dense, "Dense unknown activation", {{"units", ai(2)}, {"activation", as("swish")}},
                {uniform({2, 5})}, "must be one of"),
        invalid(K::Dense, "Dense two inputs", {{"units", ai(2)}}, {uniform({2, 5}), uniform({2, 5})},
                "takes 1 input(s) but has 2"),
        invalid(K::Dense, "Dense unknown attribute", {{"units", ai(2)}, {"kernel_regularizer", as("l2")}},
                {uniform({2, 5})}, "has no attribute \"kernel_regularizer\""),

        // ---- Conv2D ----
        valid(K::Conv2D, "Conv2D valid 3x3", {{"filters", ai(4)}}, {uniform({2, 5, 5, 3})}, {2, 3, 3, 4}),
        valid(K::Conv2D, "Conv2D same stride 2 relu",
              {{"filters", ai(3)},
               {"strides", al({2, 2})},
               {"padding", as("same")},
               {"activation", as("relu")}},
              {uniform({2, 6, 5, 2})}, {2, 3, 3, 3}),
        valid(K::Conv2D, "Conv2D dilation 2 valid", {{"filters", ai(2)}, {"dilation_rate", al({2, 2})}},
              {uniform({1, 7, 7, 2})}, {1, 3, 3, 2}),
        valid(K::Conv2D, "Conv2D dilation 2 same sigmoid",
              {{"filters", ai(3)},
               {"dilation_rate", ai(2)},
               {"padding", as("same")},
               {"activation", as("sigmoid")}},
              {uniform({1, 5, 6, 2})}, {1, 5, 6, 3}),
        valid(K::Conv2D, "Conv2D groups 2 non-square",
              {{"filters", ai(6)}, {"kernel_size", al({2, 3})}, {"strides", al({1, 2})}, {"groups", ai(2)}},
              {uniform({2, 5, 6, 4})}, {2, 4, 2, 6}),
        valid(K::Conv2D, "Conv2D depthwise same",
              {{"filters", ai(3)}, {"groups", ai(3)}, {"padding", as("same")}}, {uniform({2, 4, 4, 3})},
              {2, 4, 4, 3}),
        valid(K::Conv2D, "Conv2D depthwise x2 stride 2 same relu6",
              {{"filters", ai(4)},
               {"groups", ai(2)},
               {"strides", ai(2)},
               {"padding", as("same")},
               {"activation", as("relu6")}},
              {uniform({1, 5, 5, 2}, -4, 4)}, {1, 3, 3, 4}),
        valid(
            K::Conv2D, "Conv2D pointwise no bias tanh",
            {{"filters", ai(3)}, {"kernel_size", ai(1)}, {"use_bias", ab(false)}, {"activation", as("tanh")}},
            {uniform({2, 3, 4, 5})}, {2, 3, 4, 3}),
        valid(K::Conv2D, "Conv2D 2x2 stride 2 gelu",
              {{"filters", ai(2)}, {"kernel_size", ai(2)}, {"strides", ai(2)}, {"activation", as("gelu")}},
              {uniform({1, 6, 6, 2})}, {1, 3, 3, 2}),
        valid(K::Conv2D, "Conv2D same softmax",
              {{"filters", ai(4)}, {"padding", as("same")}, {"activation", as("softmax")}},
              {uniform({1, 3, 3, 2})}, {1, 3, 3, 4}),
        valid(K::Conv2D, "Conv2D 2x2 stride 3 same",
              {{"filters", ai(2)}, {"kernel_size", ai(2)}, {"strides", ai(3)}, {"padding", as("same")}},
              {uniform({1, 7, 7, 1})}, {1, 3, 3, 2}),
        valid(K::Conv2D, "Conv2D dilation 1x2 groups 2 same",
              {{"filters", ai(2)}, {"groups", ai(2)}, {"dilation_rate", al({1, 2})}, {"padding", as("same")}},
              {uniform({1, 4, 6, 4})}, {1, 4, 6, 2}),
        valid(K::Conv2D, "Conv2D large same", {{"filters", ai(16)}, {"padding", as("same")}},
              {uniform({2, 12, 12, 8})}, {2, 12, 12, 16}),
        valid(K::Conv2D, "Conv2D large depthwise",
              {{"filters", ai(16)}, {"groups", ai(16)}, {"padding", as("same")}}, {uniform({2, 12, 12, 16})},
              {2, 12, 12, 16}),
        valid(K::Conv2D, "Conv2D large pointwise", {{"filters", ai(24)}, {"kernel_size", ai(1)}},
              {uniform({2, 8, 8, 32})}, {2, 8, 8, 24}),
        valid(K::Conv2D, "Conv2D large stride 2 valid", {{"filters", ai(8)}, {"strides", ai(2)}},
              {uniform({2, 13, 13, 6})}, {2, 6, 6, 8}),
        invalid(K::Conv2D, "Conv2D kernel larger than input", {{"filters", ai(2)}, {"kernel_size", ai(5)}},
                {uniform({1, 3, 3, 1})}, "does not fit its input"),
        invalid(K::Conv2D, "Conv2D dilated kernel larger than input",
                {{"filters", ai(2)}, {"dilation_rate", ai(3)}}, {uniform({1, 6, 6, 1})},
                "does not fit its input"),
        invalid(K::Conv2D, "Conv2D groups do not divide channels", {{"filters", ai(4)}, {"groups", ai(2)}},
                {uniform({1, 5, 5, 3})}, "which is not divisible by groups = 2"),
        invalid(K::Conv2D, "Conv2D groups do not divide filters", {{"filters", ai(3)}, {"groups", ai(2)}},
                {uniform({1, 5, 5, 4})}, "filters = 3, which is not divisible"),
        invalid(K::Conv2D, "Conv2D strides with dilation",
                {{"filters", ai(2)}, {"strides", ai(2)}, {"dilation_rate", ai(2)}}, {uniform({1, 9, 9, 1})},
                "cannot combine strides > 1 with dilation_rate > 1"),
        invalid(K::Conv2D, "Conv2D rank 3 input", {{"filters", ai(2)}}, {uniform({2, 5, 5})},
                "give the Input a channel dimension"),
        invalid(K::Conv2D, "Conv2D bad padding", {{"filters", ai(2)}, {"padding", as("full")}},
                {uniform({1, 5, 5, 1})}, "must be one of valid, same"),
        invalid(K::Conv2D, "Conv2D three kernel sizes", {{"filters", ai(2)}, {"kernel_size", al({3, 3, 3})}},
                {uniform({1, 5, 5, 1})}, "must have 2 elements, got 3"),

        // ---- DepthwiseConv2D ----
        valid(K::DepthwiseConv2D, "DepthwiseConv2D valid 3x3", {}, {uniform({2, 5, 5, 3})}, {2, 3, 3, 3}),
        valid(K::DepthwiseConv2D, "DepthwiseConv2D same stride 2 x2 relu6",
              {{"strides", ai(2)}, {"padding", as("same")}, {"depth_multiplier", ai(2)}, {"activation", as("relu6")}},
              {uniform({1, 6, 5, 2}, -4, 4)}, {1, 3, 3, 4}),
        valid(K::DepthwiseConv2D, "DepthwiseConv2D dilation 2 same no bias",
              {{"dilation_rate", ai(2)}, {"padding", as("same")}, {"use_bias", ab(false)}}, {uniform({1, 6, 6, 3})},
              {1, 6, 6, 3}),
        valid(K::DepthwiseConv2D, "DepthwiseConv2D 5x3 strides 2x1 sigmoid",
              {{"kernel_size", al({5, 3})}, {"strides", al({2, 1})}, {"activation", as("sigmoid")}},
              {uniform({2, 7, 5, 4})}, {2, 2, 3, 4}),
        valid(K::DepthwiseConv2D, "DepthwiseConv2D large same", {{"padding", as("same")}}, {uniform({2, 12, 12, 16})},
              {2, 12, 12, 16}),
        valid(K::DepthwiseConv2D, "DepthwiseConv2D large x3 tanh",
              {{"depth_multiplier", ai(3)}, {"padding", as("same")}, {"activation", as("tanh")}},
              {uniform({2, 8, 8, 8})}, {2, 8, 8, 24}),
        invalid(K::DepthwiseConv2D, "DepthwiseConv2D kernel larger than input", {{"kernel_size", ai(5)}},
                {uniform({1, 3, 3, 2})}, "does not fit its input"),
        invalid(K::DepthwiseConv2D, "DepthwiseConv2D zero multiplier", {{"depth_multiplier", ai(0)}},
                {uniform({1, 5, 5, 2})}, "must be at least 1, got 0"),
        invalid(K::DepthwiseConv2D, "DepthwiseConv2D strides with dilation", {{"strides", ai(2)}, {"dilation_rate", ai(2)}},
                {uniform({1, 9, 9, 1})}, "cannot combine strides > 1 with dilation_rate > 1"),
        invalid(K::DepthwiseConv2D, "DepthwiseConv2D rank 3 input", {}, {uniform({2, 5, 5})},
                "give the Input a channel dimension"),
        invalid(K::DepthwiseConv2D, "DepthwiseConv2D filters", {{"filters", ai(4)}}, {uniform({1, 5, 5, 2})},
                "has no attribute \"filters\""),

        // ---- MaxPooling2D ----
        valid(K::MaxPooling2D, "MaxPooling2D default", {}, {distinct({2, 4, 4, 3})}, {2, 2, 2, 3}),
        valid(K::MaxPooling2D, "MaxPooling2D 3x3 stride 2 same",
              {{"pool_size", al({3, 3})}, {"strides", al({2, 2})}, {"padding", as("same")}},
              {distinct({2, 5, 6, 2})}, {2, 3, 3, 2}),
        valid(K::MaxPooling2D, "MaxPooling2D 2x3 strides 1x2",
              {{"pool_size", al({2, 3})}, {"strides", al({1, 2})}}, {distinct({1, 4, 7, 2})}, {1, 3, 3, 2}),
        valid(K::MaxPooling2D, "MaxPooling2D bare pool size", {{"pool_size", ai(3)}},
              {distinct({1, 7, 6, 1})}, {1, 2, 2, 1}),
        valid(K::MaxPooling2D, "MaxPooling2D large same",
              {{"pool_size", ai(3)}, {"strides", ai(2)}, {"padding", as("same")}},
              {distinct({2, 16, 16, 8}, -50, 50)}, {2, 8, 8, 8}),
        invalid(K::MaxPooling2D, "MaxPooling2D window larger than input", {{"pool_size", ai(3)}},
                {uniform({1, 2, 2, 1})}, "has a pool window larger than its input"),
        invalid(K::MaxPooling2D, "MaxPooling2D rank 2 input", {}, {uniform({2, 4})},
                "expects an image batch"),
        invalid(K::MaxPooling2D, "MaxPooling2D zero pool size", {{"pool_size", al({0, 2})}},
                {uniform({1, 4, 4, 1})}, "must be at least 1, got 0"),

        // ---- AveragePooling2D ----
        valid(K::AveragePooling2D, "AveragePooling2D default", {}, {uniform({2, 4, 4, 3})}, {2, 2, 2, 3}),
        valid(K::AveragePooling2D, "AveragePooling2D 3x3 stride 2 same",
              {{"pool_size", ai(3)}, {"strides", ai(2)}, {"padding", as("same")}}, {uniform({2, 5, 5, 2})},
              {2, 3, 3, 2}),
        valid(K::AveragePooling2D, "AveragePooling2D stride 1 same odd padding",
              {{"pool_size", ai(2)}, {"strides", ai(1)}, {"padding", as("same")}}, {uniform({1, 3, 4, 2})},
              {1, 3, 4, 2}),
        valid(K::AveragePooling2D, "AveragePooling2D 3x2 stride 1",
              {{"pool_size", al({3, 2})}, {"strides", ai(1)}}, {uniform({2, 4, 3, 1})}, {2, 2, 2, 1}),
        valid(K::AveragePooling2D, "AveragePooling2D window larger than input same",
              {{"pool_size", ai(3)}, {"padding", as("same")}}, {uniform({1, 2, 2, 1})}, {1, 1, 1, 1}),
        valid(K::AveragePooling2D, "AveragePooling2D stride 3 same",
              {{"pool_size", ai(2)}, {"strides", ai(3)}, {"padding", as("same")}}, {uniform({1, 7, 7, 1})},
              {1, 3, 3, 1}),
        valid(K::AveragePooling2D, "AveragePooling2D large same",
              {{"pool_size", ai(3)}, {"strides", ai(2)}, {"padding", as("same")}}, {uniform({2, 16, 16, 8})},
              {2, 8, 8, 8}),
        invalid(K::AveragePooling2D, "AveragePooling2D window larger than input", {{"pool_size", al({2, 5})}},
                {uniform({1, 4, 4, 1})}, "has a pool window larger than its input"),
        invalid(K::AveragePooling2D, "AveragePooling2D rank 3 input", {}, {uniform({2, 4, 4})},
                "give the Input a channel dimension"),

        // ---- GlobalAveragePooling2D ----
        valid(K::GlobalAveragePooling2D, "GlobalAveragePooling2D", {}, {uniform({2, 3, 4, 5})}, {2, 5}),
        valid(K::GlobalAveragePooling2D, "GlobalAveragePooling2D 1x1", {}, {uniform({3, 1, 1, 2})}, {3, 2}),
        valid(K::GlobalAveragePooling2D, "GlobalAveragePooling2D large", {}, {uniform({4, 8, 8, 16})},
              {4, 16}),
        invalid(K::GlobalAveragePooling2D, "GlobalAveragePooling2D rank 2 input", {}, {uniform({2, 4})},
                "expects an image batch"),
        invalid(K::GlobalAveragePooling2D, "GlobalAveragePooling2D keepdims", {{"keepdims", ab(true)}},
                {uniform({2, 3, 3, 1})}, "has no attribute \"keepdims\" (it takes none)"),

        // ---- GlobalMaxPooling2D ----
        valid(K::GlobalMaxPooling2D, "GlobalMaxPooling2D", {}, {distinct({2, 3, 4, 5})}, {2, 5}),
        valid(K::GlobalMaxPooling2D, "GlobalMaxPooling2D large", {}, {distinct({4, 8, 8, 16}, -50, 50)}, {4, 16}),
        invalid(K::GlobalMaxPooling2D, "GlobalMaxPooling2D rank 3 input", {}, {uniform({2, 4, 3})},
                "expects an image batch"),

        // ---- GlobalAveragePooling1D: [N,T,D] ----
        valid(K::GlobalAveragePooling1D, "GlobalAveragePooling1D", {}, {uniform({2, 5, 3})}, {2, 3}),
        valid(K::GlobalAveragePooling1D, "GlobalAveragePooling1D keepdims", {{"keepdims", ab(true)}},
              {uniform({3, 4, 6})}, {3, 1, 6}),
        valid(K::GlobalAveragePooling1D, "GlobalAveragePooling1D one position", {}, {uniform({2, 1, 4})}, {2, 4}),
        valid(K::GlobalAveragePooling1D, "GlobalAveragePooling1D large", {}, {uniform({4, 32, 16})}, {4, 16}),
        invalid(K::GlobalAveragePooling1D, "GlobalAveragePooling1D image", {}, {uniform({2, 3, 3, 2})},
                "but got [N,3,3,2]: for an image use GlobalAveragePooling2D"),
        invalid(K::GlobalAveragePooling1D, "GlobalAveragePooling1D rank 2 input", {}, {uniform({2, 4})},
                "but got [N,4]: the input has no positions axis"),
        invalid(K::GlobalAveragePooling1D, "GlobalAveragePooling1D keepdims not bool", {{"keepdims", ai(1)}},
                {uniform({2, 4, 3})}, "must be true or false"),

        // ---- ZeroPadding2D ----
        valid(K::ZeroPadding2D, "ZeroPadding2D default", {}, {uniform({2, 3, 4, 2})}, {2, 5, 6, 2}),
        valid(K::ZeroPadding2D, "ZeroPadding2D asymmetric", {{"padding", al({1, 2, 0, 3})}}, {uniform({1, 4, 5, 3})},
              {1, 7, 8, 3}),
        valid(K::ZeroPadding2D, "ZeroPadding2D bare int large", {{"padding", ai(2)}}, {uniform({2, 8, 8, 16})},
              {2, 12, 12, 16}),
        invalid(K::ZeroPadding2D, "ZeroPadding2D negative", {{"padding", al({1, -1, 0, 0})}},
                {uniform({1, 4, 4, 1})}, "must be at least 0, got -1"),
        invalid(K::ZeroPadding2D, "ZeroPadding2D two values", {{"padding", al({1, 2})}}, {uniform({1, 4, 4, 1})},
                "must have 4 elements, got 2"),
        invalid(K::ZeroPadding2D, "ZeroPadding2D rank 2 input", {}, {uniform({2, 4})}, "expects an image batch"),

        // ---- UpSampling2D ----
        valid(K::UpSampling2D, "UpSampling2D nearest default", {}, {uniform({2, 3, 4, 2})}, {2, 6, 8, 2}),
        valid(K::UpSampling2D, "UpSampling2D nearest 1x3", {{"size", al({1, 3})}}, {uniform({1, 3, 2, 3})},
              {1, 3, 6, 3}),
        valid(K::UpSampling2D, "UpSampling2D bilinear 3x2",
              {{"size", al({3, 2})}, {"interpolation", as("bilinear")}}, {uniform({1, 3, 4, 3})}, {1, 9, 8, 3}),
        valid(K::UpSampling2D, "UpSampling2D bilinear large", {{"interpolation", as("bilinear")}},
              {uniform({2, 8, 8, 16})}, {2, 16, 16, 16}),
        valid(K::UpSampling2D, "UpSampling2D bilinear 1x1 image", {{"size", ai(3)}, {"interpolation", as("bilinear")}},
              {uniform({2, 1, 1, 4})}, {2, 3, 3, 4}),
        invalid(K::UpSampling2D, "UpSampling2D bicubic", {{"interpolation", as("bicubic")}}, {uniform({1, 4, 4, 1})},
                "must be one of nearest, bilinear"),
        invalid(K::UpSampling2D, "UpSampling2D zero size", {{"size", al({0, 2})}}, {uniform({1, 4, 4, 1})},
                "must be at least 1, got 0"),
        invalid(K::UpSampling2D, "UpSampling2D rank 3 input", {}, {uniform({2, 4, 4})}, "expects an image batch"),

        // ---- BatchNormalization ----
        valid(K::BatchNormalization, "BatchNormalization rank 2", {{"momentum", af(0.9)}}, {uniform({6, 4})},
              {6, 4}),
        valid(K::BatchNormalization, "BatchNormalization NHWC", {{"axis", ai(3)}, {"epsilon", af(0.01)}},
              {uniform({2, 3, 3, 2}, -2, 3)}, {2, 3, 3, 2}),
        valid(K::BatchNormalization, "BatchNormalization frozen", {}, {uniform({4, 3})}, {4, 3}, false),
        // Alone (no data-parallel group) a synchronised layer normalises with its own batch.
        valid(K::BatchNormalization, "BatchNormalization synchronized", {{"synchronized", ab(true)}},
              {uniform({6, 4})}, {6, 4}),
        valid(K::BatchNormalization, "BatchNormalization large", {}, {uniform({128, 12}, -1, 3)}, {128, 12}),
        valid(K::BatchNormalization, "BatchNormalization large NHWC", {{"momentum", af(0.5)}},
              {uniform({4, 8, 8, 16})}, {4, 8, 8, 16}),
        invalid(K::BatchNormalization, "BatchNormalization axis 1", {{"axis", ai(1)}},
                {uniform({2, 3, 3, 2})}, "normalises only the last (channel) axis"),
        invalid(K::BatchNormalization, "BatchNormalization momentum 1.5", {{"momentum", af(1.5)}},
                {uniform({2, 3})}, "must be at most 1, got 1.5"),
        invalid(K::BatchNormalization, "BatchNormalization rank 1", {}, {uniform({4})},
                "expects a batch and at least one more dimension"),

        // ---- LayerNormalization ----
        valid(K::LayerNormalization, "LayerNormalization rank 2", {}, {uniform({3, 6})}, {3, 6}),
        valid(K::LayerNormalization, "LayerNormalization rank 3", {{"axis", ai(2)}, {"epsilon", af(1e-5)}},
              {uniform({2, 3, 5}, -1, 2)}, {2, 3, 5}),
        valid(K::LayerNormalization, "LayerNormalization large", {}, {uniform({48, 40})}, {48, 40}),
        invalid(K::LayerNormalization, "LayerNormalization zero epsilon", {{"epsilon", af(0.0)}},
                {uniform({3, 6})}, "must be at least 1e-12"),
        invalid(K::LayerNormalization, "LayerNormalization axis 0", {{"axis", ai(0)}}, {uniform({3, 6})},
                "normalises only the last (channel) axis"),

        // ---- Normalization ----
        valid(K::Normalization, "Normalization image", {}, {uniform({2, 4, 5, 3}, 0, 1)}, {2, 4, 5, 3}),
        valid(K::Normalization, "Normalization rank 2", {{"axis", ai(-1)}}, {uniform({3, 6})}, {3, 6}),
        valid(K::Normalization, "Normalization large", {}, {uniform({40, 64})}, {40, 64}),
        invalid(K::Normalization, "Normalization axis 1", {{"axis", ai(1)}}, {uniform({2, 4, 5, 3})},
                "normalises only the last (channel) axis"),
        invalid(K::Normalization, "Normalization rank 1", {}, {uniform({4})},
                "expects a batch and at least one more dimension"),

        // ---- Dropout ----
        valid(K::Dropout, "Dropout 0.5", {{"rate", af(0.5)}}, {uniform({4, 8})}, {4, 8}),
        valid(K::Dropout, "Dropout 0.3 large", {{"rate", af(0.3)}}, {uniform({64, 64})}, {64, 64}),
        valid(K::Dropout, "Dropout rate 0", {{"rate", af(0.0)}}, {uniform({3, 5})}, {3, 5}),
        valid(K::Dropout, "Dropout default rank 3", {}, {uniform({2, 3, 4})}, {2, 3, 4}),
        // noise_shape: whole samples (stochastic depth), whole channels, a shared batch axis.
        valid(K::Dropout, "Dropout per sample", {{"rate", af(0.4)}, {"noise_shape", al({-1, 1, 1, 1})}},
              {uniform({16, 3, 3, 2})}, {16, 3, 3, 2}),
        valid(K::Dropout, "Dropout per channel", {{"rate", af(0.5)}, {"noise_shape", al({-1, 1, 1, 8})}},
              {uniform({4, 3, 3, 8})}, {4, 3, 3, 8}),
        valid(K::Dropout, "Dropout shared over the batch", {{"rate", af(0.3)}, {"noise_shape", al({1, 5, 1})}},
              {uniform({4, 5, 6})}, {4, 5, 6}),
        valid(K::Dropout, "Dropout noise every value", {{"rate", af(0.3)}, {"noise_shape", al({-1, -1})}},
              {uniform({40, 40})}, {40, 40}),
        invalid(K::Dropout, "Dropout noise_shape rank", {{"noise_shape", al({-1, 1})}}, {uniform({2, 3, 4})},
                "has a noise_shape of 2 entries for an input of rank 3"),
        invalid(K::Dropout, "Dropout noise_shape entry", {{"noise_shape", al({-1, 2, 1})}}, {uniform({2, 3, 4})},
                "has noise_shape entry 2 for dimension 1"),
        invalid(K::Dropout, "Dropout noise_shape below -1", {{"noise_shape", al({-2, 1})}}, {uniform({2, 3})},
                "must be at least -1"),
        invalid(K::Dropout, "Dropout rate 1.5", {{"rate", af(1.5)}}, {uniform({2, 3})},
                "must be at most 0.99, got 1.5"),
        invalid(K::Dropout, "Dropout negative rate", {{"rate", af(-0.1)}}, {uniform({2, 3})},
                "must be at least 0"),
        invalid(K::Dropout, "Dropout string rate", {{"rate", as("half")}}, {uniform({2, 3})},
                "must be a number"),
        invalid(K::Dropout, "Dropout two inputs", {}, {uniform({2, 3}), uniform({2, 3})},
                "takes 1 input(s) but has 2"),

        // ---- Flatten ----
        valid(K::Flatten, "Flatten rank 4", {}, {uniform({2, 3, 4, 2})}, {2, 24}),
        valid(K::Flatten, "Flatten rank 2", {}, {uniform({3, 5})}, {3, 5}),
        invalid(K::Flatten, "Flatten rank 1", {}, {uniform({4})},
                "expects an input with a batch and at least one more"),
        invalid(K::Flatten, "Flatten data_format", {{"data_format", as("channels_last")}}, {uniform({2, 3})},
                "has no attribute \"data_format\""),

        // ---- Reshape ----
        valid(K::Reshape, "Reshape to rank 3", {{"target_shape", al({3, 4})}}, {uniform({2, 12})}, {2, 3, 4}),
        valid(K::Reshape, "Reshape inferred dimension", {{"target_shape", al({-1, 2})}}, {uniform({2, 3, 4})},
              {2, 6, 2}),
        valid(K::Reshape, "Reshape to flat", {{"target_shape", al({12})}}, {uniform({2, 2, 3, 2})}, {2, 12}),
        invalid(K::Reshape, "Reshape impossible target", {{"target_shape", al({5})}}, {uniform({2, 12})},
                "cannot reshape [N,12] (12 values per sample) into 5 values"),
        invalid(K::Reshape, "Reshape impossible inferred", {{"target_shape", al({-1, 3})}},
                {uniform({2, 10})}, "with target_shape containing -1"),
        invalid(K::Reshape, "Reshape two unknowns", {{"target_shape", al({-1, -1})}}, {uniform({2, 12})},
                "can infer only one dimension"),
        invalid(K::Reshape, "Reshape zero dimension", {{"target_shape", al({0, 12})}}, {uniform({2, 12})},
                "has an invalid dimension 0"),
        invalid(K::Reshape, "Reshape without target", {}, {uniform({2, 12})},
                "needs the attribute \"target_shape\""),

        // ---- Rescaling ----
        valid(K::Rescaling, "Rescaling pixels", {{"scale", af(1.0 / 255.0)}, {"offset", af(-0.5)}},
              {uniform({2, 4, 4, 3}, 0, 255)}, {2, 4, 4, 3}),
        valid(K::Rescaling, "Rescaling rank 2", {{"scale", af(2.0)}}, {uniform({3, 5})}, {3, 5}),
        valid(K::Rescaling, "Rescaling large", {{"scale", af(-0.5)}, {"offset", af(1.0)}}, {uniform({64, 300})},
              {64, 300}),
        invalid(K::Rescaling, "Rescaling without scale", {{"offset", af(1.0)}}, {uniform({2, 3})},
                "needs the attribute \"scale\""),
        invalid(K::Rescaling, "Rescaling rank 1", {{"scale", af(2.0)}}, {uniform({4})},
                "expects a batch and at least one more dimension"),

        // ---- Concatenate ----
        valid(K::Concatenate, "Concatenate rank 2", {}, {uniform({2, 3}), uniform({2, 5})}, {2, 8}),
        valid(K::Concatenate, "Concatenate axis 1 rank 4", {{"axis", ai(1)}},
              {uniform({2, 2, 3, 2}), uniform({2, 3, 3, 2})}, {2, 5, 3, 2}),
        valid(K::Concatenate, "Concatenate axis 2 rank 4", {{"axis", ai(2)}},
              {uniform({2, 2, 3, 2}), uniform({2, 2, 1, 2})}, {2, 2, 4, 2}),
        valid(K::Concatenate, "Concatenate axis 3 rank 4", {{"axis", ai(3)}},
              {uniform({2, 2, 3, 2}), uniform({2, 2, 3, 4})}, {2, 2, 3, 6}),
        valid(K::Concatenate, "Concatenate three inputs last axis", {{"axis", ai(-1)}},
              {uniform({2, 3, 1}), uniform({2, 3, 2}), uniform({2, 3, 3})}, {2, 3, 6}),
        valid(K::Concatenate, "Concatenate three inputs axis -2", {{"axis", ai(-2)}},
              {uniform({2, 1, 4}), uniform({2, 2, 4}), uniform({2, 3, 4})}, {2, 6, 4}),
        valid(K::Concatenate, "Concatenate large", {}, {uniform({16, 40}), uniform({16, 24})}, {16, 64}),
        valid(K::Concatenate, "Concatenate large axis 1", {{"axis", ai(1)}},
              {uniform({4, 8, 8, 16}), uniform({4, 4, 8, 16})}, {4, 12, 8, 16}),
        invalid(K::Concatenate, "Concatenate mismatched dims", {}, {uniform({2, 3, 4}), uniform({2, 2, 5})},
                "the other dimensions must match"),
        invalid(K::Concatenate, "Concatenate mismatched ranks", {}, {uniform({2, 3}), uniform({2, 1, 3})},
                "the other dimensions must match"),
        invalid(K::Concatenate, "Concatenate batch axis", {{"axis", ai(0)}},
                {uniform({2, 3}), uniform({2, 3})}, "the batch axis cannot be concatenated"),
        invalid(K::Concatenate, "Concatenate axis out of range", {{"axis", ai(3)}},
                {uniform({2, 3, 2}), uniform({2, 3, 2})}, "axis 3 is invalid"),
        invalid(K::Concatenate, "Concatenate one input", {}, {uniform({2, 3})},
                "takes at least 2 input(s) but has 1"),

        // ---- Add ----
        valid(K::Add, "Add two", {}, {uniform({2, 3}), uniform({2, 3})}, {2, 3}),
        valid(K::Add, "Add three", {}, {uniform({2, 3, 4}), uniform({2, 3, 4}), uniform({2, 3, 4})},
              {2, 3, 4}),
        valid(K::Add, "Add large three", {}, {uniform({8, 300}), uniform({8, 300}), uniform({8, 300})},
              {8, 300}),
        invalid(K::Add, "Add mismatched shapes", {}, {uniform({2, 3}), uniform({2, 4})},
                "needs inputs of one shape, but input 1 is [N,3] and input 2 is [N,4]"),
        invalid(K::Add, "Add mismatched third", {}, {uniform({2, 3}), uniform({2, 3}), uniform({2, 3, 1})},
                "input 3 is [N,3,1]"),
        invalid(K::Add, "Add one input", {}, {uniform({2, 3})}, "takes at least 2 input(s) but has 1"),

        // ---- Subtract ----
        valid(K::Subtract, "Subtract two", {}, {uniform({2, 3}), uniform({2, 3})}, {2, 3}),
        valid(K::Subtract, "Subtract rank 4 large", {}, {uniform({2, 8, 8, 16}), uniform({2, 8, 8, 16})},
              {2, 8, 8, 16}),
        invalid(K::Subtract, "Subtract three inputs", {}, {uniform({2, 3}), uniform({2, 3}), uniform({2, 3})},
                "takes 2 input(s) but has 3"),
        invalid(K::Subtract, "Subtract mismatched shapes", {}, {uniform({2, 3}), uniform({2, 4})},
                "needs inputs of one shape"),

        // ---- Multiply ----
        valid(K::Multiply, "Multiply two", {}, {uniform({2, 3}), uniform({2, 3})}, {2, 3}),
        valid(K::Multiply, "Multiply three", {}, {uniform({2, 3, 4}), uniform({2, 3, 4}), uniform({2, 3, 4})},
              {2, 3, 4}),
        valid(K::Multiply, "Multiply large three", {},
              {uniform({8, 300}), uniform({8, 300}), uniform({8, 300})}, {8, 300}),
        valid(K::Multiply, "Multiply channel scale NHWC", {}, {uniform({2, 4, 3, 5}), uniform({2, 1, 1, 5})},
              {2, 4, 3, 5}),
        valid(K::Multiply, "Multiply channel vector NHWC", {}, {uniform({2, 3, 4, 5}), uniform({2, 5})},
              {2, 3, 4, 5}),
        valid(K::Multiply, "Multiply vector first", {}, {uniform({2, 5}), uniform({2, 3, 4, 5})}, {2, 3, 4, 5}),
        valid(K::Multiply, "Multiply rank 3 with vector", {}, {uniform({3, 4, 6}), uniform({3, 6})}, {3, 4, 6}),
        valid(K::Multiply, "Multiply mixed three", {},
              {uniform({2, 3, 3, 4}), uniform({2, 4}), uniform({2, 3, 3, 4})}, {2, 3, 3, 4}),
        valid(K::Multiply, "Multiply squeeze-excite large", {}, {uniform({4, 8, 8, 32}), uniform({4, 1, 1, 32})},
              {4, 8, 8, 32}),
        invalid(K::Multiply, "Multiply mismatched shapes", {}, {uniform({2, 3, 2}), uniform({2, 2, 3})},
                "needs inputs of one shape"),
        invalid(K::Multiply, "Multiply scale with other channels", {}, {uniform({2, 4, 4, 3}), uniform({2, 1, 1, 2})},
                "input 2 is [N,1,1,2]"),
        invalid(K::Multiply, "Multiply partial broadcast", {}, {uniform({2, 4, 4, 3}), uniform({2, 4, 1, 3})},
                "and the output would be"),
        invalid(K::Multiply, "Multiply one input", {}, {uniform({2, 3})},
                "takes at least 2 input(s) but has 1"),

        // ---- Activations ----
        valid(K::ReLU, "ReLU", {}, {uniform({3, 7})}, {3, 7}),
        valid(K::ReLU, "ReLU rank 4", {}, {uniform({2, 2, 2, 3}, -2, 2)}, {2, 2, 2, 3}),
        valid(K::ReLU, "ReLU large", {}, {distinct({40, 50}, -30, 30)}, {40, 50}),
        invalid(K::ReLU, "ReLU max_value", {{"max_value", af(6.0)}}, {uniform({2, 3})},
                "has no attribute \"max_value\" (it takes none)"),
        invalid(K::ReLU, "ReLU two inputs", {}, {uniform({2, 3}), uniform({2, 3})},
                "takes 1 input(s) but has 2"),

        valid(K::LeakyReLU, "LeakyReLU default", {}, {uniform({3, 7})}, {3, 7}),
        valid(K::LeakyReLU, "LeakyReLU slope 0", {{"negative_slope", af(0.0)}}, {uniform({3, 5})}, {3, 5}),
        valid(K::LeakyReLU, "LeakyReLU slope 0.1 rank 3", {{"negative_slope", af(0.1)}},
              {uniform({2, 3, 4}, -3, 3)}, {2, 3, 4}),
        valid(K::LeakyReLU, "LeakyReLU large", {{"negative_slope", af(0.2)}}, {distinct({40, 50}, -30, 30)},
              {40, 50}),
        invalid(K::LeakyReLU, "LeakyReLU negative slope", {{"negative_slope", af(-0.1)}}, {uniform({2, 3})},
                "must be at least 0, got -0.1"),
        invalid(K::LeakyReLU, "LeakyReLU alpha", {{"alpha", af(0.2)}}, {uniform({2, 3})},
                "has no attribute \"alpha\" (it takes: negative_slope)"),

        valid(K::ReLU6, "ReLU6", {}, {uniform({4, 6}, -8, 8)}, {4, 6}),
        valid(K::ReLU6, "ReLU6 large", {}, {distinct({40, 50}, -30, 30)}, {40, 50}),
        invalid(K::ReLU6, "ReLU6 no input", {}, {}, "takes 1 input(s) but has 0"),

        valid(K::GELU, "GELU exact", {}, {uniform({3, 6}, -3, 3)}, {3, 6}),
        valid(K::GELU, "GELU approximate", {{"approximate", ab(true)}}, {uniform({3, 6}, -3, 3)}, {3, 6}),
        valid(K::GELU, "GELU large", {}, {uniform({40, 50}, -4, 4)}, {40, 50}),
        valid(K::GELU, "GELU large approximate", {{"approximate", ab(true)}}, {uniform({40, 50}, -4, 4)},
              {40, 50}),
        invalid(K::GELU, "GELU string approximate", {{"approximate", as("yes")}}, {uniform({2, 3})},
                "must be true or false"),

        valid(K::Sigmoid, "Sigmoid", {}, {uniform({3, 5}, -4, 4)}, {3, 5}),
        valid(K::Sigmoid, "Sigmoid large", {}, {uniform({40, 50}, -6, 6)}, {40, 50}),
        invalid(K::Sigmoid, "Sigmoid two inputs", {}, {uniform({2, 3}), uniform({2, 3})},
                "takes 1 input(s) but has 2"),

        valid(K::Tanh, "Tanh", {}, {uniform({3, 5}, -3, 3)}, {3, 5}),
        valid(K::Tanh, "Tanh large", {}, {uniform({40, 50}, -3, 3)}, {40, 50}),
        invalid(K::Tanh, "Tanh unknown attribute", {{"axis", ai(-1)}}, {uniform({2, 3})},
                "has no attribute \"axis\""),

        valid(K::Softmax, "Softmax", {}, {uniform({3, 5}, -3, 3)}, {3, 5}),
        valid(K::Softmax, "Softmax rank 3", {}, {uniform({2, 3, 4}, -3, 3)}, {2, 3, 4}),
        valid(K::Softmax, "Softmax axis 1 rank 2", {{"axis", ai(1)}}, {uniform({4, 3}, -3, 3)}, {4, 3}),
        valid(K::Softmax, "Softmax large", {}, {uniform({64, 33}, -4, 4)}, {64, 33}),
        invalid(K::Softmax, "Softmax axis 1 rank 3", {{"axis", ai(1)}}, {uniform({2, 3, 4})},
                "supports only the last axis (axis -1), got axis 1"),
        invalid(K::Softmax, "Softmax axis -2", {{"axis", ai(-2)}}, {uniform({2, 3})},
                "supports only the last axis"),
        invalid(K::Softmax, "Softmax rank 1", {}, {uniform({4})},
                "expects a batch and at least one more dimension"),

        valid(K::SiLU, "SiLU", {}, {uniform({3, 5}, -6, 6)}, {3, 5}),
        valid(K::SiLU, "SiLU rank 4 large", {}, {uniform({2, 6, 6, 12}, -8, 8)}, {2, 6, 6, 12}),
        invalid(K::SiLU, "SiLU beta", {{"beta", af(1.0)}}, {uniform({2, 3})}, "has no attribute \"beta\""),

        valid(K::HardSigmoid, "HardSigmoid", {}, {uniform({4, 6}, -5, 5)}, {4, 6}),
        valid(K::HardSigmoid, "HardSigmoid large", {}, {distinct({40, 50}, -30, 30)}, {40, 50}),
        invalid(K::HardSigmoid, "HardSigmoid two inputs", {}, {uniform({2, 3}), uniform({2, 3})},
                "takes 1 input(s) but has 2"),

        valid(K::HardSwish, "HardSwish", {}, {uniform({4, 6}, -5, 5)}, {4, 6}),
        valid(K::HardSwish, "HardSwish rank 4 large", {}, {distinct({2, 10, 10, 10}, -30, 30)}, {2, 10, 10, 10}),
        invalid(K::HardSwish, "HardSwish no input", {}, {}, "takes 1 input(s) but has 0"),

        valid(K::Clip, "Clip default", {}, {uniform({4, 6}, -2, 2)}, {4, 6}),
        valid(K::Clip, "Clip 0..6 rank 4", {{"min", af(0.0)}, {"max", af(6.0)}}, {uniform({2, 3, 3, 4}, -8, 8)},
              {2, 3, 3, 4}),
        valid(K::Clip, "Clip asymmetric large", {{"min", af(-0.6)}, {"max", af(2.4)}}, {distinct({40, 50}, -30, 30)},
              {40, 50}),
        invalid(K::Clip, "Clip min above max", {{"min", af(2.0)}, {"max", af(1.0)}}, {uniform({2, 3})},
                "needs min < max"),
        invalid(K::Clip, "Clip equal bounds", {{"min", af(1.0)}, {"max", af(1.0)}}, {uniform({2, 3})},
                "needs min < max"),
        invalid(K::Clip, "Clip string bound", {{"max", as("six")}}, {uniform({2, 3})}, "must be a number"),

        // ---- Embedding ----
        valid(K::Embedding, "Embedding sequences", {{"input_dim", ai(5)}, {"output_dim", ai(3)}},
              {ids({3, 4}, 5)}, {3, 4, 3}),
        valid(K::Embedding, "Embedding single ids", {{"input_dim", ai(4)}, {"output_dim", ai(2)}},
              {ids({6}, 4)}, {6, 2}),
        valid(K::Embedding, "Embedding large", {{"input_dim", ai(50)}, {"output_dim", ai(16)}},
              {ids({16, 20}, 50)}, {16, 20, 16}),
        invalid(K::Embedding, "Embedding without input_dim", {{"output_dim", ai(3)}}, {ids({2, 3}, 4)},
                "needs the attribute \"input_dim\""),
        invalid(K::Embedding, "Embedding zero output_dim", {{"input_dim", ai(4)}, {"output_dim", ai(0)}},
                {ids({2, 3}, 4)}, "must be at least 1, got 0"),

        // ---- Gather: data, and indices per sample or constant ----
        valid(K::Gather, "Gather constant axis 1", {{"indices", al({4, 0, -1, 0})}}, {uniform({2, 5, 3})}, {2, 4, 3}),
        valid(K::Gather, "Gather constant single index", {{"axis", ai(-1)}, {"indices", al({2})}, {"indices_shape", al({})}},
              {uniform({3, 4, 6})}, {3, 4}),
        valid(K::Gather, "Gather constant 2-D indices", {{"axis", ai(2)}, {"indices", al({0, 3, 3, 1, 2, 0})}, {"indices_shape", al({2, 3})}},
              {uniform({2, 3, 4})}, {2, 3, 2, 3}),
        valid(K::Gather, "Gather per sample", {}, {uniform({3, 5, 2}), ids({3, 4}, 5)}, {3, 4, 2}),
        valid(K::Gather, "Gather per sample inner axis", {{"axis", ai(2)}}, {uniform({2, 3, 4, 2}), ids({2, 2, 3}, 4)},
              {2, 3, 2, 3, 2}),
        valid(K::Gather, "Gather per sample large", {}, {uniform({8, 40, 24}), ids({8, 60}, 40)}, {8, 60, 24}),
        invalid(K::Gather, "Gather batch axis", {{"axis", ai(0)}, {"indices", al({0})}}, {uniform({2, 3})},
                "cannot gather along the batch axis"),
        invalid(K::Gather, "Gather axis outside", {{"axis", ai(3)}, {"indices", al({0})}}, {uniform({2, 3, 4})},
                "outside the axes 1..2"),
        invalid(K::Gather, "Gather index outside", {{"indices", al({1, 5})}}, {uniform({2, 5})}, "has index 5, outside [-5, 5)"),
        invalid(K::Gather, "Gather negative index outside", {{"indices", al({-6})}}, {uniform({2, 5})}, "has index -6, outside [-5, 5)"),
        invalid(K::Gather, "Gather without indices", {}, {uniform({2, 5})}, "needs indices"),
        invalid(K::Gather, "Gather two kinds of indices", {{"indices", al({1})}}, {uniform({2, 5}), ids({2, 1}, 5)}, "not from both"),
        invalid(K::Gather, "Gather indices_shape count", {{"indices", al({0, 1, 2})}, {"indices_shape", al({2, 2})}}, {uniform({2, 5})},
                "holding 4 values for 3 indices"),
        invalid(K::Gather, "Gather scalar data", {{"indices", al({0})}}, {uniform({2})}, "at least one more dimension"),

        // ---- MultiHeadAttention: (query, value) ----
        valid(K::MultiHeadAttention, "MultiHeadAttention cross", {{"num_heads", ai(2)}, {"key_dim", ai(3)}},
              {uniform({2, 3, 4}), uniform({2, 5, 4})}, {2, 3, 4}),
        valid(K::MultiHeadAttention, "MultiHeadAttention causal",
              {{"num_heads", ai(3)}, {"key_dim", ai(2)}, {"value_dim", ai(3)}, {"output_dim", ai(5)}, {"use_causal_mask", ab(true)}},
              {uniform({2, 4, 6}), uniform({2, 4, 6})}, {2, 4, 5}),
        valid(K::MultiHeadAttention, "MultiHeadAttention no bias",
              {{"num_heads", ai(1)}, {"key_dim", ai(4)}, {"use_bias", ab(false)}},
              {uniform({3, 2, 3}), uniform({3, 4, 3})}, {3, 2, 3}),
        valid(K::MultiHeadAttention, "MultiHeadAttention larger",
              {{"num_heads", ai(4)}, {"key_dim", ai(4)}, {"value_dim", ai(3)}},
              {uniform({3, 7, 8}), uniform({3, 6, 8})}, {3, 7, 8}),
        valid(K::MultiHeadAttention, "MultiHeadAttention dropout",
              {{"num_heads", ai(2)}, {"key_dim", ai(3)}, {"dropout", af(0.4)}},
              {uniform({2, 4, 4}), uniform({2, 5, 4})}, {2, 4, 4}),
        invalid(K::MultiHeadAttention, "MultiHeadAttention rank 2 query", {{"num_heads", ai(2)}, {"key_dim", ai(3)}},
                {uniform({2, 4}), uniform({2, 5, 4})}, "expects a query of rank 3"),
        invalid(K::MultiHeadAttention, "MultiHeadAttention rank 4 value", {{"num_heads", ai(2)}, {"key_dim", ai(3)}},
                {uniform({2, 3, 4}), uniform({2, 5, 2, 4})}, "expects a value of rank 3"),
        invalid(K::MultiHeadAttention, "MultiHeadAttention feature mismatch",
                {{"num_heads", ai(2)}, {"key_dim", ai(3)}}, {uniform({2, 3, 4}), uniform({2, 5, 6})},
                "needs query and value with the same feature size"),
        invalid(K::MultiHeadAttention, "MultiHeadAttention causal lengths",
                {{"num_heads", ai(2)}, {"key_dim", ai(3)}, {"use_causal_mask", ab(true)}},
                {uniform({2, 3, 4}), uniform({2, 5, 4})}, "use_causal_mask, which needs as many query as value"),
        invalid(K::MultiHeadAttention, "MultiHeadAttention zero heads", {{"num_heads", ai(0)}, {"key_dim", ai(3)}},
                {uniform({2, 3, 4}), uniform({2, 3, 4})}, "must be at least 1, got 0"),
        invalid(K::MultiHeadAttention, "MultiHeadAttention without key_dim", {{"num_heads", ai(2)}},
                {uniform({2, 3, 4}), uniform({2, 3, 4})}, "needs the attribute \"key_dim\""),
        invalid(K::MultiHeadAttention, "MultiHeadAttention one input", {{"num_heads", ai(2)}, {"key_dim", ai(3)}},
                {uniform({2, 3, 4})}, "takes 2 input(s) but has 1"),
        invalid(K::MultiHeadAttention, "MultiHeadAttention dropout 1", {{"num_heads", ai(2)}, {"key_dim", ai(3)}, {"dropout", af(1.0)}}, {uniform({2, 3, 4}), uniform({2, 3, 4})}, "must be at most 0.99"),

        // ---- Losses: (prediction, target) -> mean loss ----
        valid(K::SparseCategoricalCrossentropy, "SparseCategoricalCrossentropy logits",
              {{"from_logits", ab(true)}}, {uniform({4, 5}, -2, 2), labels({4}, 5)}, {1}),
        valid(K::SparseCategoricalCrossentropy, "SparseCategoricalCrossentropy probabilities", {},
              {probabilities({4, 5}), labels({4, 1}, 5)}, {1}),
        valid(K::SparseCategoricalCrossentropy, "SparseCategoricalCrossentropy large logits",
              {{"from_logits", ab(true)}}, {uniform({64, 10}, -3, 3), labels({64}, 10)}, {1}),
        valid(K::SparseCategoricalCrossentropy, "SparseCategoricalCrossentropy large probabilities", {},
              {probabilities({64, 10}), labels({64}, 10)}, {1}),
        invalid(K::SparseCategoricalCrossentropy, "SparseCategoricalCrossentropy one-hot labels", {},
                {probabilities({4, 3}), oneHot({4, 3})},
                "expects integer class labels of shape [N] but got [4,3]"),
        invalid(K::SparseCategoricalCrossentropy, "SparseCategoricalCrossentropy rank 3 predictions", {},
                {uniform({4, 2, 3}), labels({4}, 3)}, "expects predictions of shape [N,classes]"),
        invalid(K::SparseCategoricalCrossentropy, "SparseCategoricalCrossentropy unknown attribute",
                {{"ignore_class", ai(0)}}, {uniform({4, 3}), labels({4}, 3)},
                "has no attribute \"ignore_class\""),

        valid(K::CategoricalCrossentropy, "CategoricalCrossentropy logits", {{"from_logits", ab(true)}},
              {uniform({4, 3}, -2, 2), oneHot({4, 3})}, {1}),
        valid(K::CategoricalCrossentropy, "CategoricalCrossentropy probabilities", {},
              {probabilities({4, 3}), oneHot({4, 3})}, {1}),
        valid(K::CategoricalCrossentropy, "CategoricalCrossentropy logits soft targets",
              {{"from_logits", ab(true)}}, {uniform({3, 4}, -2, 2), probabilities({3, 4})}, {1}),
        valid(K::CategoricalCrossentropy, "CategoricalCrossentropy large logits", {{"from_logits", ab(true)}},
              {uniform({64, 10}, -3, 3), oneHot({64, 10})}, {1}),
        valid(K::CategoricalCrossentropy, "CategoricalCrossentropy large probabilities", {},
              {probabilities({64, 10}), oneHot({64, 10})}, {1}),
        invalid(K::CategoricalCrossentropy, "CategoricalCrossentropy mismatched classes", {},
                {probabilities({4, 3}), oneHot({4, 4})},
                "they must have the same number of values per sample"),
        invalid(K::CategoricalCrossentropy, "CategoricalCrossentropy label smoothing",
                {{"label_smoothing", af(0.1)}}, {probabilities({4, 3}), oneHot({4, 3})},
                "has no attribute \"label_smoothing\""),

        valid(K::BinaryCrossentropy, "BinaryCrossentropy logits", {{"from_logits", ab(true)}},
              {uniform({4, 3}, -3, 3), binary({4, 3})}, {1}),
        valid(K::BinaryCrossentropy, "BinaryCrossentropy logits soft targets", {{"from_logits", ab(true)}},
              {uniform({4, 3}, -3, 3), uniform({4, 3}, 0, 1)}, {1}),
        valid(K::BinaryCrossentropy, "BinaryCrossentropy probabilities rank 3", {},
              {uniform({3, 2, 2}, 0.05, 0.95), binary({3, 4})}, {1}),
        valid(K::BinaryCrossentropy, "BinaryCrossentropy large logits", {{"from_logits", ab(true)}},
              {uniform({64, 8}, -4, 4), binary({64, 8})}, {1}),
        valid(K::BinaryCrossentropy, "BinaryCrossentropy large probabilities", {},
              {uniform({64, 8}, 0.05, 0.95), binary({64, 8})}, {1}),
        invalid(K::BinaryCrossentropy, "BinaryCrossentropy mismatched", {},
                {uniform({4, 3}, 0.1, 0.9), binary({4, 2})}, "has predictions [4,3] but targets [4,2]"),
        invalid(K::BinaryCrossentropy, "BinaryCrossentropy integer from_logits", {{"from_logits", ai(1)}},
                {uniform({4, 3}), binary({4, 3})}, "must be true or false"),

        valid(K::MeanSquaredError, "MeanSquaredError", {}, {uniform({4, 3}), uniform({4, 3})}, {1}),
        valid(K::MeanSquaredError, "MeanSquaredError reshaped targets", {},
              {uniform({3, 2, 2}), uniform({3, 4})}, {1}),
        valid(K::MeanSquaredError, "MeanSquaredError large", {}, {uniform({128, 4}), uniform({128, 4})}, {1}),
        invalid(K::MeanSquaredError, "MeanSquaredError mismatched", {}, {uniform({4, 3}), uniform({4, 4})},
                "must have the same number of values per sample"),
        invalid(K::MeanSquaredError, "MeanSquaredError from_logits", {{"from_logits", ab(true)}},
                {uniform({4, 3}), uniform({4, 3})}, "(it takes none)"),

        valid(K::MeanAbsoluteError, "MeanAbsoluteError", {}, {uniform({4, 3}), uniform({4, 3})}, {1}),
        valid(K::MeanAbsoluteError, "MeanAbsoluteError large", {}, {uniform({64, 4}), uniform({64, 4})}, {1}),
        invalid(K::MeanAbsoluteError, "MeanAbsoluteError mismatched", {}, {uniform({4, 3}), uniform({4, 1})},
                "must have the same number of values per sample"),
        invalid(K::MeanAbsoluteError, "MeanAbsoluteError rank 1 predictions", {},
                {uniform({4}), uniform({4})}, "expects predictions with a batch dimension"),

        // Focal losses (Keras 3 defaults gamma 2, alpha 0.25).
        valid(K::BinaryFocalCrossentropy, "BinaryFocalCrossentropy probabilities", {},
              {uniform({4, 3}, 0.05, 0.95), binary({4, 3})}, {1}),
        valid(K::BinaryFocalCrossentropy, "BinaryFocalCrossentropy logits balanced smoothed",
              {{"from_logits", ab(true)}, {"apply_class_balancing", ab(true)}, {"alpha", af(0.4)}, {"label_smoothing", af(0.1)}},
              {uniform({4, 3}, -3, 3), binary({4, 3})}, {1}),
        valid(K::BinaryFocalCrossentropy, "BinaryFocalCrossentropy logits gamma 0.5 soft targets",
              {{"from_logits", ab(true)}, {"gamma", af(0.5)}}, {uniform({3, 2, 2}, -2, 2), uniform({3, 4}, 0, 1)},
              {1}),
        valid(K::BinaryFocalCrossentropy, "BinaryFocalCrossentropy large logits", {{"from_logits", ab(true)}},
              {uniform({64, 8}, -4, 4), binary({64, 8})}, {1}),
        invalid(K::BinaryFocalCrossentropy, "BinaryFocalCrossentropy mismatched", {},
                {uniform({4, 3}, 0.1, 0.9), binary({4, 2})}, "has predictions [4,3] but targets [4,2]"),
        invalid(K::BinaryFocalCrossentropy, "BinaryFocalCrossentropy negative gamma", {{"gamma", af(-1)}},
                {uniform({4, 3}, 0.1, 0.9), binary({4, 3})}, "gamma"),
        invalid(K::BinaryFocalCrossentropy, "BinaryFocalCrossentropy alpha above 1", {{"alpha", af(1.5)}},
                {uniform({4, 3}, 0.1, 0.9), binary({4, 3})}, "alpha"),

        valid(K::CategoricalFocalCrossentropy, "CategoricalFocalCrossentropy probabilities", {},
              {probabilities({4, 3}), oneHot({4, 3})}, {1}),
        valid(K::CategoricalFocalCrossentropy, "CategoricalFocalCrossentropy logits smoothed",
              {{"from_logits", ab(true)}, {"label_smoothing", af(0.2)}, {"gamma", af(1.5)}, {"alpha", af(0.5)}},
              {uniform({4, 5}, -2, 2), oneHot({4, 5})}, {1}),
        valid(K::CategoricalFocalCrossentropy, "CategoricalFocalCrossentropy logits soft targets",
              {{"from_logits", ab(true)}}, {uniform({3, 4}, -2, 2), probabilities({3, 4})}, {1}),
        valid(K::CategoricalFocalCrossentropy, "CategoricalFocalCrossentropy large logits", {{"from_logits", ab(true)}},
              {uniform({64, 10}, -3, 3), oneHot({64, 10})}, {1}),
        invalid(K::CategoricalFocalCrossentropy, "CategoricalFocalCrossentropy mismatched classes", {},
                {probabilities({4, 3}), oneHot({4, 4})}, "they must have the same number of values per sample"),

        valid(K::SparseCategoricalFocalCrossentropy, "SparseCategoricalFocalCrossentropy logits",
              {{"from_logits", ab(true)}}, {uniform({4, 5}, -2, 2), labels({4}, 5)}, {1}),
        valid(K::SparseCategoricalFocalCrossentropy, "SparseCategoricalFocalCrossentropy probabilities gamma 3",
              {{"gamma", af(3.0)}, {"alpha", af(1.0)}}, {probabilities({4, 5}), labels({4, 1}, 5)}, {1}),
        valid(K::SparseCategoricalFocalCrossentropy, "SparseCategoricalFocalCrossentropy large logits",
              {{"from_logits", ab(true)}}, {uniform({64, 10}, -3, 3), labels({64}, 10)}, {1}),
        invalid(K::SparseCategoricalFocalCrossentropy, "SparseCategoricalFocalCrossentropy one-hot labels", {},
                {probabilities({4, 3}), oneHot({4, 3})}, "expects integer class labels of shape [N] but got [4,3]"),
        invalid(K::SparseCategoricalFocalCrossentropy, "SparseCategoricalFocalCrossentropy label smoothing",
                {{"label_smoothing", af(0.1)}}, {uniform({4, 3}), labels({4}, 3)},
                "has no attribute \"label_smoothing\""),

        // ---- Placeholder ----
        valid(K::Placeholder, "Placeholder known shape",
              {{"onnx_op", as("Erf")}, {"onnx_domain", as("")}, {"onnx_attributes", as("{\"alpha\": 0.5}")}, {"output_shape", al({3, 2})}},
              {uniform({2, 3, 2})}, {2, 3, 2}),
        valid(K::Placeholder, "Placeholder two inputs, new shape", {{"onnx_op", as("Einsum")}, {"output_shape", al({7})}},
              {uniform({2, 3}), uniform({2, 4})}, {2, 7}),
        invalid(K::Placeholder, "Placeholder unknown shape", {{"onnx_op", as("Mystery")}, {"onnx_domain", as("com.example")}},
                {uniform({2, 3})}, "stands for the ONNX operation com.example.Mystery, whose output shape is unknown"),
        invalid(K::Placeholder, "Placeholder without op", {{"output_shape", al({3})}}, {uniform({2, 3})},
                "needs the attribute \"onnx_op\" or \"keras_class\""),
        valid(K::Placeholder, "Placeholder for a Keras layer", {{"keras_class", as("Conv1D")}, {"keras_config", as("{\"filters\": 5}")}, {"output_shape", al({6, 5})}},
              {uniform({2, 6, 4})}, {2, 6, 5}),
        invalid(K::Placeholder, "Placeholder for a Keras layer, unknown shape", {{"keras_class", as("Lambda")}},
                {uniform({2, 3})}, "stands for the Keras layer Lambda, whose output shape is unknown"),
        // ---- Plugin (the example GroupNorm plugin, loaded by the tests from the build) ----
        valid(K::Plugin, "Plugin GroupNorm image",
              {{"plugin_op", as("example.GroupNorm")}, {"groups", ai(3)}}, {uniform({2, 4, 4, 6})}, {2, 4, 4, 6}),
        valid(K::Plugin, "Plugin GroupNorm sequence, epsilon",
              {{"plugin_op", as("example.GroupNorm")}, {"groups", ai(2)}, {"epsilon", af(0.01)}},
              {uniform({3, 5, 4}, -2, 2)}, {3, 5, 4}),
        valid(K::Plugin, "Plugin GroupNorm one group per channel", {{"plugin_op", as("example.GroupNorm")}, {"groups", ai(4)}},
              {uniform({3, 2, 4})}, {3, 2, 4}),
        invalid(K::Plugin, "Plugin GroupNorm groups do not divide", {{"plugin_op", as("example.GroupNorm")}, {"groups", ai(4)}},
                {uniform({2, 3, 6})}, "groups (4) must divide the 6 channels"),
        invalid(K::Plugin, "Plugin GroupNorm epsilon too large", {{"plugin_op", as("example.GroupNorm")}, {"epsilon", af(2.0)}},
                {uniform({2, 4})}, "must be at most 1, got 2"),
        invalid(K::Plugin, "Plugin GroupNorm zero groups", {{"plugin_op", as("example.GroupNorm")}, {"groups", ai(0)}},
                {uniform({2, 4})}, "must be at least 1, got 0"),
        invalid(K::Plugin, "Plugin GroupNorm two inputs", {{"plugin_op", as("example.GroupNorm")}},
                {uniform({2, 4}), uniform({2, 4})}, "takes 1 input(s) but has 2"),
        invalid(K::Plugin, "Plugin GroupNorm unknown attribute", {{"plugin_op", as("example.GroupNorm")}, {"axis", ai(1)}},
                {uniform({2, 4})}, "example.GroupNorm \"n\" has no attribute \"axis\" (it takes: plugin_op, groups, epsilon)"),
        invalid(K::Plugin, "Plugin operation not loaded", {{"plugin_op", as("acme.Missing")}, {"alpha", af(0.5)}},
                {uniform({2, 4})}, "uses the plugin operation acme.Missing, which no loaded plugin provides"),
        invalid(K::Plugin, "Plugin without op", {}, {uniform({2, 4})}, "needs the attribute \"plugin_op\""),
    };
    return cases;
}

}  // namespace kiln::tests::opcases
