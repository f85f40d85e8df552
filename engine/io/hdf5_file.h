// SPDX-License-Identifier: Apache-2.0
// Read-only access to HDF5 files (Keras weights and legacy .h5 models) through the HDF5 C library:
// groups, string attributes and float datasets. Errors name the file and the HDF5 path.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/error.h"

namespace kiln::engine::io {

struct Hdf5Array {
    std::vector<int64_t> dims;
    std::vector<float> values;  // converted to float32 by HDF5 (from float16/64 or integers)
};

class Hdf5File {
public:
    // `file` names the file in errors; the image variant reads an HDF5 file held in memory (the
    // weights inside a .keras zip) without writing it to disk.
    static Result<Hdf5File> open(const std::string& path);
    static Result<Hdf5File> openImage(std::string bytes, const std::string& file);
    static bool hasSignature(std::string_view firstBytes);

    Hdf5File(Hdf5File&&) noexcept;
    Hdf5File& operator=(Hdf5File&&) noexcept;
    ~Hdf5File();

    const std::string& file() const { return m_file; }
    bool isGroup(const std::string& path) const;
    bool isDataset(const std::string& path) const;
    // Names of the members of a group, in the file's (alphabetical) order.
    Result<std::vector<std::string>> children(const std::string& group) const;
    bool hasAttribute(const std::string& object, const std::string& name) const;
    // A string attribute (fixed or variable length), or a list of strings for a string array.
    Result<std::string> stringAttribute(const std::string& object, const std::string& name) const;
    Result<std::vector<std::string>> stringListAttribute(const std::string& object, const std::string& name) const;
    // A numeric dataset as float32; larger than `maxElements` is an error.
    Result<Hdf5Array> readFloats(const std::string& path, int64_t maxElements) const;

    // An error about `path` in this file.
    Error error(ErrorCode code, const std::string& path, const std::string& what) const;

private:
    Hdf5File() = default;
    struct State;
    std::unique_ptr<State> m_state;
    std::string m_file;
};

}  // namespace kiln::engine::io
