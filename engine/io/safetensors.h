// SPDX-License-Identifier: Apache-2.0
// safetensors files: an 8-byte little-endian header length, a JSON header naming each tensor's
// dtype, shape and byte range, then the raw little-endian data.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/tensor.h"

namespace kiln::engine::io {

struct NamedTensor {
    std::string name;
    Tensor tensor;
};

// Writes atomically; tensors are stored in the given order.
Status saveSafetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

struct SafetensorsFile {
    std::vector<NamedTensor> tensors;  // sorted by name
    std::map<std::string, std::string> metadata;
    const Tensor* find(const std::string& name) const;
};

// Reads and validates (header size, JSON, dtypes, shapes against byte ranges, ranges inside the
// file and not overlapping). Errors name the file and the tensor.
Result<SafetensorsFile> loadSafetensors(const std::string& path);
// The same checks on the bytes of a file already in memory; `path` names it in errors.
Result<SafetensorsFile> parseSafetensors(std::string_view bytes, const std::string& path);

}  // namespace kiln::engine::io
