// SPDX-License-Identifier: Apache-2.0
// Conversions between data set layouts: any random-access source to TFRecord files of
// tf.train.Example, and any source (TFRecord included) to a PNG folder with one subfolder per class.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/data/record_source.h"
#include "engine/data/sample.h"
#include "engine/data/sources.h"
#include "engine/data/tfrecord.h"

namespace kiln::engine::data {

struct ConvertOptions {
    TfRecordCompression compression = TfRecordCompression::None;
    int shards = 1;      // TFRecord output: files NAME-00000-of-0000N.tfrecord when > 1
    int64_t limit = -1;  // convert at most this many samples (-1: all)
};

struct ConvertReport {
    int64_t written = 0;
    std::vector<BadSample> bad;      // pictures that could not be read (left out)
    std::vector<std::string> files;  // files written (TFRecord) or the folder
};

// The sidecar holding class names of a TFRecord file, one per line in class-index order.
std::string classNamesPath(const std::string& tfrecordPath);

// Writes every sample of `source` as a tf.train.Example: picture columns as one bytes value (the
// original file's bytes when the source holds encoded pictures, else PNG), the label column as
// int64, other numbers as float lists, plus "filename" (bytes) when samples come from files.
// Class names go to classNamesPath(file) for every file written. Pictures that cannot be decoded are left out
// and listed.
Result<ConvertReport> convertToTfRecord(const SampleSource& source, const std::string& dst,
                                        const ConvertOptions& options);

// Writes the pictures of `source` as PNG files DST/<class>/<name>.png. Classes are the label
// column's class names, else the class numbers zero-padded to one width (so that sorting by
// name keeps their order); names come from the "filename" column or the sample's file, else
// the sample's position.
Result<ConvertReport> convertToImageFolder(const SampleSource& source, const std::string& dst,
                                           const ConvertOptions& options);
Result<ConvertReport> convertToImageFolder(const RecordSource& source, const std::string& dst,
                                           const ConvertOptions& options);

}  // namespace kiln::engine::data
