// SPDX-License-Identifier: Apache-2.0
// Int8 calibration and the float-versus-int8 comparison, through the Trainer's evaluation path
// (the batches exactly as training's evaluation reads them) and io/quantize's CPU plans.
#include "engine/api/quantization.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "engine/api/evaluation.h"
#include "engine/core/thread_pool.h"
#include "engine/data/data_config.h"
#include "engine/io/quantize.h"
#include "engine/train/trainer.h"
#include "engine/train/weights.h"

namespace kiln::engine::api {

namespace {

bool isClassification(const std::string& lossType) {
    return lossType == "SparseCategoricalCrossentropy" || lossType == "CategoricalCrossentropy" ||
           lossType == "BinaryCrossentropy";
}

// Top-1 class of one output row (a width-1 head is binary: logit > 0 or probability > 0.5).
int64_t topClass(const float* row, int64_t width, bool fromLogits) {
    if (width == 1) return row[0] > (fromLogits ? 0.0f : 0.5f) ? 1 : 0;
    return static_cast<int64_t>(std::max_element(row, row + width) - row);
}

// True class of one target row: a class index, a one-hot row, or a binary target.
int64_t trueClass(const float* t, int64_t targetWidth, int64_t width) {
    if (width == 1) return t[0] > 0.5f ? 1 : 0;
    if (targetWidth == 1) return static_cast<int64_t>(t[0]);
    return static_cast<int64_t>(std::max_element(t, t + targetWidth) - t);
}

io::QuantScheme toIo(Int8Scheme scheme) {
    switch (scheme) {
    case Int8Scheme::Qdq: return io::QuantScheme::Qdq;
    case Int8Scheme::FullInteger: return io::QuantScheme::FullInteger;
    }
    return io::QuantScheme::Qdq;
}

Int8Scheme toApi(io::QuantScheme scheme) {
    switch (scheme) {
    case io::QuantScheme::Qdq: return Int8Scheme::Qdq;
    case io::QuantScheme::FullInteger: return Int8Scheme::FullInteger;
    }
    return Int8Scheme::Qdq;
}

Int8Quantization toApi(const io::Int8Quantization& q) {
    Int8Quantization out;
    for (const auto& [name, p] : q.values) out.values[name] = {p.scale, p.zeroPoint};
    out.perChannel = q.perChannel;
    out.scheme = toApi(q.scheme);
    return out;
}

Error noData(const std::string& reason) {
    return Error(ErrorCode::ConfigError, "data: " + reason).with("field", "data").with("reason", reason);
}

}  // namespace

Result<QuantizationReport> quantizeInt8(const io::Project& project, const std::string& projectPath,
                                        const QuantizationOptions& options, const std::function<void(int)>& progress) {
    auto step = [&](int pct) {
        if (progress) progress(pct);
    };
    if (options.calibrationSamples <= 0)
        return Error(ErrorCode::InvalidArgument, "the number of calibration samples must be positive")
            .with("field", "calibration_samples");
    if (options.schemes.empty())
        return Error(ErrorCode::InvalidArgument, "no int8 layout was asked for").with("field", "quantize");
    if (!(options.percentile == 0.0 || (options.percentile >= 50.0 && options.percentile <= 100.0)))
        return Error(ErrorCode::InvalidArgument, "the calibration percentile must lie between 50 and 100")
            .with("field", "calibration_percentile");
    if (!project.data.is_object() || project.data.empty())
        return noData("the project has no data to calibrate the int8 quantisation with").withFile(projectPath);
    KILN_ASSIGN(std::string weights, resolveWeights(options.weights));
    KILN_ASSIGN(Graph graph, io::modelGraph(project));
    auto modelR = ops::analyzeModel(graph);
    if (!modelR.ok()) return io::locate(modelR.error(), project);
    const ops::ModelInfo model = std::move(modelR.value());
    auto config = train::parseTrainingConfig(project.training, graph);
    if (!config.ok()) return config.error().withFile(projectPath);
    ThreadPool pool(options.threads);

    // The training split in order with the evaluation transforms; streamed formats get it in
    // the test stream's place.
    step(0);
    data::TestReplacement trainSplit;
    trainSplit.trainingSplit = true;
    auto calibData = train::openData(project.data, projectPath, config->seed, config->batchSize, false);
    if (calibData.ok() && calibData->trainStream)
        calibData = train::openData(project.data, projectPath, config->seed, config->batchSize, false, trainSplit);
    if (!calibData.ok()) {
        Error e = calibData.error();
        return e.file.empty() ? e.withFile(projectPath) : e;
    }
    const bool streamed = calibData->trainStream != nullptr;
    if (!streamed && calibData->train.count() == 0) return noData("the training split holds no samples").withFile(projectPath);
    auto calibTrainer = train::Trainer::create(model, *config, std::move(calibData.value()), pool);
    if (!calibTrainer.ok()) return io::locate(calibTrainer.error(), project);
    KILN_TRY(train::loadWeights((*calibTrainer)->params(), weights));

    QuantizationReport rep;
    std::unique_ptr<io::RangeCollector> collector;  // made for the first (largest) batch
    const int64_t wanted = options.calibrationSamples;
    std::set<std::string> values;  // what every asked layout needs calibrated
    for (Int8Scheme s : options.schemes) values.merge(io::quantizedValues(model, toIo(s)));
    auto calibrate = [&](const train::EvalBatch& b) -> Status {
        if (!collector) {
            KILN_ASSIGN(collector, io::RangeCollector::create(model, (*calibTrainer)->params(), values, b.size, pool));
            collector->setPercentile(options.percentile);
        }
        const int64_t take = std::min(b.size, wanted - collector->samples());
        KILN_TRY(collector->add(b.inputs, take));
        step(static_cast<int>(40 * collector->samples() / wanted));
        if (collector->samples() >= wanted) return Error(ErrorCode::Cancelled, "enough calibration samples");
        return {};
    };
    {
        const auto& d = (*calibTrainer)->data();
        auto r = streamed ? (*calibTrainer)->evaluate(*d.testStream, calibrate) : (*calibTrainer)->evaluate(d.train, calibrate);
        if (!r.ok() && r.error().code != ErrorCode::Cancelled) return r.error();
    }
    if (!collector || collector->samples() == 0) return noData("the training split holds no samples").withFile(projectPath);
    rep.calibrationSamples = collector->samples();
    rep.percentile = options.percentile;
    const std::map<std::string, io::ValueRange> ranges = collector->ranges();
    for (const auto& [name, range] : ranges) rep.ranges[name] = {range.min, range.max};
    std::vector<io::Int8Quantization> quantizations;  // as rep.models, for the simulators
    for (Int8Scheme s : options.schemes) {
        KILN_ASSIGN(io::Int8Quantization q, io::makeQuantization(model, ranges, options.perChannel, toIo(s)));
        Int8Comparison c;
        c.scheme = s;
        c.quantization = toApi(q);
        rep.models.push_back(std::move(c));
        quantizations.push_back(std::move(q));
    }
    collector.reset();
    calibTrainer->reset();

    // Float and int8 over the validation split, else test, else training.
    step(40);
    auto evalData = train::openData(project.data, projectPath, config->seed, config->batchSize, false);
    if (!evalData.ok()) return evalData.error();
    if (evalData->trainStream) rep.split = evalData->validationStream ? "validation" : evalData->testStream ? "test" : "train";
    else rep.split = evalData->validation ? "validation" : evalData->test ? "test" : "train";
    if (rep.split == "train" && evalData->trainStream) {
        evalData = train::openData(project.data, projectPath, config->seed, config->batchSize, false, trainSplit);
        if (!evalData.ok()) return evalData.error();
    }
    auto trainer = train::Trainer::create(model, *config, std::move(evalData.value()), pool);
    if (!trainer.ok()) return io::locate(trainer.error(), project);
    KILN_TRY(train::loadWeights((*trainer)->params(), weights));
    const auto& loss = (*trainer)->firstLoss();
    const bool fromLogits = loss.attrs.has("from_logits") && loss.attrs.getBool("from_logits");
    rep.classification = isClassification(loss.type);
    rep.metric = rep.classification ? "accuracy" : "mean_squared_error";
    size_t outputIndex = 0;
    for (size_t k = 0; k < model.outputs.size(); ++k)
        if (model.graph.nodes[static_cast<size_t>(model.outputs[k])].name == loss.output) outputIndex = k;

    std::vector<std::unique_ptr<io::Int8Simulator>> sims(rep.models.size());  // made for the first (largest) batch
    int64_t simBatch = 0;
    int64_t total = 0;
    {
        const auto& d = (*trainer)->data();
        total = rep.split == "validation" ? (d.trainStream ? 0 : d.validation->count())
                : rep.split == "test"     ? (d.trainStream ? 0 : d.test->count())
                                          : (d.trainStream ? 0 : d.train.count());
    }
    double floatScore = 0;
    std::vector<double> int8Score(rep.models.size(), 0.0), same(rep.models.size(), 0.0);
    int64_t n = 0;
    auto compare = [&](const train::EvalBatch& b) -> Status {
        const int64_t w = b.outputWidth;
        for (size_t m = 0; m < rep.models.size(); ++m) {
            auto& sim = sims[m];
            if (!sim || b.size > sim->batch()) {
                simBatch = std::max(simBatch, b.size);
                KILN_ASSIGN(sim, io::Int8Simulator::create(model, (*trainer)->params(), quantizations[m], simBatch, pool));
            }
            for (size_t k = 0; k < model.inputs.size(); ++k) {
                const int64_t per = model.nodes[static_cast<size_t>(model.inputs[k])].output.numelFrom(1);
                std::memcpy(sim->input(k), b.inputs[k], static_cast<size_t>(per * b.size) * sizeof(float));
            }
            KILN_TRY(sim->forward());
            const float* q = sim->output(outputIndex);
            auto& c = rep.models[m];
            for (int64_t s = 0; s < b.size; ++s) {
                const float* f = b.outputs + s * w;
                const float* g = q + s * w;
                const float* t = b.targets + s * b.targetWidth;
                for (int64_t e = 0; e < w; ++e) c.maxAbsDiff = std::max(c.maxAbsDiff, static_cast<double>(std::fabs(f[e] - g[e])));
                if (rep.classification) {
                    const int64_t truth = trueClass(t, b.targetWidth, w);
                    const int64_t pf = topClass(f, w, fromLogits), pq = topClass(g, w, fromLogits);
                    if (m == 0) floatScore += pf == truth;
                    int8Score[m] += pq == truth;
                    same[m] += pf == pq;
                } else if (b.targetWidth == w) {
                    for (int64_t e = 0; e < w; ++e) {
                        if (m == 0) floatScore += (f[e] - t[e]) * (f[e] - t[e]) / static_cast<double>(w);
                        int8Score[m] += (g[e] - t[e]) * (g[e] - t[e]) / static_cast<double>(w);
                    }
                }
            }
        }
        n += b.size;
        if (total > 0) step(40 + static_cast<int>(60 * n / total));
        return {};
    };
    const auto& d = (*trainer)->data();
    Result<train::EvalResult> r =
        d.trainStream ? (*trainer)->evaluate(rep.split == "validation" ? *d.validationStream : *d.testStream, compare)
                      : (*trainer)->evaluate(rep.split == "validation" ? *d.validation
                                             : rep.split == "test"     ? *d.test
                                                                       : d.train,
                                             compare);
    if (!r.ok()) return r.error();
    if (n == 0) return noData("the " + rep.split + " split holds no samples").withFile(projectPath);
    rep.samples = n;
    rep.floatMetric = floatScore / static_cast<double>(n);
    for (size_t m = 0; m < rep.models.size(); ++m) {
        rep.models[m].int8Metric = int8Score[m] / static_cast<double>(n);
        rep.models[m].agreement = rep.classification ? same[m] / static_cast<double>(n) : 0.0;
    }
    step(100);
    return rep;
}

const Int8Comparison* QuantizationReport::find(Int8Scheme scheme) const {
    for (const auto& m : models)
        if (m.scheme == scheme) return &m;
    return nullptr;
}

}  // namespace kiln::engine::api
