// SPDX-License-Identifier: Apache-2.0
// TFRecord files of tf.train.Example as a sequential pipeline source: a feature spec maps
// Example features to columns (fixed-length float or int64 lists, or bytes holding a picture).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/core/error.h"
#include "engine/data/record_source.h"
#include "engine/data/tfrecord.h"

namespace kiln::engine::data {

struct TfFeatureSpec {
    enum class Type { Float, Int64, Image, Bytes };  // Bytes: kept as text (file names), not batched
    std::string feature;                             // key in the Example
    std::string column;  // output column (a model Input name); empty: the feature key
    Type type = Type::Float;
    Shape shape;  // Float/Int64: the list holds shape.numel() values; Image: unused
};

class TfRecordSource : public RecordSource {
public:
    static Result<std::shared_ptr<TfRecordSource>> open(
        std::vector<std::string> files, std::vector<TfFeatureSpec> features,
        TfRecordCompression compression = TfRecordCompression::None);
    // The record files of `path`: the file itself, or the *.tfrecord / *.tfrecord.gz / *.tfrec
    // files of a folder, sorted by name.
    static Result<std::vector<std::string>> listFiles(const std::string& path);
    // Guesses a spec from the first record of `file`: bytes holding a picture -> Image, float
    // and int64 lists -> columns of their length (one value -> a scalar). Other bytes are left
    // out unless `includeBytes` (conversions keep "filename" that way).
    static Result<std::vector<TfFeatureSpec>> inferFeatures(const std::string& file,
                                                            TfRecordCompression compression,
                                                            bool includeBytes = false);
    // {"image": {"type": "image"}, "label": {"type": "int64", "shape": []}, "x": {"type":
    // "float", "shape": [4], "column": "features"}}; ConfigError naming the field otherwise.
    static Result<std::vector<TfFeatureSpec>> featuresFromJson(const nlohmann::json& j,
                                                               const std::string& field);
    // The compression of a file from its first bytes (gzip magic, zlib header) or its name.
    static TfRecordCompression guessCompression(const std::string& file);

    std::string kind() const override { return "tfrecord"; }
    std::vector<ColumnSpec> columnSpecs() const override;
    int fileCount() const override { return static_cast<int>(m_files.size()); }
    std::string fileName(int file) const override { return m_files[static_cast<size_t>(file)]; }
    Result<std::unique_ptr<RecordReader>> openFile(int file) const override;
    const std::vector<TfFeatureSpec>& features() const { return m_features; }
    // Checks that every record's `column` (a scalar int64 or float feature) is a class index below
    // `classes` (a whole number from 0), reading every file once. DataError naming the file, the
    // record (its number from 1 and byte offset) and the label of the first record that is not,
    // with the classes as modelClassesText() names them; a damaged file's own error. A source
    // without that column, or `classes` 0, is not checked.
    Status checkClassLabels(const std::string& column, int64_t classes, const std::vector<std::string>& classNames) const;

private:
    std::vector<std::string> m_files;
    std::vector<TfFeatureSpec> m_features;
    TfRecordCompression m_compression = TfRecordCompression::None;
};

}  // namespace kiln::engine::data
