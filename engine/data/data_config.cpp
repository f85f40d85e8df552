// SPDX-License-Identifier: Apache-2.0
// The "data" section of a project turned into training, validation and test pipelines.
#include "engine/data/data_config.h"

#include <algorithm>
#include <filesystem>
#include <memory>

#include <nlohmann/json.hpp>

#include "engine/data/split.h"
#include "engine/data/tfrecord_source.h"

namespace kiln::engine::data {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

Error fieldError(const std::string& field, const std::string& message) {
    return Error(ErrorCode::ConfigError, field + ": " + message).with("field", field).with("reason", message);
}

Result<std::string> pathAt(const json& data, const char* key, const PathResolver& resolve) {
    if (!data.contains(key) || !data[key].is_string() || data[key].get<std::string>().empty())
        return fieldError(std::string("data.") + key, "needs a path");
    return resolve(data[key].get<std::string>());
}

// The training records of a TFRecord source as a random-access source, for fitting
// standardisation on them: every record is read once, front to back, and only the columns that
// a standardize transform names are kept (pictures and other columns are not).
class FittingRecords : public SampleSource {
public:
    static Result<std::shared_ptr<FittingRecords>> read(const RecordSource& source, const TransformList& train,
                                                        const TransformList& eval) {
        auto out = std::make_shared<FittingRecords>();
        out->m_specs = source.columnSpecs();
        std::vector<bool> keep(out->m_specs.size(), false);
        for (const TransformList* list : {&train, &eval})
            for (const Transform& t : list->items())
                if (t.kind == TransformKind::Standardize)
                    for (size_t c = 0; c < out->m_specs.size(); ++c)
                        if (out->m_specs[c].name == t.column && !out->m_specs[c].image) keep[c] = true;
        Sample sample;
        for (int f = 0; f < source.fileCount(); ++f) {
            KILN_ASSIGN(auto reader, source.openFile(f));
            for (;;) {
                KILN_ASSIGN(bool more, reader->next(sample));
                if (!more) break;
                Sample kept;
                kept.index = static_cast<int64_t>(out->m_samples.size());
                kept.origin = sample.origin;
                kept.values.resize(sample.values.size());
                for (size_t c = 0; c < sample.values.size() && c < keep.size(); ++c)
                    if (keep[c]) kept.values[c] = std::move(sample.values[c]);
                out->m_samples.push_back(std::move(kept));
            }
        }
        return out;
    }

    std::string kind() const override { return "tfrecord"; }
    std::vector<ColumnSpec> columnSpecs() const override { return m_specs; }
    int64_t size() const override { return static_cast<int64_t>(m_samples.size()); }
    Status load(int64_t index, Sample& out) const override {
        if (index < 0 || index >= size())
            return Error(ErrorCode::InvalidArgument, "Sample " + std::to_string(index) + " is out of range.");
        out = m_samples[static_cast<size_t>(index)];
        return okStatus();
    }

private:
    std::vector<ColumnSpec> m_specs;
    std::vector<Sample> m_samples;
};

Result<TransformList> transformsAt(const json& data, const char* key) {
    if (!data.contains(key)) return TransformList();
    return TransformList::fromJson(data[key], std::string("data.") + key);
}

// The fractions of data.split: {"validation": v, "test": t}.
Status readSplit(const json& data, double* validation, double* test) {
    *validation = *test = 0;
    if (!data.contains("split")) return okStatus();
    const json& s = data["split"];
    if (!s.is_object())
        return fieldError("data.split", "expected {\"validation\": fraction, \"test\": fraction}");
    for (const auto& [k, v] : s.items()) {
        if (k != "validation" && k != "test") return fieldError("data.split." + k, "is not a known setting");
        if (!v.is_number() || v.get<double>() < 0 || v.get<double>() >= 1)
            return fieldError("data.split." + k, "expected a fraction in [0, 1)");
        (k == "validation" ? *validation : *test) = v.get<double>();
    }
    if (*validation + *test >= 1) return fieldError("data.split", "fractions must leave some training data");
    return okStatus();
}

struct Parts {
    std::shared_ptr<const SampleSource> source[3];
    std::vector<int64_t> indices[3];
    bool present[3] = {false, false, false};
};

Status splitByRatio(const json& data, std::shared_ptr<const SampleSource> src, uint64_t seed, Parts& parts) {
    double v = 0, t = 0;
    KILN_TRY(readSplit(data, &v, &t));
    bool stratify = true;
    if (data.contains("stratify")) {
        if (!data["stratify"].is_boolean()) return fieldError("data.stratify", "expected true or false");
        stratify = data["stratify"].get<bool>();
    }
    const std::vector<float> labels = stratify ? src->labels() : std::vector<float>{};
    KILN_ASSIGN(auto lists,
                splitIndices(src->size(), {1.0 - v - t, v, t}, seed,
                             labels.size() == static_cast<size_t>(src->size()) ? labels.data() : nullptr));
    for (int k = 0; k < 3; ++k) {
        parts.source[k] = src;
        parts.indices[k] = std::move(lists[static_cast<size_t>(k)]);
        parts.present[k] = k == 0 || !parts.indices[k].empty();
    }
    return okStatus();
}

Result<std::unique_ptr<Pipeline>> build(std::shared_ptr<const SampleSource> src, std::vector<int64_t> indices,
                                        const TransformList& t, PipelineOptions o) {
    o.indices = std::move(indices);
    return Pipeline::create(std::move(src), t, std::move(o));
}

}  // namespace

bool isStreamingFormat(const std::string& format) {
    return format == "folder" || format == "csv_index" || format == "tfrecord" || format == "idx";
}

TransformList evaluationTransforms(const TransformList& training) {
    std::vector<Transform> out;
    for (const Transform& t : training.items()) {
        switch (t.kind) {
        case TransformKind::RandomCrop: {
            Transform c = t;
            c.kind = TransformKind::CenterCrop;
            c.padding = 0;
            out.push_back(c);
            break;
        }
        case TransformKind::Flip:
        case TransformKind::Rotate:
        case TransformKind::BrightnessContrast:
            if (!t.random()) out.push_back(t);  // a fixed flip or rotation is part of the data
            break;
        default:
            out.push_back(t);
        }
    }
    return TransformList(std::move(out));
}

Result<DataPipelines> openDataPipelines(const json& data, const PathResolver& resolve, uint64_t seed,
                                        int64_t batchSize) {
    return openDataPipelines(data, resolve, seed, batchSize, TestReplacement{});
}

Result<DataPipelines> openDataPipelines(const json& data, const PathResolver& resolve, uint64_t seed,
                                        int64_t batchSize, const TestReplacement& replacement) {
    const bool replace = !replacement.path.empty() || !replacement.imageFiles.empty() || replacement.trainingSplit;
    if (!replacement.imageFiles.empty() && data.is_object() && data.value("format", std::string()) != "folder")
        return fieldError("data.format", "pictures can be predicted only for image folder projects (format \"folder\")");
    if (!data.is_object()) return fieldError("data", "must be an object");
    if (!data.contains("format") || !data["format"].is_string())
        return fieldError("data.format", "is missing");
    const std::string format = data["format"].get<std::string>();
    if (!isStreamingFormat(format))
        return fieldError("data.format", "\"" + format + "\" is not folder, csv_index, tfrecord or idx");

    json optionsJson = data;
    if (!optionsJson.contains("seed"))
        optionsJson["seed"] = static_cast<int64_t>(seed & 0x7FFFFFFFFFFFFFFFull);
    if (!optionsJson.contains("batch_size")) optionsJson["batch_size"] = batchSize;
    KILN_ASSIGN(PipelineOptions options, PipelineOptions::fromJson(optionsJson));
    PipelineOptions evalOptions = options;
    evalOptions.shuffleBuffer = 0;
    evalOptions.dropRemainder = false;
    evalOptions.cache = PipelineOptions::Cache::None;

    KILN_ASSIGN(TransformList train, transformsAt(data, "transforms"));
    TransformList eval = evaluationTransforms(train);
    if (data.contains("eval_transforms")) {
        KILN_ASSIGN(eval, transformsAt(data, "eval_transforms"));
    }

    DataPipelines out;
    if (data.contains("class_names") && data["class_names"].is_array())
        for (const auto& n : data["class_names"])
            if (n.is_string()) out.classNames.push_back(n.get<std::string>());

    if (format == "tfrecord") {
        out.kind = "tfrecord";
        static const char* kParts[3] = {"train", "validation", "test"};
        for (int k = 0; k < 3; ++k) {
            std::string path;
            if (k == 2 && replace && !replacement.trainingSplit) {
                path = replacement.path;
            } else if (k == 2 && replacement.trainingSplit) {
                KILN_ASSIGN(path, pathAt(data, data.contains("train") ? "train" : "path", resolve));
            } else if (k == 1 && replace) {
                continue;  // only the replacement is evaluated
            } else if (data.contains(kParts[k])) {
                KILN_ASSIGN(path, pathAt(data, kParts[k], resolve));
            } else if (k == 0) {
                KILN_ASSIGN(path, pathAt(data, "path", resolve));
            } else {
                continue;
            }
            KILN_ASSIGN(auto files, TfRecordSource::listFiles(path));
            TfRecordCompression compression = TfRecordSource::guessCompression(files.front());
            if (data.contains("compression")) {
                if (!data["compression"].is_string())
                    return fieldError("data.compression", "expected none, gzip or zlib");
                std::string c = data["compression"].get<std::string>();
                auto parsed = parseTfRecordCompression(c == "none" ? "" : c);
                if (!parsed.ok()) return fieldError("data.compression", "expected none, gzip or zlib");
                compression = parsed.value();
            }
            std::vector<TfFeatureSpec> features;
            if (data.contains("features")) {
                KILN_ASSIGN(features, TfRecordSource::featuresFromJson(data["features"], "data.features"));
            } else {
                KILN_ASSIGN(features, TfRecordSource::inferFeatures(files.front(), compression));
            }
            KILN_ASSIGN(auto src, TfRecordSource::open(files, features, compression));
            // Other data's labels, as for a CSV index: one that is no class of the model would be
            // counted in a wrong confusion matrix cell, or in none; it is refused, with its file
            // and record.
            if (k == 2 && replace && !replacement.trainingSplit)
                KILN_TRY(src->checkClassLabels(replacement.labelColumn, replacement.classes, out.classNames));
            // Standardisation is fitted on the training records (read once for it), before any
            // pipeline takes the transforms.
            if (k == 0 && (train.needsFit() || eval.needsFit())) {
                KILN_ASSIGN(auto records, FittingRecords::read(*src, train, eval));
                std::vector<int64_t> all(static_cast<size_t>(records->size()));
                for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
                if (train.needsFit()) KILN_TRY(train.fit(*records, all));
                if (eval.needsFit()) KILN_TRY(eval.fit(*records, all));
            }
            KILN_ASSIGN(auto p, Pipeline::create(std::shared_ptr<const RecordSource>(src),
                                                 k == 0 ? train : eval, k == 0 ? options : evalOptions));
            (k == 0 ? out.train : k == 1 ? out.validation : out.test) = std::move(p);
        }
        return out;
    }

    Parts parts;
    if (format == "folder") {
        KILN_ASSIGN(std::string root, pathAt(data, "path", resolve));
        KILN_ASSIGN(auto splits, ImageFolderSource::openSplits(root));
        if (!splits.empty() && splits.count("train")) {
            static const char* kNames[3] = {"train", "validation", "test"};
            for (int k = 0; k < 3; ++k) {
                auto it = splits.find(kNames[k]);
                if (it == splits.end()) continue;
                parts.source[k] = it->second;
                parts.present[k] = true;
            }
            out.classNames = splits.at("train")->classNames();
            // No validation folder: carve it from train by ratio.
            if (!parts.present[1] && data.contains("split")) {
                Parts carved;
                KILN_TRY(splitByRatio(data, parts.source[0], seed, carved));
                parts.indices[0] = carved.indices[0];
                parts.source[1] = parts.source[0];
                parts.indices[1] = carved.indices[1];
                parts.present[1] = !parts.indices[1].empty();
            }
        } else {
            KILN_ASSIGN(auto src, ImageFolderSource::open(root));
            out.classNames = src->classNames();
            KILN_TRY(splitByRatio(data, src, seed, parts));
        }
        out.kind = "image-folder";
    } else if (format == "csv_index") {
        KILN_ASSIGN(std::string path, pathAt(data, "path", resolve));
        CsvIndexSource::Options o;
        if (data.contains("split_column")) {
            if (!data["split_column"].is_string())
                return fieldError("data.split_column", "expected a column name");
            o.splitColumn = data["split_column"].get<std::string>();
        }
        KILN_ASSIGN(auto src, CsvIndexSource::open(path, o));
        if (!o.splitColumn.empty()) {
            parts.indices[0] = src->rowsInSplit("train");
            parts.indices[1] = src->rowsInSplit("validation");
            if (parts.indices[1].empty()) parts.indices[1] = src->rowsInSplit("val");
            parts.indices[2] = src->rowsInSplit("test");
            if (parts.indices[0].empty())
                return fieldError("data.split_column",
                                  "no row of " + path + " has \"train\" in column \"" + o.splitColumn + "\"");
            for (int k = 0; k < 3; ++k) {
                parts.source[k] = src;
                parts.present[k] = !parts.indices[k].empty();
            }
        } else {
            KILN_TRY(splitByRatio(data, src, seed, parts));
        }
        out.kind = "csv-index";
    } else {  // idx
        if (!data.contains("train") || !data["train"].is_object())
            return fieldError("data.train", "needs {\"images\": ..., \"labels\": ...}");
        KILN_ASSIGN(std::string images, pathAt(data["train"], "images", resolve));
        KILN_ASSIGN(std::string labels, pathAt(data["train"], "labels", resolve));
        KILN_ASSIGN(auto src, IdxSource::open(images, labels));
        KILN_TRY(splitByRatio(data, src, seed, parts));
        if (data.contains("test") && data["test"].is_object()) {
            KILN_ASSIGN(std::string ti, pathAt(data["test"], "images", resolve));
            KILN_ASSIGN(std::string tl, pathAt(data["test"], "labels", resolve));
            KILN_ASSIGN(auto testSrc, IdxSource::open(ti, tl));
            parts.source[2] = testSrc;
            parts.indices[2].clear();
            parts.present[2] = true;
        }
        out.kind = "idx";
    }

    if (replace) {
        if (replacement.trainingSplit) {
            parts.source[2] = parts.source[0];
            parts.indices[2] = parts.indices[0];
        } else if (!replacement.imageFiles.empty()) {
            ImageFolderSource::Options o;
            o.classNames = out.classNames;
            KILN_ASSIGN(parts.source[2], ImageFolderSource::fromFiles(replacement.imageFiles, o));
        } else if (format == "folder") {
            ImageFolderSource::Options o;
            o.classNames = out.classNames;
            // Other data is read with the model's classes: a class folder the model does not know
            // would be left out without a word, so it is refused, named.
            std::error_code ec;
            if (!o.classNames.empty() && fs::is_directory(replacement.path, ec)) {
                std::vector<std::string> unknown;
                for (const auto& e : fs::directory_iterator(replacement.path, ec)) {
                    const std::string n = e.path().filename().string();
                    if (n.empty() || n[0] == '.' || !e.is_directory(ec)) continue;
                    if (std::find(o.classNames.begin(), o.classNames.end(), n) == o.classNames.end()) unknown.push_back(n);
                }
                if (!unknown.empty()) {
                    std::sort(unknown.begin(), unknown.end());
                    std::string known;
                    for (const auto& c : o.classNames) known += (known.empty() ? "" : ", ") + c;
                    const std::string folder = (fs::path(replacement.path) / unknown.front()).string();
                    return Error(ErrorCode::DataError, "The folder " + folder + " is not a class of the model (its classes: " + known + ").")
                        .withFile(folder)
                        .with("file", folder)
                        .with("reason", "not a class of the model (its classes: " + known + ")");
                }
            }
            KILN_ASSIGN(parts.source[2], ImageFolderSource::open(replacement.path, o));
        } else if (format == "csv_index") {
            // Other data may carry the project's split column (the project's own index, say):
            // that column is not a variable, and every row is read.
            CsvIndexSource::Options o;
            if (data.contains("split_column") && data["split_column"].is_string())
                o.splitColumn = data["split_column"].get<std::string>();
            auto opened = CsvIndexSource::open(replacement.path, o);
            if (!opened.ok() && !o.splitColumn.empty() && opened.error().param("reason") == "missing column")
                opened = CsvIndexSource::open(replacement.path);
            if (!opened.ok()) return opened.error();
            std::shared_ptr<CsvIndexSource> other = std::move(opened.value());
            // A label that is no class of the model would be counted in a wrong confusion
            // matrix cell, or in none: it is refused, with its file and line.
            KILN_TRY(other->checkClassLabels(replacement.labelColumn, replacement.classes, out.classNames));
            parts.source[2] = std::move(other);
        } else {
            KILN_ASSIGN(auto pair, IdxSource::findPair(replacement.path));
            KILN_ASSIGN(parts.source[2], IdxSource::open(pair.first, pair.second));
        }
        if (!replacement.trainingSplit) parts.indices[2].clear();
        parts.present[2] = true;
        parts.present[1] = false;
    }

    // Standardisation is fitted on the training split only.
    if (train.needsFit() || eval.needsFit()) {
        std::vector<int64_t> fitOn = parts.indices[0];
        if (fitOn.empty())
            for (int64_t i = 0; i < parts.source[0]->size(); ++i) fitOn.push_back(i);
        if (train.needsFit()) KILN_TRY(train.fit(*parts.source[0], fitOn));
        if (eval.needsFit()) KILN_TRY(eval.fit(*parts.source[0], fitOn));
    }
    KILN_ASSIGN(out.train, build(parts.source[0], parts.indices[0], train, options));
    if (parts.present[1]) {
        KILN_ASSIGN(out.validation, build(parts.source[1], parts.indices[1], eval, evalOptions));
    }
    if (parts.present[2]) {
        KILN_ASSIGN(out.test, build(parts.source[2], parts.indices[2], eval, evalOptions));
    }
    return out;
}

}  // namespace kiln::engine::data
