// SPDX-License-Identifier: Apache-2.0
// Writing the small files that data tests build their folders from.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace kiln::test {

// Writes `bytes` to `path`, creating the folders above it.
inline void writeBytes(const std::filesystem::path& path, const std::vector<unsigned char>& bytes) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// Writes `text` to `path` as it is (no newline translation), creating the folders above it.
inline void writeText(const std::filesystem::path& path, const std::string& text) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream f(path, std::ios::binary);
    f << text;
}

}  // namespace kiln::test
