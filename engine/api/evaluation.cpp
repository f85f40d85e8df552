// SPDX-License-Identifier: Apache-2.0
// Predictions over a data split through the Trainer's evaluation path, and their report.
#include "engine/api/evaluation.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include "engine/api/internal/training_setup.h"
#include "engine/core/thread_pool.h"
#include "engine/data/batch_stream.h"
#include "engine/data/data_config.h"
#include "engine/eval/report.h"
#include "engine/eval/report_json.h"
#include "engine/train/config.h"
#include "engine/train/trainer.h"
#include "engine/train/weights.h"

namespace kiln::engine::api {

namespace fs = std::filesystem;

namespace {

Error splitError(const std::string& reason) {
    return Error(ErrorCode::ConfigError, "split: " + reason).with("field", "split").with("reason", reason);
}

}  // namespace

bool Predictions::classification() const {
    return lossType == "SparseCategoricalCrossentropy" || lossType == "CategoricalCrossentropy" ||
           lossType == "BinaryCrossentropy";
}

int64_t Predictions::numClasses() const { return width == 1 ? 2 : width; }

std::vector<double> Predictions::probabilities() const {
    return eval::toProbabilities(outputs, width, fromLogits);
}

std::vector<int64_t> Predictions::labels() const {
    std::vector<int64_t> out(static_cast<size_t>(samples));
    const auto tw = static_cast<size_t>(std::max<int64_t>(targetWidth, 1));
    for (size_t i = 0; i < out.size(); ++i) {
        const float* t = targets.data() + i * tw;
        if (width == 1) out[i] = t[0] > 0.5f ? 1 : 0;
        else if (tw == 1) out[i] = static_cast<int64_t>(t[0]);
        else out[i] = static_cast<int64_t>(std::max_element(t, t + tw) - t);
    }
    return out;
}

Result<std::string> resolveWeights(const std::string& path) {
    std::error_code ec;
    if (path.empty()) return Error(ErrorCode::InvalidArgument, "no weights given").with("field", "weights");
    if (fs::is_directory(path, ec)) {
        const std::string file = (fs::path(path) / "weights.safetensors").string();
        if (!fs::is_regular_file(file, ec))
            return Error(ErrorCode::FileNotFound, "the folder " + path + " holds no weights.safetensors (not a run folder)")
                .withFile(file)
                .with("path", file);
        return file;
    }
    if (!fs::exists(path, ec)) return Error(ErrorCode::FileNotFound, "no such weights file").withFile(path).with("path", path);
    return path;
}

namespace {

// What a pass over a split tells besides the observed batches.
struct SplitRun {
    std::string weightsPath, split, lossType;
    bool fromLogits = false;
    std::vector<std::string> classNames;
    double loss = 0;
    std::vector<std::pair<std::string, double>> metrics;
    int64_t samples = 0;
};

// Loads data, model and weights as training does and runs the forward pass over the split,
// showing every batch to `observer`. An observer returning Cancelled ends the pass early
// (not an error).
// `classNames`, when given, is filled before the first batch is observed.
Result<SplitRun> runSplit(const io::Project& project, const std::string& projectPath, const EvaluationOptions& options,
                          const train::EvalObserver& observer, std::vector<std::string>* classNames = nullptr) {
    SplitRun out;
    KILN_ASSIGN(out.weightsPath, resolveWeights(options.weights));
    // Which data the test stream (or set) holds.
    data::TestReplacement replacement;
    std::string split = options.split;
    if (!options.imageFiles.empty()) {
        replacement.imageFiles = options.imageFiles;
        split = "pictures";
    } else if (split == "val") {
        split = "validation";
    }
    const bool named = split == "test" || split == "validation" || split == "train";
    if (split == "train") replacement.trainingSplit = true;
    else if (!named && split != "pictures") replacement.path = io::resolveDataPath(split, projectPath);
    replacement.labelsOptional = options.labelsOptional;
    out.split = split;

    PrepareOptions setup;
    setup.batchSize = options.batchSize;
    setup.shuffle = false;  // every sample once, in the data's order
    setup.testReplacement = replacement;
    setup.threads = options.threads;
    setup.checkData = [&](const train::DataBundle& bundle) -> Status {
        if (!bundle.trainStream) {
            if (split == "validation" ? !bundle.validation : split != "train" && !bundle.test)
                return splitError("the project's data has no " + split + " split");
        } else if (split == "validation" ? !bundle.validationStream : !bundle.testStream) {
            return splitError("the project's data has no " + split + " split");
        }
        return {};
    };
    KILN_ASSIGN(PreparedModel model, prepareModel(project, projectPath, setup));
    // Other data's labels are checked against the model's classes (the first loss's).
    if (!replacement.path.empty() && !model.config.losses.empty()) {
        const auto& loss = model.config.losses.front();
        const int node = model.model.graph.find(loss.spec.output);
        if (node >= 0) {
            const int64_t width = model.model.nodes[static_cast<size_t>(node)].output.numelFrom(1);
            if (loss.spec.type == "SparseCategoricalCrossentropy") replacement.classes = width;
            else if (loss.spec.type == "BinaryCrossentropy" && width == 1) replacement.classes = 2;
            replacement.labelColumn = loss.target;
        }
    }
    setup.testReplacement = replacement;
    KILN_ASSIGN(PreparedTraining prepared, prepareTraining(project, projectPath, std::move(model), setup));
    auto& trainer = prepared.trainer;
    out.classNames = trainer->data().classNames;
    if (classNames != nullptr) *classNames = out.classNames;
    const bool streamed = trainer->data().trainStream != nullptr;
    KILN_TRY(train::loadWeights(trainer->params(), out.weightsPath));
    const auto& loss = trainer->firstLoss();
    out.lossType = loss.type;
    out.fromLogits = loss.attrs.has("from_logits") && loss.attrs.getBool("from_logits");

    const auto& data = trainer->data();
    Result<train::EvalResult> result = streamed
        ? trainer->evaluate(split == "validation" ? *data.validationStream : *data.testStream, observer)
        : trainer->evaluate(split == "train" ? data.train : split == "validation" ? *data.validation : *data.test, observer);
    if (!result.ok()) {
        if (result.error().code == ErrorCode::Cancelled) return out;
        return result.error();
    }
    out.loss = result->loss;
    for (const auto& m : result->metrics) out.metrics.emplace_back(m.name, m.value);
    out.samples = result->samples;
    if (out.samples == 0) return splitError("the " + split + " split holds no samples");
    return out;
}

// Where sample i of a batch came from, as the reports name it.
std::string sourceOf(const train::EvalBatch& b, int64_t i) {
    if (b.origins && static_cast<size_t>(i) < b.origins->size() && !(*b.origins)[static_cast<size_t>(i)].empty())
        return (*b.origins)[static_cast<size_t>(i)];
    if (b.sourceIndices) return "sample " + std::to_string((*b.sourceIndices)[static_cast<size_t>(i)]);
    return "row " + std::to_string(b.firstRow + i + 1);
}

}  // namespace

Result<Predictions> predict(const io::Project& project, const std::string& projectPath, const EvaluationOptions& options) {
    Predictions out;
    auto observer = [&](const train::EvalBatch& b) -> Status {
        out.width = b.outputWidth;
        out.targetWidth = b.targetWidth;
        out.outputs.insert(out.outputs.end(), b.outputs, b.outputs + b.size * b.outputWidth);
        out.targets.insert(out.targets.end(), b.targets, b.targets + b.size * b.targetWidth);
        for (int64_t i = 0; i < b.size; ++i) out.sources.push_back(sourceOf(b, i));
        out.samples += b.size;
        return {};
    };
    KILN_ASSIGN(SplitRun run, runSplit(project, projectPath, options, observer));
    out.weightsPath = run.weightsPath;
    out.split = run.split;
    out.lossType = run.lossType;
    out.fromLogits = run.fromLogits;
    out.classNames = run.classNames;
    out.loss = run.loss;
    out.metrics = run.metrics;
    return out;
}

Status forEachSample(const io::Project& project, const std::string& projectPath, const EvaluationOptions& options,
                     const std::function<Result<bool>(const SampleInput&)>& visit) {
    auto model = ops::analyzeModel(project.graph);
    if (!model.ok()) return io::locate(model.error(), project);
    if (model->inputs.size() != 1)
        return Error(ErrorCode::Unsupported, "explanations need a model with one input, this one has " +
                                                 std::to_string(model->inputs.size()))
            .with("what", "models with several inputs");
    const Shape shape = model->nodes[static_cast<size_t>(model->inputs[0])].output.withBatch(1);
    const int64_t width = shape.numelFrom(1);
    int64_t index = 0;
    SampleInput sample;
    std::vector<std::string> classNames;
    sample.classNames = &classNames;
    auto observer = [&](const train::EvalBatch& b) -> Status {
        for (int64_t i = 0; i < b.size; ++i, ++index) {
            sample.index = index;
            sample.source = sourceOf(b, i);
            sample.shape = shape;
            sample.data.assign(b.inputs[0] + i * width, b.inputs[0] + (i + 1) * width);
            const int64_t tw = std::max<int64_t>(b.targetWidth, 1);
            const float* t = b.targets + i * b.targetWidth;
            sample.label = b.targetWidth == 0 ? -1
                           : b.outputWidth == 1 ? (t[0] > 0.5f ? 1 : 0)
                           : tw == 1            ? static_cast<int64_t>(t[0])
                                                : static_cast<int64_t>(std::max_element(t, t + tw) - t);
            KILN_ASSIGN(bool more, visit(sample));
            if (!more) return Error(ErrorCode::Cancelled, "enough samples");
        }
        return {};
    };
    KILN_TRY(runSplit(project, projectPath, options, observer, &classNames));
    return {};
}

namespace {

// The data column each Input node of `model` reads, chosen as the Trainer chooses it: the data
// section's `inputs` map, else the one column that no loss reads when the model has one input,
// else the column named like the node. `columns` are the data's column names.
std::vector<std::string> inputColumns(const PreparedModel& model, const std::map<std::string, std::string>& inputs,
                                      const std::vector<std::string>& columns) {
    std::set<std::string> targets;
    for (const auto& l : model.config.losses) targets.insert(l.target);
    std::vector<std::string> out;
    for (int i : model.model.inputs) {
        const std::string& node = model.model.graph.nodes[static_cast<size_t>(i)].name;
        std::string name;
        if (auto it = inputs.find(node); it != inputs.end()) {
            name = it->second;
        } else {
            std::vector<std::string> candidates;
            for (const auto& c : columns)
                if (!targets.count(c)) candidates.push_back(c);
            name = model.model.inputs.size() == 1 && candidates.size() == 1 ? candidates[0] : node;
        }
        if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    }
    return out;
}

// Feature values of streamed data whose model inputs are all numbers (scalars or vectors, no
// pictures): TFRecord Examples with float or int64 features, numeric columns of a CSV index. The
// split is streamed again in predict()'s order without the transforms, so the values are those
// the file holds; a vector column's elements are named "<column>[i]". std::nullopt when an input
// is not a number column (a picture, a matrix).
Result<std::optional<SampleFeatures>> streamedFeatures(const io::Project& project, const std::string& projectPath,
                                                       const std::string& split, const PreparedModel& model) {
    // A model that takes pictures (or matrices) does not read a table: nothing to open.
    for (int i : model.model.inputs)
        if (model.model.nodes[static_cast<size_t>(i)].output.rank() > 2) return std::optional<SampleFeatures>();
    data::TestReplacement replacement;
    if (split == "train") replacement.trainingSplit = true;
    else if (split != "test" && split != "validation") replacement.path = io::resolveDataPath(split, projectPath);
    nlohmann::json raw = project.data;
    raw["transforms"] = nlohmann::json::array();  // the values as the file holds them
    raw["eval_transforms"] = nlohmann::json::array();
    raw.erase("cache");
    auto bundle = train::openData(raw, projectPath, model.config.seed, model.config.batchSize, false, replacement);
    if (!bundle.ok()) return bundle.error().file.empty() ? bundle.error().withFile(projectPath) : bundle.error();
    const std::shared_ptr<data::BatchStream>& stream = split == "validation" ? bundle->validationStream : bundle->testStream;
    if (!stream) return splitError("the project's data has no " + split + " split");

    const std::vector<std::string> columns = inputColumns(model, bundle->inputs, stream->outputNames());
    SampleFeatures out;
    for (const std::string& name : columns) {
        const auto& names = stream->outputNames();
        const auto it = std::find(names.begin(), names.end(), name);
        if (it == names.end()) return std::optional<SampleFeatures>();
        const Shape& shape = stream->outputShapes()[static_cast<size_t>(it - names.begin())];
        if (shape.rank() > 1) return std::optional<SampleFeatures>();  // pictures, matrices: not a table
        const int64_t width = shape.numel();
        for (int64_t e = 0; e < width; ++e) {
            out.names.push_back(shape.rank() == 0 ? name : name + "[" + std::to_string(e) + "]");
            out.categories.emplace_back();
        }
    }
    if (out.names.empty()) return std::optional<SampleFeatures>();
    KILN_TRY(stream->startEpoch(0));
    data::Batch batch;
    for (;;) {
        KILN_ASSIGN(bool more, stream->next(batch));
        if (!more) break;
        for (int64_t s = 0; s < batch.size; ++s)
            for (const std::string& name : columns) {
                const int c = batch.column(name);
                if (c < 0) return Error(ErrorCode::Internal, "a batch of the split lacks the column " + name);
                const auto width = static_cast<size_t>(batch.shapes[static_cast<size_t>(c)].numel());
                const float* v = batch.columns[static_cast<size_t>(c)].data() + static_cast<size_t>(s) * width;
                out.values.insert(out.values.end(), v, v + width);
            }
        out.samples += batch.size;
    }
    return std::optional<SampleFeatures>(std::move(out));
}

}  // namespace

Result<std::optional<SampleFeatures>> tableFeatures(const io::Project& project, const std::string& projectPath,
                                                    const EvaluationOptions& options) {
    const std::string format = project.data.is_object() ? project.data.value("format", std::string()) : std::string();
    const bool table = format == "csv";
    const bool streamedNumbers = format == "tfrecord" || format == "csv_index";
    std::string split = options.split == "val" ? "validation" : options.split;
    const bool named = split == "test" || split == "validation" || split == "train";
    if (!options.imageFiles.empty() || !(table || streamedNumbers)) return std::optional<SampleFeatures>();
    // The seed splits the table; the losses' targets are not inputs.
    KILN_ASSIGN(PreparedModel model, prepareModel(project, projectPath, PrepareOptions{}));
    if (streamedNumbers) return streamedFeatures(project, projectPath, split, model);
    nlohmann::json raw = project.data;
    raw["standardize"] = false;  // the split does not depend on it: the same rows, as in the file
    data::TestReplacement replacement;  // other rows, read with the project's table, in the test split's place
    if (!named) replacement.path = io::resolveDataPath(split, projectPath);
    replacement.labelsOptional = options.labelsOptional;
    auto bundle = train::loadData(raw, projectPath, model.config.seed, replacement);
    if (!bundle.ok()) return bundle.error().file.empty() ? bundle.error().withFile(projectPath) : bundle.error();
    const data::InMemoryDataset* set = split == "train"        ? &bundle->train
                                       : split == "validation" ? (bundle->validation ? &*bundle->validation : nullptr)
                                                               : (bundle->test ? &*bundle->test : nullptr);
    if (set == nullptr) return splitError("the project's data has no " + split + " split");

    // The data column of each Input node, chosen as the Trainer chooses it.
    std::vector<std::string> names;
    for (const auto& c : set->columnData()) names.push_back(c.name);
    std::vector<const data::Column*> columns;
    for (const std::string& name : inputColumns(model, bundle->inputs, names))
        if (const data::Column* column = set->column(name); column != nullptr) columns.push_back(column);

    // Features: runs of elements from one file column; a one-hot run is one feature.
    struct Feature {
        const data::Column* column;
        size_t first, count;  // elements [first, first + count) of the column
        bool categorical;
    };
    SampleFeatures out;
    std::vector<Feature> features;
    for (const data::Column* c : columns) {
        const auto width = static_cast<size_t>(c->sampleSize());
        const bool described = c->elementColumns.size() == width && c->elementCategories.size() == width &&
                               c->elementNames.size() == width;
        for (size_t e = 0; e < width;) {
            size_t end = e + 1;
            const bool categorical = described && !c->elementCategories[e].empty();
            if (categorical)
                while (end < width && c->elementColumns[end] == c->elementColumns[e] && !c->elementCategories[end].empty())
                    ++end;
            features.push_back({c, e, end - e, categorical});
            std::string name = c->elementNames.size() == width ? c->elementNames[e] : c->name + "[" + std::to_string(e) + "]";
            std::vector<std::string> categories;
            if (categorical) {
                // The element is named "<column>=<category>".
                name.resize(name.size() - std::min(name.size(), c->elementCategories[e].size() + 1));
                categories.assign(c->elementCategories.begin() + static_cast<std::ptrdiff_t>(e),
                                  c->elementCategories.begin() + static_cast<std::ptrdiff_t>(end));
            }
            out.names.push_back(std::move(name));
            out.categories.push_back(std::move(categories));
            e = end;
        }
    }
    out.samples = set->count();
    out.values.resize(static_cast<size_t>(out.samples) * features.size());
    for (int64_t s = 0; s < out.samples; ++s) {
        float* row = out.values.data() + static_cast<size_t>(s) * features.size();
        for (size_t f = 0; f < features.size(); ++f) {
            const Feature& feature = features[f];
            const auto sample = feature.column->sample(s);
            if (!feature.categorical) {
                row[f] = sample[feature.first];
                continue;
            }
            row[f] = std::numeric_limits<float>::quiet_NaN();
            for (size_t k = 0; k < feature.count; ++k)
                if (sample[feature.first + k] > 0.5f) row[f] = static_cast<float>(k);
        }
    }
    return std::optional<SampleFeatures>(std::move(out));
}

float SampleFeatures::value(int64_t index, size_t f) const {
    if (index < 0 || index >= samples || f >= names.size()) return std::numeric_limits<float>::quiet_NaN();
    return values[static_cast<size_t>(index) * names.size() + f];
}

std::string SampleFeatures::text(int64_t index, size_t f) const {
    static const std::vector<std::string> none;
    return eval::featureText(value(index, f), f < categories.size() ? categories[f] : none);
}

namespace {

// The report's figures copied between engine/eval's types and the api's, field by field.

EvaluationRecord toApi(const eval::SampleRecord& r) {
    return {r.index, r.source, r.trueClass, r.predicted, r.confidence, r.loss};
}

eval::SampleRecord toEval(const EvaluationRecord& r) {
    return {r.index, r.source, r.trueClass, r.predicted, r.confidence, r.loss};
}

template <typename To, typename From, typename Convert>
std::vector<To> convertAll(const std::vector<From>& from, Convert convert) {
    std::vector<To> out;
    out.reserve(from.size());
    for (const From& f : from) out.push_back(convert(f));
    return out;
}

ClassificationReport toApi(const eval::ClassificationReport& r) {
    ClassificationReport out;
    out.numClasses = r.numClasses;
    out.samples = r.samples;
    out.classNames = r.classNames;
    out.accuracy = r.accuracy;
    out.confusion = r.confusion;
    out.perClass = convertAll<ClassFigures>(r.perClass, [](const eval::ClassFigures& c) {
        return ClassFigures{c.name, c.precision, c.recall, c.f1, c.support};
    });
    out.macro = {r.macro.precision, r.macro.recall, r.macro.f1, r.macro.support};
    out.weighted = {r.weighted.precision, r.weighted.recall, r.weighted.f1, r.weighted.support};
    out.roc = convertAll<RocCurve>(r.roc, [](const eval::RocCurve& c) {
        return RocCurve{c.fpr, c.tpr, c.thresholds, c.auc, c.defined};
    });
    out.pr = convertAll<PrCurve>(r.pr, [](const eval::PrCurve& c) {
        return PrCurve{c.precision, c.recall, c.thresholds, c.averagePrecision, c.defined};
    });
    out.macroAuc = r.macroAuc;
    out.calibration = convertAll<CalibrationBin>(r.calibration, [](const eval::CalibrationBin& b) {
        return CalibrationBin{b.lower, b.upper, b.count, b.meanConfidence, b.accuracy};
    });
    out.expectedCalibrationError = r.expectedCalibrationError;
    out.logLoss = r.logLoss;
    out.records = convertAll<EvaluationRecord>(r.records, [](const eval::SampleRecord& s) { return toApi(s); });
    return out;
}

eval::ClassificationReport toEval(const ClassificationReport& r) {
    eval::ClassificationReport out;
    out.numClasses = r.numClasses;
    out.samples = r.samples;
    out.classNames = r.classNames;
    out.accuracy = r.accuracy;
    out.confusion = r.confusion;
    out.perClass = convertAll<eval::ClassFigures>(r.perClass, [](const ClassFigures& c) {
        return eval::ClassFigures{c.name, c.precision, c.recall, c.f1, c.support};
    });
    out.macro = {r.macro.precision, r.macro.recall, r.macro.f1, r.macro.support};
    out.weighted = {r.weighted.precision, r.weighted.recall, r.weighted.f1, r.weighted.support};
    out.roc = convertAll<eval::RocCurve>(r.roc, [](const RocCurve& c) {
        return eval::RocCurve{c.fpr, c.tpr, c.thresholds, c.auc, c.defined};
    });
    out.pr = convertAll<eval::PrCurve>(r.pr, [](const PrCurve& c) {
        return eval::PrCurve{c.precision, c.recall, c.thresholds, c.averagePrecision, c.defined};
    });
    out.macroAuc = r.macroAuc;
    out.calibration = convertAll<eval::CalibrationBin>(r.calibration, [](const CalibrationBin& b) {
        return eval::CalibrationBin{b.lower, b.upper, b.count, b.meanConfidence, b.accuracy};
    });
    out.expectedCalibrationError = r.expectedCalibrationError;
    out.logLoss = r.logLoss;
    out.records = convertAll<eval::SampleRecord>(r.records, [](const EvaluationRecord& s) { return toEval(s); });
    return out;
}

RegressionReport toApi(const eval::RegressionReport& r) {
    return {r.samples, r.width, r.mae, r.mse, r.rmse, r.r2, r.residuals,
            convertAll<EvaluationRecord>(r.records, [](const eval::SampleRecord& s) { return toApi(s); })};
}

eval::RegressionReport toEval(const RegressionReport& r) {
    return {r.samples, r.width, r.mae, r.mse, r.rmse, r.r2, r.residuals,
            convertAll<eval::SampleRecord>(r.records, [](const EvaluationRecord& s) { return toEval(s); })};
}

std::optional<eval::SampleFeatures> toEval(const SampleFeatures* f) {
    if (f == nullptr) return std::nullopt;
    eval::SampleFeatures out;
    out.names = f->names;
    out.categories = f->categories;
    out.values = f->values;
    out.samples = f->samples;
    return out;
}

}  // namespace

nlohmann::json reportJson(const ClassificationReport& report, size_t records, const SampleFeatures* features) {
    const std::optional<eval::SampleFeatures> f = toEval(features);
    return eval::reportJson(toEval(report), records, f ? &*f : nullptr);
}

nlohmann::json reportJson(const RegressionReport& report, size_t records, const SampleFeatures* features) {
    const std::optional<eval::SampleFeatures> f = toEval(features);
    return eval::reportJson(toEval(report), records, f ? &*f : nullptr);
}

std::string recordsCsv(const std::vector<EvaluationRecord>& records, const std::vector<std::string>& classNames,
                       const SampleFeatures* features) {
    const std::optional<eval::SampleFeatures> f = toEval(features);
    return eval::recordsCsv(convertAll<eval::SampleRecord>(records, [](const EvaluationRecord& r) { return toEval(r); }),
                            classNames, f ? &*f : nullptr);
}

Result<Evaluation> evaluate(const Predictions& p, int calibrationBins) {
    Evaluation e;
    if (p.lossType == "BinaryCrossentropy" && p.width > 1)
        return Error(ErrorCode::Unsupported,
                     "multi-label evaluation (binary cross-entropy over " + std::to_string(p.width) + " outputs) is not supported")
            .with("what", "multi-label evaluation");
    if (p.classification()) {
        eval::ClassificationOptions o;
        if (static_cast<int64_t>(p.classNames.size()) == p.numClasses()) o.classNames = p.classNames;
        o.calibrationBins = calibrationBins;
        o.sources = p.sources;
        KILN_ASSIGN(auto r, eval::evaluateClassification(p.probabilities(), p.labels(), p.numClasses(), o));
        e.classification = toApi(r);
    } else {
        if (p.targetWidth != p.width)
            return Error(ErrorCode::ShapeMismatch, "the model gives " + std::to_string(p.width) + " values per sample but the targets have " +
                                                       std::to_string(p.targetWidth))
                .with("reason", "outputs and targets differ in size");
        std::vector<double> pred(p.outputs.begin(), p.outputs.end()), truth(p.targets.begin(), p.targets.end());
        KILN_ASSIGN(auto r, eval::evaluateRegression(pred, truth, p.width, p.sources));
        e.regression = toApi(r);
    }
    return e;
}

}  // namespace kiln::engine::api
