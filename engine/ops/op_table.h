// SPDX-License-Identifier: Apache-2.0
// The op table: one row per OpKind with the file name, arity, typed attribute specs, the
// parameter rule, the shape rule and the CPU kernel factory. Adding an op = one enum value, one
// row (checked at compile time for count and order) and the family file that implements it.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/error.h"
#include "engine/core/shape.h"
#include "engine/core/thread_pool.h"
#include "engine/graph/attr.h"
#include "engine/graph/graph.h"

namespace kiln::engine::ops {

enum class OpKind : uint8_t {
    Input,
    Dense,
    Conv2D,
    DepthwiseConv2D,
    MaxPooling2D,
    AveragePooling2D,
    GlobalAveragePooling2D,
    GlobalMaxPooling2D,
    GlobalAveragePooling1D,
    ZeroPadding2D,
    UpSampling2D,
    BatchNormalization,
    LayerNormalization,
    Normalization,
    Dropout,
    Flatten,
    Reshape,
    Rescaling,
    Concatenate,
    Add,
    Subtract,
    Multiply,
    ReLU,
    LeakyReLU,
    ReLU6,
    GELU,
    Sigmoid,
    Tanh,
    Softmax,
    SiLU,
    HardSigmoid,
    HardSwish,
    Clip,
    Embedding,
    Gather,
    MultiHeadAttention,
    SparseCategoricalCrossentropy,
    CategoricalCrossentropy,
    BinaryCrossentropy,
    MeanSquaredError,
    MeanAbsoluteError,
    BinaryFocalCrossentropy,
    CategoricalFocalCrossentropy,
    SparseCategoricalFocalCrossentropy,
    Placeholder,
    Plugin,
};
constexpr int kOpKindCount = 46;

enum class Category { Input, Core, Convolution, Pooling, Normalization, Regularization, Merge, Activation, Loss, Plugin };
const char* categoryName(Category c);

enum class Init { Zeros, Ones, GlorotUniform, HeUniform, Uniform005 };

struct ParamSpec {
    std::string name;  // "kernel", "bias", "gamma", "beta", "moving_mean", "moving_variance", "embeddings"
    Shape shape;
    Init init = Init::Zeros;
    bool trainable = true;  // false for moving statistics: updated by the forward pass, never by the optimizer
};

// What a kernel sees in one call. Pointers are float32 host buffers owned by the plan.
struct KernelIo {
    std::span<const float* const> in;   // inputs, in port order
    float* out = nullptr;               // the output
    std::span<float* const> params;     // parameter values, in ParamSpec order
    // Backward only: the output gradient, and where to ACCUMULATE input/parameter gradients
    // (null where none is needed: frozen parameter, or an input that needs no gradient).
    const float* dOut = nullptr;
    std::span<float* const> dIn;
    // Per input: 1 where this step writes the input's gradient first, so the kernel OVERWRITES it
    // (=) instead of accumulating; only set for kernels whose overwritesInputGrads() is true, and
    // empty otherwise.
    std::span<const uint8_t> dInOverwrite;
    std::span<float* const> dParams;
    float* saved = nullptr;      // per-node state kept from forward to backward (savedFloats())
    float* workspace = nullptr;  // scratch shared by all steps (workspaceFloats())
    bool training = false;
    uint64_t seed = 0;           // per-node RNG seed (dropout)
    uint64_t step = 0;           // training step, the RNG stream for dropout
    ThreadPool* pool = nullptr;
    // Loss ops: the loss value written to out[0]; gradScale multiplies d(loss)/d(prediction).
    float gradScale = 1.0f;
};

// A CPU kernel bound to concrete shapes at plan time.
class CpuKernel {
public:
    virtual ~CpuKernel() = default;
    virtual size_t workspaceFloats() const { return 0; }
    virtual size_t savedFloats() const { return 0; }
    // Which forward values backward() reads; the memory planner keeps them alive until then.
    virtual bool backwardNeedsInputs() const { return true; }
    virtual bool backwardNeedsOutput() const { return false; }
    // Output aliases input 0 (reshape-like): no copy, no own buffer.
    virtual bool aliasesInput() const { return false; }
    // The kernel honours KernelIo::dInOverwrite: where the schedule says a step writes an input
    // gradient first, the kernel writes it instead of the plan zeroing it and the kernel adding.
    virtual bool overwritesInputGrads() const { return false; }
    // Asks the kernel to apply a following ReLU itself: forward writes max(value, 0), backward
    // counts the output gradient only where the output is positive (reading the output). Returns
    // false when the kernel cannot; the plan then keeps the ReLU as its own step.
    virtual bool fuseRelu() { return false; }
    // Asks the kernel to take in a following Add(this, residual): forward adds KernelIo::in[1]
    // (same shape as the output) before any folded ReLU; backward passes the output gradient,
    // masked by a folded ReLU, to KernelIo::dIn[1] (honouring dInOverwrite[1]; it may be the same
    // buffer as dIn[0]). Returns false when the kernel cannot; the Add then keeps its own step.
    virtual bool fuseResidual() { return false; }
    // Inference plans only: asks the kernel to take in a following BatchNormalization in
    // inference mode. Its forward then receives that layer's gamma, beta, moving mean and moving
    // variance after its own parameters (KernelIo::params) and computes y * s + beta - mean * s,
    // s = gamma / sqrt(variance + epsilon), by scaling its weights and bias. Returns false when it
    // cannot; the batch norm then keeps its own step.
    virtual bool fuseBatchNorm(float epsilon) {
        (void)epsilon;
        return false;
    }
    virtual Status forward(const KernelIo& io) = 0;
    virtual Status backward(const KernelIo& io) = 0;
};

struct ShapeContext {
    const Node& node;
    const AttrMap& attrs;  // with defaults filled in
    std::span<const Shape> inputs;
};

using ShapeRule = Result<Shape> (*)(const ShapeContext&);
using ParamRule = std::vector<ParamSpec> (*)(const ShapeContext&, const Shape& output);
// Multiply-accumulates per sample (forward), for the summary.
using MacRule = int64_t (*)(const ShapeContext&, const Shape& output);
using KernelFactory = Result<std::unique_ptr<CpuKernel>> (*)(const ShapeContext&, const Shape& output);

struct OpDef {
    OpKind kind;
    std::string_view name;  // stable file name, Keras class name
    Category category;
    int minInputs;
    int maxInputs;          // -1: any number
    std::vector<AttrSpec> attrs;
    ShapeRule shape;
    ParamRule params;       // null: no parameters
    MacRule macs;           // null: 0
    KernelFactory cpu;
    std::string_view doc;   // one line
};

const std::array<OpDef, kOpKindCount>& opTable();
const OpDef& opDef(OpKind kind);
const OpDef* findOp(std::string_view name);

bool isLoss(OpKind kind);

// Validates a node's attributes against its op's specs: unknown attributes, types, ranges;
// returns the full map with defaults filled in. A Plugin node is checked against its plugin
// operation's schema (plugin_ops.h).
Result<AttrMap> resolveAttrs(const OpDef& def, const Node& node);
// The same against an explicit spec list; `opName` names the op in messages.
Result<AttrMap> resolveAttrsWith(std::string_view opName, const std::vector<AttrSpec>& specs, const Node& node);

// Family registration functions (one per family file) return their rows; op_table.cpp puts them
// in enum order and checks the order at start-up.
std::vector<OpDef> coreOps();         // Input, Dense, Dropout, Flatten, Reshape, Embedding, Gather
std::vector<OpDef> convOps();         // Conv2D, DepthwiseConv2D and pooling (GlobalAveragePooling1D too)
std::vector<OpDef> imageOps();        // ZeroPadding2D, UpSampling2D, Rescaling
std::vector<OpDef> normOps();         // BatchNormalization, LayerNormalization, Normalization
std::vector<OpDef> mergeOps();        // Concatenate, Add, Subtract, Multiply
std::vector<OpDef> activationOps();   // ReLU ... Softmax, SiLU, HardSigmoid, HardSwish, Clip
std::vector<OpDef> attentionOps();    // MultiHeadAttention
std::vector<OpDef> lossOps();         // the losses
std::vector<OpDef> placeholderOps();  // Placeholder (imported operations Kiln cannot compute)
std::vector<OpDef> pluginOps();       // Plugin (operations from plugin libraries)

// Shape-rule helpers shared by the families.
Error shapeError(const ShapeContext& c, const std::string& why);
std::string opLabel(const ShapeContext& c);  // `Dense "fc1"`

}  // namespace kiln::engine::ops
