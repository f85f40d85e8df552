// SPDX-License-Identifier: Apache-2.0
// A Reducer over NCCL for data parallel across GPUs: one communicator rank per device, all-reduce
// and broadcast on the device's compute stream. Data pointers are device pointers. Built only
// when NCCL is found (KILN_HAVE_NCCL).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/backends/cuda/device_context.h"
#include "engine/exec/reducer.h"

namespace kiln::engine::cuda {

// One reducer per context, all in this process (ncclCommInitAll): single-node multi-GPU.
Result<std::vector<std::unique_ptr<exec::Reducer>>> createNcclGroup(
    const std::vector<DeviceContext*>& devices);

// Multi-process (mpirun): rank 0 makes the id, every rank receives its bytes (e.g. through
// MPI_Bcast) and joins with its own device.
std::string ncclNewUniqueId();
int ncclUniqueIdBytes();  // the size of that id (NCCL_UNIQUE_ID_BYTES)
Result<std::unique_ptr<exec::Reducer>> createNcclReducer(DeviceContext& device, int rank, int size,
                                                         const std::string& uniqueId);

int ncclRuntimeVersion();  // e.g. 22809

}  // namespace kiln::engine::cuda
