// SPDX-License-Identifier: Apache-2.0
// Predictions over a data split through the Trainer's evaluation path, and their report.
#include "engine/api/evaluation.h"

#include <algorithm>
#include <filesystem>

#include "engine/api/devices.h"
#include "engine/core/thread_pool.h"
#include "engine/data/data_config.h"
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

Result<Predictions> predict(const io::Project& project, const std::string& projectPath, const EvaluationOptions& options) {
    Predictions out;
    KILN_ASSIGN(out.weightsPath, resolveWeights(options.weights));
    auto model = ops::analyzeModel(project.graph);
    if (!model.ok()) return io::locate(model.error(), project);
    auto config = train::parseTrainingConfig(project.training, project.graph);
    if (!config.ok()) return config.error().withFile(projectPath);
    if (options.batchSize) config->batchSize = *options.batchSize;

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
    out.split = split;

    auto backend = backendFor(*config);
    if (!backend.ok()) return backend.error().withFile(projectPath);
    auto bundle = train::openData(project.data, projectPath, config->seed, config->batchSize, false, replacement);
    if (!bundle.ok()) {
        Error e = bundle.error();
        return e.file.empty() ? e.withFile(projectPath) : e;
    }
    const bool streamed = bundle->trainStream != nullptr;
    if (!streamed) {
        if (split == "validation" ? !bundle->validation : split != "train" && !bundle->test)
            return splitError("the project's data has no " + split + " split");
    } else if (split == "validation" ? !bundle->validationStream : !bundle->testStream) {
        return splitError("the project's data has no " + split + " split");
    }
    out.classNames = bundle->classNames;

    ThreadPool pool(options.threads);
    auto trainer = train::Trainer::create(*model, *config, std::move(bundle.value()), pool, *backend);
    if (!trainer.ok()) return io::locate(trainer.error(), project);
    KILN_TRY(train::loadWeights((*trainer)->params(), out.weightsPath));
    const auto& loss = (*trainer)->firstLoss();
    out.lossType = loss.type;
    out.fromLogits = loss.attrs.has("from_logits") && loss.attrs.getBool("from_logits");

    auto observer = [&](const train::EvalBatch& b) -> Status {
        out.width = b.outputWidth;
        out.targetWidth = b.targetWidth;
        out.outputs.insert(out.outputs.end(), b.outputs, b.outputs + b.size * b.outputWidth);
        out.targets.insert(out.targets.end(), b.targets, b.targets + b.size * b.targetWidth);
        for (int64_t i = 0; i < b.size; ++i) {
            if (b.origins && static_cast<size_t>(i) < b.origins->size() && !(*b.origins)[static_cast<size_t>(i)].empty())
                out.sources.push_back((*b.origins)[static_cast<size_t>(i)]);
            else if (b.sourceIndices)
                out.sources.push_back("sample " + std::to_string((*b.sourceIndices)[static_cast<size_t>(i)]));
            else
                out.sources.push_back("row " + std::to_string(b.firstRow + i + 1));
        }
        out.samples += b.size;
        return {};
    };
    const auto& data = (*trainer)->data();
    Result<train::EvalResult> result = streamed
        ? (*trainer)->evaluate(split == "validation" ? *data.validationStream : *data.testStream, observer)
        : (*trainer)->evaluate(split == "train" ? data.train : split == "validation" ? *data.validation : *data.test, observer);
    if (!result.ok()) return result.error();
    out.loss = result->loss;
    if (out.samples == 0) return splitError("the " + split + " split holds no samples");
    return out;
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
        e.classification = std::move(r);
    } else {
        if (p.targetWidth != p.width)
            return Error(ErrorCode::ShapeMismatch, "the model gives " + std::to_string(p.width) + " values per sample but the targets have " +
                                                       std::to_string(p.targetWidth))
                .with("reason", "outputs and targets differ in size");
        std::vector<double> pred(p.outputs.begin(), p.outputs.end()), truth(p.targets.begin(), p.targets.end());
        KILN_ASSIGN(auto r, eval::evaluateRegression(pred, truth, p.width, p.sources));
        e.regression = std::move(r);
    }
    return e;
}

}  // namespace kiln::engine::api
