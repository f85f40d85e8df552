// SPDX-License-Identifier: Apache-2.0
// NCCL collectives behind exec::Reducer; each call synchronises its stream so the Reducer
// contract (results ready on return) holds.
#include "engine/backends/cuda/nccl_reducer.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>

namespace kiln::engine::cuda {
namespace {

Error ncclError(ncclResult_t r, const char* what) {
    return Error(ErrorCode::DeviceUnavailable, std::string(what) + ": " + ncclGetErrorString(r))
        .with("device", "nccl");
}

class NcclReducer final : public exec::Reducer {
public:
    NcclReducer(DeviceContext& ctx, ncclComm_t comm, int rank, int size)
        : m_ctx(ctx), m_comm(comm), m_rank(rank), m_size(size) {}
    ~NcclReducer() override { ncclCommDestroy(m_comm); }
    int rank() const override { return m_rank; }
    int size() const override { return m_size; }
    Status allReduceSum(float* data, int64_t n) override { return reduce(data, n, ncclFloat32); }
    Status allReduceSum(double* data, int64_t n) override { return reduce(data, n, ncclFloat64); }
    Status broadcast(float* data, int64_t n, int root) override {
        cudaSetDevice(m_ctx.device());
        if (auto r =
                ncclBroadcast(data, data, static_cast<size_t>(n), ncclFloat32, root, m_comm, m_ctx.stream());
            r != ncclSuccess)
            return ncclError(r, "ncclBroadcast");
        return m_ctx.synchronize();
    }

private:
    Status reduce(void* data, int64_t n, ncclDataType_t type) {
        cudaSetDevice(m_ctx.device());
        if (auto r = ncclAllReduce(data, data, static_cast<size_t>(n), type, ncclSum, m_comm, m_ctx.stream());
            r != ncclSuccess)
            return ncclError(r, "ncclAllReduce");
        return m_ctx.synchronize();
    }
    DeviceContext& m_ctx;
    ncclComm_t m_comm;
    int m_rank, m_size;
};

}  // namespace

Result<std::vector<std::unique_ptr<exec::Reducer>>> createNcclGroup(
    const std::vector<DeviceContext*>& devices) {
    std::vector<ncclComm_t> comms(devices.size());
    std::vector<int> ids;
    for (auto* d : devices) ids.push_back(d->device());
    if (auto r = ncclCommInitAll(comms.data(), static_cast<int>(devices.size()), ids.data());
        r != ncclSuccess)
        return ncclError(r, "ncclCommInitAll");
    std::vector<std::unique_ptr<exec::Reducer>> out;
    for (size_t k = 0; k < devices.size(); ++k)
        out.push_back(std::make_unique<NcclReducer>(*devices[k], comms[k], static_cast<int>(k),
                                                    static_cast<int>(devices.size())));
    return out;
}

std::string ncclNewUniqueId() {
    ncclUniqueId id{};
    ncclGetUniqueId(&id);
    return std::string(id.internal, sizeof id.internal);
}

Result<std::unique_ptr<exec::Reducer>> createNcclReducer(DeviceContext& device, int rank, int size,
                                                         const std::string& uniqueId) {
    ncclUniqueId id{};
    if (uniqueId.size() != sizeof id.internal)
        return Error(ErrorCode::InvalidArgument, "the NCCL id has the wrong size").with("device", "nccl");
    std::memcpy(id.internal, uniqueId.data(), sizeof id.internal);
    cudaSetDevice(device.device());
    ncclComm_t comm = nullptr;
    if (auto r = ncclCommInitRank(&comm, size, id, rank); r != ncclSuccess)
        return ncclError(r, "ncclCommInitRank");
    return std::unique_ptr<exec::Reducer>(new NcclReducer(device, comm, rank, size));
}

int ncclUniqueIdBytes() {
    return NCCL_UNIQUE_ID_BYTES;
}

int ncclRuntimeVersion() {
    int v = 0;
    ncclGetVersion(&v);
    return v;
}

}  // namespace kiln::engine::cuda
