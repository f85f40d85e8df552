// SPDX-License-Identifier: Apache-2.0
// What the machine offers Kiln for GPU training: driver and library versions, devices with their
// free memory. Every query degrades gracefully (zeros, an empty list) without a driver or GPU.
// Front ends read it through engine/api/devices.h.
#pragma once

#include "engine/core/device.h"

namespace kiln::engine::cuda {

GpuSystemInfo systemInfo();

}  // namespace kiln::engine::cuda
