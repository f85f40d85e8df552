// SPDX-License-Identifier: Apache-2.0
// The data section opened for training: streamed formats through engine/data's pipelines, the
// others in memory. Apart from config.cpp so that users of the training configuration alone do
// not link the picture decoders.
#include <nlohmann/json.hpp>

#include <cmath>

#include "engine/data/data_config.h"
#include "engine/data/idx_reader.h"
#include "engine/data/sources.h"
#include "engine/io/project.h"
#include "engine/train/config.h"

namespace kiln::engine::train {
namespace {

using json = nlohmann::json;

// The project's IDX data with other IDX files (the pair named by `replacement.path`: either file,
// or a folder holding one pair) in the test split's place, read into memory as the project's
// splits are, so that the model sees them alike. Every label must be one of the model's classes.
Result<DataBundle> loadIdxReplacement(const json& dataJson, const std::string& projectPath, uint64_t seed,
                                      const data::TestReplacement& replacement) {
    KILN_ASSIGN(DataBundle b, loadData(dataJson, projectPath, seed));
    KILN_ASSIGN(auto pair, data::IdxSource::findPair(replacement.path));
    KILN_ASSIGN(auto other, data::readIdx(pair.first, pair.second));
    const data::Column* labels = other.column("label");
    for (int64_t i = 0; labels != nullptr && replacement.classes > 0 && i < other.count(); ++i) {
        const float v = labels->values[static_cast<size_t>(i)];
        if (v >= 0 && v < static_cast<float>(replacement.classes) && v == std::floor(v)) continue;
        const std::string label = std::to_string(static_cast<int64_t>(v));
        return Error(ErrorCode::DataError, "Label " + std::to_string(i) + " (row " + std::to_string(i + 1) + "): " +
                                               label + " is not one of the model's classes (0 to " +
                                               std::to_string(replacement.classes - 1) + ").")
            .withFile(pair.second)
            .with("file", pair.second)
            .with("row", std::to_string(i + 1))
            .with("label", label)
            .with("reason", "unknown class");
    }
    b.test = std::move(other);
    return b;
}

}  // namespace

Result<DataBundle> openData(const json& dataJson, const std::string& projectPath, uint64_t seed, int64_t batchSize,
                            bool shuffle) {
    return openData(dataJson, projectPath, seed, batchSize, shuffle, data::TestReplacement{});
}

Result<DataBundle> openData(const json& dataJson, const std::string& projectPath, uint64_t seed, int64_t batchSize,
                            bool shuffle, const data::TestReplacement& replacement) {
    const std::string format = dataJson.is_object() ? dataJson.value("format", std::string()) : std::string();
    const bool replace = !replacement.path.empty() || !replacement.imageFiles.empty() || replacement.trainingSplit;
    if (format == "idx" && !replacement.path.empty() && replacement.imageFiles.empty())
        return loadIdxReplacement(dataJson, projectPath, seed, replacement);
    if (format == "idx" || !data::isStreamingFormat(format)) {
        // Other rows of a csv table are read with the project's table.
        if ((format != "csv" && !replacement.path.empty()) || !replacement.imageFiles.empty())
            return Error(ErrorCode::ConfigError,
                         "data.format: other data can be evaluated only for streamed formats (folder, csv_index, "
                         "tfrecord) and csv tables; \"" +
                             format + "\" is read into memory")
                .with("field", "data.format")
                .with("reason", "other data can be evaluated only for folder, csv_index, tfrecord and csv projects");
        return loadData(dataJson, projectPath, seed, replacement);
    }
    DataBundle b;
    if (dataJson.contains("inputs")) {
        KILN_ASSIGN(b.inputs, readInputMap(dataJson.at("inputs")));
    }
    auto resolve = [&](const std::string& raw) { return io::resolveDataPath(raw, projectPath); };
    json settings = dataJson;
    if (!settings.contains("shuffle_buffer")) settings["shuffle_buffer"] = shuffle ? kDefaultShuffleBuffer : 0;
    KILN_ASSIGN(auto p, replace ? data::openDataPipelines(settings, resolve, seed, batchSize, replacement)
                                : data::openDataPipelines(settings, resolve, seed, batchSize));
    b.trainStream = std::move(p.train);
    b.validationStream = std::move(p.validation);
    b.testStream = std::move(p.test);
    b.classNames = std::move(p.classNames);
    const int64_t n = b.trainStream->samplesPerEpoch();
    b.description = p.kind + ", streamed" + (n >= 0 ? ", " + std::to_string(n) + " training samples" : std::string());
    return b;
}

}  // namespace kiln::engine::train
