// SPDX-License-Identifier: Apache-2.0
// tf.train.Example (Features → map of Feature: BytesList, FloatList, Int64List) encoded and
// decoded directly on the protobuf wire format, tolerant of packed and unpacked lists.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/error.h"

namespace kiln::engine::data {

struct Feature {
    enum class Kind { None, Bytes, Float, Int64 };
    Kind kind = Kind::None;  // None: a Feature with no list set
    std::vector<std::string> bytes;
    std::vector<float> floats;
    std::vector<int64_t> ints;

    static Feature ofBytes(std::vector<std::string> v);
    static Feature ofFloats(std::vector<float> v);
    static Feature ofInt64s(std::vector<int64_t> v);
    // Number of values in the list of its kind.
    size_t size() const;
    bool operator==(const Feature& o) const = default;
};

const char* featureKindName(Feature::Kind kind);  // "none", "bytes", "float", "int64"

struct Example {
    std::map<std::string, Feature> features;  // sorted by key, so encoding is deterministic
    // nullptr when absent.
    const Feature* find(std::string_view key) const;
    bool operator==(const Example& o) const = default;
};

// Serialized tf.train.Example, in TensorFlow's form: packed float and int64 lists.
std::string encodeExample(const Example& example);

// Parses a serialized Example. Accepts packed and unpacked lists (several packed chunks of one
// list are concatenated), skips unknown fields, and on duplicate keys keeps the last entry, as
// protobuf does. Malformed input gives DataError with params "feature" (when known), "offset"
// (byte offset within `bytes`) and "reason"; it never reads outside `bytes`.
Result<Example> decodeExample(std::string_view bytes);

}  // namespace kiln::engine::data
