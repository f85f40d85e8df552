// SPDX-License-Identifier: Apache-2.0
// Sequential sources: data sets stored as files of records (TFRecord) that are read front to
// back. The pipeline interleaves several files and shuffles through a bounded buffer.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/data/sample.h"

namespace kiln::engine::data {

// Reads the samples of one file in order.
class RecordReader {
public:
    virtual ~RecordReader();
    // Fills `out` (values and origin; the pipeline sets the index) and returns true, or returns
    // false at the end of the file. A damaged file is an Error naming the file and byte offset.
    virtual Result<bool> next(Sample& out) = 0;
};

class RecordSource {
public:
    virtual ~RecordSource();
    virtual std::string kind() const = 0;
    virtual std::vector<ColumnSpec> columnSpecs() const = 0;
    virtual int fileCount() const = 0;
    virtual std::string fileName(int file) const = 0;
    // Opens file `file` for reading from its start; callable from any thread.
    virtual Result<std::unique_ptr<RecordReader>> openFile(int file) const = 0;
};

}  // namespace kiln::engine::data
