// SPDX-License-Identifier: Apache-2.0
// Reader for the IDX format of MNIST and Fashion-MNIST (big-endian header, gzip optional), giving
// an "image" column [H,W,C] and a scalar "label" column.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/data/dataset.h"

namespace kiln::engine::data {

// IDX element types (the third byte of the magic number).
enum class IdxType : uint8_t {
    U8 = 0x08,
    I8 = 0x09,
    I16 = 0x0B,
    I32 = 0x0C,
    F32 = 0x0D,
    F64 = 0x0E,
};

struct IdxOptions {
    // Divide 8-bit unsigned pixels by 255 so images lie in [0, 1]. Other element types are kept as
    // they are.
    bool scaleToUnit = true;
    // Read at most this many samples (-1: all).
    int64_t limit = -1;
    std::string imageColumn = "image";
    std::string labelColumn = "label";
};

// One IDX array: dims[0] items, each of dims[1..] elements, converted to float.
struct IdxArray {
    IdxType type = IdxType::U8;
    std::vector<int64_t> dims;  // as stored in the file, but dims[0] = the items actually read
    int64_t storedCount = 0;    // items the file holds (dims[0] before `limit`)
    std::vector<float> values;
};

// Reads one IDX file (".gz" is decompressed transparently). `limit` >= 0 reads only the first
// items. Errors: FileNotFound, FileRead, DataError ("bad magic 0x...", "truncated at byte N").
Result<IdxArray> readIdxArray(const std::string& path, int64_t limit = -1, bool scaleToUnit = false);

// Reads an images file (magic 0x00000803 for 8-bit pictures: [count, H, W]; a fourth dimension
// is taken as channels) and a labels file (magic 0x00000801: [count]) into a data set with the
// columns "image" [H,W,C] (C = 1 for 3-dimensional files) and "label" [] (class index).
// The counts of the two files must match.
Result<InMemoryDataset> readIdx(const std::string& imagesPath, const std::string& labelsPath,
                                const IdxOptions& options = {});

}  // namespace kiln::engine::data
