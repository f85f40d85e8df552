// SPDX-License-Identifier: Apache-2.0
// The CUDA op table: one optional row per OpKind (a kernel factory and supports()), and the
// placement of a model: every node whose op has a row that supports its configuration runs on
// the GPU; the others run on the CPU with copies inserted, and the placement lists them.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/backends/cuda/device_context.h"
#include "engine/core/precision.h"
#include "engine/ops/model.h"
#include "engine/ops/op_table.h"

namespace kiln::engine::cuda {

// What a CUDA kernel sees in one call: device pointers owned by the plan (fp32 unless stated).
struct CudaIo {
    DeviceContext* ctx = nullptr;
    std::span<const float* const> in;
    float* out = nullptr;  // losses: one device float receiving the mean loss
    std::span<float* const> params;
    const float* dOut = nullptr;
    std::span<float* const> dIn;      // ACCUMULATE (null: not needed)
    std::span<float* const> dParams;  // ACCUMULATE (null: frozen)
    std::byte* saved = nullptr;       // savedBytes(), kept from forward to backward
    std::byte* workspace = nullptr;   // workspaceBytes(), scratch within one call
    bool training = false;
    uint64_t seed = 0, step = 0;
    float gradScale = 1.0f;     // losses: multiplies the gradient (loss weight x loss scale)
    double* lossAcc = nullptr;  // losses: one device double of scratch
    int* badLabel = nullptr;    // sparse losses: device flag, 1 + bad sample
};

class CudaKernel {
public:
    virtual ~CudaKernel() = default;
    virtual size_t workspaceBytes() const { return 0; }
    virtual size_t savedBytes() const { return 0; }
    virtual bool backwardNeedsInputs() const { return true; }
    virtual bool backwardNeedsOutput() const { return false; }
    virtual bool aliasesInput() const { return false; }
    virtual Status forward(const CudaIo& io) = 0;
    virtual Status backward(const CudaIo& io) = 0;
};

struct CudaBuildOptions {
    DeviceContext* ctx = nullptr;
    Precision precision = Precision::Fp32;  // matrix inputs of Dense/Conv2D forward
    bool tf32 = true;
};

using CudaSupports = bool (*)(const ops::ShapeContext&, const Shape& output);
using CudaFactory = Result<std::unique_ptr<CudaKernel>> (*)(const ops::ShapeContext&, const Shape& output,
                                                            const CudaBuildOptions&);
struct CudaOpRow {
    ops::OpKind kind;
    CudaSupports supports;  // configuration check (null: always)
    CudaFactory make;
};

// Rows in OpKind order; an empty optional means the op always runs on the CPU.
const std::array<std::optional<CudaOpRow>, ops::kOpKindCount>& cudaOpTable();
// True when `kind` has a row and the row accepts this configuration.
bool cudaSupports(ops::OpKind kind, const ops::ShapeContext& ctx, const Shape& output);

struct Placement {
    std::vector<char> onGpu;  // per node index (Input nodes count as on the GPU: fed there)
    struct Copy {
        std::string node;      // the CPU node
        std::string producer;  // whose value crosses
        bool toHost = true;    // device -> host (an input of a CPU node) or back
        int64_t floatsPerSample = 0;
    };
    std::vector<std::string> cpuNodes;  // "name (Op)" of each node placed on the CPU
    std::vector<Copy> copies;
    // A short text for logs and kiln-train: counts, the CPU nodes and the copies.
    std::string report() const;
};
// Pure: needs no GPU. Losses always have rows.
Placement placeModel(const ops::ModelInfo& model);

}  // namespace kiln::engine::cuda
