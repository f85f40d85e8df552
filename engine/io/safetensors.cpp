// SPDX-License-Identifier: Apache-2.0
// safetensors reader and writer.
#include "engine/io/safetensors.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/core/json_checked.h"

#include "engine/io/project.h"

namespace kiln::engine::io {
namespace {
using nlohmann::json;
constexpr uint64_t kMaxHeader = 100ull << 20;

Error fileError(const std::string& path, const std::string& tensor, const std::string& why) {
    Error e(ErrorCode::WeightsMismatch, (tensor.empty() ? std::string() : "tensor \"" + tensor + "\": ") + why);
    e.withFile(path).with("tensor", tensor).with("reason", why);
    return e;
}
}  // namespace

const Tensor* SafetensorsFile::find(const std::string& name) const {
    for (const auto& t : tensors)
        if (t.name == name) return &t.tensor;
    return nullptr;
}

Status saveSafetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                       const std::map<std::string, std::string>& metadata) {
    json header = json::object();
    if (!metadata.empty()) header["__metadata__"] = metadata;
    uint64_t offset = 0;
    for (const auto& t : tensors) {
        uint64_t bytes = t.tensor.bytes();
        header[t.name] = {{"dtype", std::string(dtypeName(t.tensor.dtype()))},
                          {"shape", t.tensor.shape().dims()},
                          {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
    }
    std::string h = header.dump();
    while ((h.size() + 8) % 8 != 0) h += ' ';  // keep the data 8-byte aligned
    std::string out;
    out.reserve(8 + h.size() + offset);
    uint64_t len = h.size();
    for (int i = 0; i < 8; ++i) out += static_cast<char>((len >> (8 * i)) & 0xff);
    out += h;
    for (const auto& t : tensors) out.append(static_cast<const char*>(t.tensor.raw()), t.tensor.bytes());
    return writeFileAtomic(path, out);
}

Result<SafetensorsFile> loadSafetensors(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return Error(ErrorCode::FileNotFound, "the weights file cannot be opened").withFile(path).with("path", path);
    std::stringstream ss;
    ss << in.rdbuf();
    return parseSafetensors(ss.str(), path);
}

Result<SafetensorsFile> parseSafetensors(std::string_view bytes, const std::string& path) {
    if (bytes.size() < 8) return fileError(path, "", "the file is too short to be safetensors");
    uint64_t len = 0;
    for (int i = 0; i < 8; ++i) len |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[static_cast<size_t>(i)])) << (8 * i);
    if (len > kMaxHeader || 8 + len > bytes.size()) return fileError(path, "", "the header length is invalid");
    JsonLimits limits;
    limits.maxBytes = kMaxHeader;
    limits.maxDepth = 16;  // {name: {dtype, shape: [...], data_offsets: [...]}} and __metadata__
    auto parsed = parseJsonChecked(bytes.substr(8, len), limits, path);
    if (!parsed) return fileError(path, "", "the header is not valid JSON: " + parsed.error().message);
    json header = std::move(parsed.value());
    if (!header.is_object()) return fileError(path, "", "the header is not a JSON object");
    const uint64_t dataSize = bytes.size() - 8 - len;
    const char* data = bytes.data() + 8 + len;
    SafetensorsFile file;
    struct Range {
        uint64_t begin, end;
        std::string name;
        bool operator<(const Range& o) const { return begin < o.begin || (begin == o.begin && end < o.end); }
    };
    std::vector<Range> ranges;
    for (auto& [name, entry] : header.items()) {
        if (name == "__metadata__") {
            if (entry.is_object())
                for (auto& [k, v] : entry.items())
                    if (v.is_string()) file.metadata[k] = v.get<std::string>();
            continue;
        }
        if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") || !entry.contains("data_offsets"))
            return fileError(path, name, "entry lacks dtype, shape or data_offsets");
        auto dt = entry["dtype"].is_string() ? dtypeFromName(entry["dtype"].get<std::string>()) : std::nullopt;
        if (!dt) return fileError(path, name, "unsupported dtype " + entry["dtype"].dump());
        if (!entry["shape"].is_array()) return fileError(path, name, "shape is not a list");
        std::vector<int64_t> dims;
        uint64_t elements = 1;
        for (const auto& d : entry["shape"]) {
            if (!d.is_number_integer() || d.get<int64_t>() < 0) return fileError(path, name, "invalid shape");
            auto dim = static_cast<uint64_t>(d.get<int64_t>());
            if (dim != 0 && elements > dataSize / dim) return fileError(path, name, "shape is larger than the file");
            elements *= dim;
            dims.push_back(d.get<int64_t>());
        }
        const auto& off = entry["data_offsets"];
        if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
            return fileError(path, name, "invalid data_offsets");
        uint64_t b = off[0].get<uint64_t>(), e = off[1].get<uint64_t>();
        Shape shape(dims);
        uint64_t expect = static_cast<uint64_t>(shape.numel()) * dtypeSize(*dt);
        if (e < b || e > dataSize) return fileError(path, name, "data_offsets point outside the file");
        if (e - b != expect)
            return fileError(path, name, "holds " + std::to_string(e - b) + " bytes but shape " + shape.toString() +
                                             " needs " + std::to_string(expect));
        ranges.push_back({b, e, name});
        Tensor t(shape, *dt);
        std::memcpy(t.raw(), data + b, expect);
        file.tensors.push_back({name, std::move(t)});
    }
    std::sort(ranges.begin(), ranges.end());
    for (size_t i = 1; i < ranges.size(); ++i)
        if (ranges[i].begin < ranges[i - 1].end)
            return fileError(path, ranges[i].name, "its data overlaps tensor \"" + ranges[i - 1].name + "\"");
    return file;
}

}  // namespace kiln::engine::io
