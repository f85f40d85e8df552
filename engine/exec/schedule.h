// SPDX-License-Identifier: Apache-2.0
// The device-independent schedule of a compiled model, shared by every plan compiler (exec::Plan
// on the CPU, cuda::CudaPlan on a GPU): the steps in execution order, alias roots, which nodes need
// gradients, the loss steps, every buffer with its liveness interval (the input of arena
// placement), and for each gradient buffer the step that writes it first. A plan binds its own
// kernels, reports their traits here, and turns the schedule into kernel calls and arena offsets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/exec/param_store.h"
#include "engine/exec/plan.h"
#include "engine/exec/planning.h"
#include "engine/graph/graph.h"
#include "engine/ops/model.h"

namespace kiln::engine::exec {

// What a node's kernel on some device tells the schedule.
struct KernelTraits {
    bool aliasesInput = false;         // the output is input 0's buffer (Flatten, Reshape)
    size_t savedBytes = 0;             // state kept from forward to backward
    bool backwardNeedsInputs = true;   // backward reads the input values
    bool backwardNeedsOutput = false;  // backward reads the output value
    // Backward can overwrite an input gradient it writes first (ScheduleStep::overwrite) instead
    // of having it zeroed and adding to it.
    bool overwritesInputGrads = false;
    // With aliasesInput: the input whose buffers the output shares (a folded Add aliases the
    // node it was folded into, whichever port that is).
    int aliasInput = 0;
    // A node whose value the kernel also reads (an extra last entry of the forward step's `in`)
    // and whose gradient its backward step writes (an extra last entry of `dIn`): the residual of
    // an Add folded into this node (residualFusionCandidates), or -1.
    int extraInput = -1;
};

// ReLU nodes that may be folded into the node producing their input, per node: that producer's
// index, or -1. A ReLU qualifies when its producer is an op that can apply a ReLU itself
// (BatchNormalization, Add), and nothing else reads the producer's value: it has no other
// consumer and is neither a model output nor read by a loss (`lossOutputs`). Folding is up to
// the plan: the producer's kernel applies the ReLU, and the ReLU node aliases its buffers
// (KernelTraits::aliasesInput), so it has no steps of its own.
std::vector<int> reluFusionCandidates(const ops::ModelInfo& model, const std::vector<int>& lossOutputs);

// Add nodes that may be folded into the BatchNormalization producing one of their two inputs, per
// node: the port of that input, or -1. It qualifies when nothing else reads the batch norm's value
// (as for ReLUs above) and the other input is a different node that comes earlier in model order
// (of two batch norms, the later one takes the Add). Folding is up to the plan: the
// batch norm's kernel adds the other input (KernelTraits::extraInput) and passes its gradient
// on, and the Add aliases the batch norm (KernelTraits::aliasInput), so it has no steps.
std::vector<int> residualFusionCandidates(const ops::ModelInfo& model, const std::vector<int>& lossOutputs);

// For inference plans: BatchNormalization nodes that may be folded into the Conv2D producing their
// input, per node: that convolution, or -1. It qualifies when nothing else reads the
// convolution's value. Folding is up to the plan: the convolution's kernel scales its weights by
// the batch norm's parameters (CpuKernel::fuseBatchNorm) and the batch norm aliases it.
std::vector<int> batchNormFoldCandidates(const ops::ModelInfo& model, const std::vector<int>& lossOutputs);

// A loss resolved against the model: the op, its attributes with defaults, and the concrete
// shapes of what it reads (the model output [batch, ...] and the target [batch, ...]).
struct ResolvedLoss {
    const ops::OpDef* def = nullptr;
    int output = -1;  // the model node the loss reads
    Node node;        // "loss:<output>", the op and the attributes as given
    AttrMap attrs;
    std::vector<Shape> inputs;
    float weight = 1.0f;
    // For the op's kernel factories; valid while this object lives.
    ops::ShapeContext context() const { return {node, attrs, inputs}; }
};

// Checks the losses against the model (output node, loss op, shapes); errors name the field.
Result<std::vector<ResolvedLoss>> resolveLosses(const ops::ModelInfo& model,
                                                const std::vector<LossSpec>& losses, int64_t batch);

enum class StepKind { Forward, Loss, Backward };
enum class BufferKind { Value, Saved, Gradient, Workspace, Target };

// One step. Buffer fields are indices into Schedule::buffers, -1 for none.
struct ScheduleStep {
    StepKind kind = StepKind::Forward;
    int node = -1;         // the model node; for a loss step, the output node the loss reads
    int loss = -1;         // loss steps: index into Schedule::losses
    int position = 0;      // on the StepTimeline
    std::vector<int> in;   // the node's input values; loss steps: the output value and the target
    int out = -1;          // the node's value (forward and backward steps)
    int saved = -1;        // state kept from forward to backward
    int dOut = -1;         // backward steps: the gradient of the node's value
    std::vector<int> dIn;  // gradients the step accumulates into, per input (-1: not needed)
    // Per entry of dIn: 1 where this step writes that gradient first and its kernel overwrites
    // it (KernelTraits::overwritesInputGrads), so it needs no zeroing.
    std::vector<uint8_t> overwrite;
    // The other gradient buffers whose first write is this step (Schedule::firstWrite): the step's
    // kernel accumulates into them, so a plan zeroes them when the step starts.
    std::vector<int> zeroFirst;
    uint64_t seed = 0;  // dropout masks (forward and backward steps of a node share it)
};

struct ScheduleOptions {
    int64_t batch = 32;
    bool training = true;  // false: no backward steps, no gradient buffers
    uint64_t seed = 0;
    // A scratch buffer every step may use, live through the whole step list, placed in the arena
    // (the CPU plan); none when unset (the CUDA plan keeps its kernel workspace outside the arena).
    std::optional<size_t> workspaceBytes;
    // Gradient probes (explanations) in an inference schedule: backward steps run from gradients
    // the caller writes at the `seeds` nodes (alive through the whole timeline) down to the Input
    // nodes, for input gradients only (no step exists just for a parameter gradient). The values
    // and gradients of the `keep` nodes live to the end, so they can be read after backward.
    bool probe = false;
    std::vector<int> seeds;
    std::vector<int> keep;
};

struct Schedule {
    // `traits` per model node (indexed like model.nodes); `losses` from resolveLosses.
    static Schedule build(const ops::ModelInfo& model, const ParamStore& params,
                          std::vector<KernelTraits> traits, std::vector<ResolvedLoss> losses,
                          const ScheduleOptions& options);

    int64_t batch = 0;
    bool training = false;
    std::vector<KernelTraits> traits;  // per node
    std::vector<int> root;             // per node: the node whose buffers it uses (itself unless it aliases)
    GradientNeeds needs;
    std::vector<ResolvedLoss> losses;

    // Forward steps in model order, then the loss steps, then the backward steps in reverse order.
    std::vector<ScheduleStep> steps;
    size_t forwardSteps = 0, lossSteps = 0, backwardSteps = 0;

    // Every buffer (bytes and liveness interval on the StepTimeline) with its kind; placement
    // (place()) fills in the offsets.
    std::vector<LiveBuffer> buffers;
    std::vector<BufferKind> kinds;
    std::vector<int> value, saved, gradient;  // per node (aliases share their root's), -1: none
    std::vector<int> target;                  // per loss
    int workspace = -1;
    // Per buffer: the index in `steps` of the step that writes it first; -1 for buffers that are
    // not gradients or that no step writes.
    std::vector<int> firstWrite;

    // Places the buffers at `alignBytes` (placeBuffers) and returns the arena's size.
    size_t place(size_t alignBytes);
    // What one buffer each, at `alignBytes`, would take.
    size_t unplannedBytes(size_t alignBytes) const;
};

}  // namespace kiln::engine::exec
