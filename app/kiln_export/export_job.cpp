// SPDX-License-Identifier: Apache-2.0
// The export job: loads the project and the run's weights, gathers the metadata that goes into
// the repository (class names, preprocessing, the run's metrics) and a held-out batch, and calls
// the repository writer.
#include "app/kiln_export/export_job.h"

#include <filesystem>
#include <fstream>

#include "engine/core/json_checked.h"
#include "engine/data/split.h"
#include "engine/io/project.h"
#include "engine/io/quantize.h"
#include "engine/io/tflite_export.h"
#include "engine/train/config.h"
#include "engine/train/weights.h"

namespace kiln::app {
using namespace kiln::engine;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// The run's final results (run.json next to the weights), if there is one.
json runMetrics(const std::string& weights) {
    fs::path run = fs::path(weights).parent_path() / "run.json";
    std::error_code ec;
    if (!fs::exists(run, ec)) return json::object();
    auto parsed = readJsonFileChecked(run.string());
    if (!parsed) return json::object();  // metrics are optional: a broken run.json only loses them
    json& j = parsed.value();
    if (!j.is_object() || !j.contains("results") || !j["results"].is_object()) return json::object();
    return std::move(j["results"]);
}

// The api's int8 quantisation as the ONNX and TensorFlow Lite exporters take it.
io::Int8Quantization exporterQuantization(const api::Int8Quantization& q) {
    io::Int8Quantization out;
    for (const auto& [name, p] : q.values) out.values[name] = {p.scale, p.zeroPoint};
    out.perChannel = q.perChannel;
    switch (q.scheme) {
    case api::Int8Scheme::Qdq: out.scheme = io::QuantScheme::Qdq; break;
    case api::Int8Scheme::FullInteger: out.scheme = io::QuantScheme::FullInteger; break;
    }
    return out;
}

// How raw data becomes model input, as the training pipeline did it.
json preprocessing(const io::Project& p, uint64_t seed) {
    const json& d = p.data;
    json pre = {{"layout", "NHWC"}};
    std::string format = d.value("format", "");
    if (!format.empty()) pre["source_format"] = format;
    if (d.contains("inputs")) pre["inputs"] = d["inputs"];
    if (format == "idx") {
        // IDX images: 8-bit pixels divided by 255.
        pre["pixel_scale"] = 1.0 / 255.0;
    }
    if (format == "csv" && d.value("standardize", false)) {
        // Refit the standardisation on the same training split to record its constants.
        json raw = d;
        raw["standardize"] = false;
        auto bundle = train::loadData(raw, p.path, seed);
        json cols = json::array();
        if (bundle.ok()) {
            for (const auto& [input, column] : bundle->inputs) {
                auto st = data::Standardizer::fit(bundle->train, column);
                if (!st.ok()) continue;
                cols.push_back({{"input", input}, {"column", column}, {"mean", st->mean()}, {"stddev", st->stddev()}});
            }
        }
        pre["standardize"] = cols;
    }
    return pre;
}

}  // namespace

Status checkQuantizeRequest(const ExportJobRequest& req, const io::ExportFormats& formats) {
    if (req.quantize == "none" || req.quantize.empty()) {
        if (req.calibrationPercentile != 0.0)
            return Error(ErrorCode::InvalidArgument, "percentile calibration needs int8 quantisation")
                .with("field", "calibration_percentile");
        if (req.int8Io)
            return Error(ErrorCode::InvalidArgument, "int8 inputs and outputs need int8 quantisation").with("field", "int8_io");
        return {};
    }
    if (req.quantize != "int8")
        return Error(ErrorCode::InvalidArgument, "unknown quantisation \"" + req.quantize + "\" (none or int8)")
            .with("field", "quantize").with("value", req.quantize);
    if (!formats.onnx && !formats.tflite)
        return Error(ErrorCode::InvalidArgument, "int8 quantisation needs the onnx or the tflite format")
            .with("field", "quantize")
            .with("format", "onnx, tflite");
    if (req.calibrationSamples <= 0)
        return Error(ErrorCode::InvalidArgument, "the number of calibration samples must be positive")
            .with("field", "calibration_samples");
    if (!(req.calibrationPercentile == 0.0 || (req.calibrationPercentile >= 50.0 && req.calibrationPercentile <= 100.0)))
        return Error(ErrorCode::InvalidArgument, "the calibration percentile must lie between 50 and 100")
            .with("field", "calibration_percentile");
    if (req.int8Io && !formats.tflite)
        return Error(ErrorCode::InvalidArgument, "int8 inputs and outputs need the tflite format")
            .with("field", "int8_io")
            .with("format", "tflite");
    return {};
}

json quantizationJson(const QuantizationSummary& q) {
    const auto& r = q.report;
    // One object per int8 file; the first one's fields are also at the top level.
    json models = json::array();
    for (const auto& f : q.files) {
        const auto& c = f.comparison;
        const bool qdq = c.scheme == api::Int8Scheme::Qdq;
        json m = {{"format", f.format},
                  {"file", f.file},
                  {"scheme", qdq ? "QDQ: per-channel symmetric int8 weights, per-tensor asymmetric int8 activations"
                             : f.int8Io ? "full integer: per-channel symmetric int8 weights, int32 biases, per-tensor "
                                          "asymmetric int8 activations, int8 inputs and outputs"
                                        : "full integer: per-channel symmetric int8 weights, int32 biases, per-tensor "
                                          "asymmetric int8 activations, float32 inputs and outputs"},
                  {"int8", c.int8Metric},
                  {"drop", r.floatMetric - c.int8Metric},
                  {"max_abs_diff", c.maxAbsDiff},
                  {"float_bytes", f.floatBytes},
                  {"int8_bytes", f.int8Bytes},
                  {"size_ratio", f.floatBytes > 0 ? static_cast<double>(f.int8Bytes) / static_cast<double>(f.floatBytes) : 0.0}};
        if (r.classification) m["agreement"] = c.agreement;
        if (!qdq) {
            // How a caller converts: real = (q - zero_point) * scale.
            m["input_output_type"] = f.int8Io ? "int8" : "float32";
            if (f.int8Io) {
                auto edges = [](const std::vector<EdgeQuantization>& list) {
                    json a = json::array();
                    for (const auto& e : list)
                        a.push_back({{"name", e.name}, {"dtype", "int8"}, {"scale", e.params.scale}, {"zero_point", e.params.zeroPoint}});
                    return a;
                };
                m["inputs"] = edges(f.inputs);
                m["outputs"] = edges(f.outputs);
            }
        }
        models.push_back(std::move(m));
    }
    json j = {{"type", "int8"},
              {"per_channel", q.files.empty() || q.files[0].comparison.quantization.perChannel},
              {"calibration_samples", r.calibrationSamples},
              {"calibration", r.percentile > 0.0 ? "percentile" : "min_max"},
              {"split", r.split},
              {"samples", r.samples},
              {"metric", r.metric},
              {"float", r.floatMetric}};
    if (r.percentile > 0.0) j["percentile"] = r.percentile;
    if (!models.empty())
        for (const auto& [k, v] : models[0].items())
            if (k != "format") j[k] = v;
    j["models"] = std::move(models);
    return j;
}

Result<ExportJobResult> runExportJob(const ExportJobRequest& req, const io::ProgressFn& progress) {
    auto step = [&](int pct, const std::string& what) {
        if (progress) progress(pct, what);
    };
    step(0, "load");
    KILN_ASSIGN(io::Project project, io::loadProject(req.project));
    KILN_ASSIGN(Graph graph, io::modelGraph(project));
    auto modelR = ops::analyzeModel(graph);
    if (!modelR.ok()) return io::locate(modelR.error(), project);
    ops::ModelInfo model = std::move(modelR.value());
    KILN_ASSIGN(io::ExportFormats formats, io::parseFormats(req.formats));
    KILN_TRY(checkQuantizeRequest(req, formats));

    uint64_t seed = project.training.is_object() ? project.training.value("seed", uint64_t{0}) : 0;
    exec::ParamStore params = exec::ParamStore::create(model, seed);
    if (req.quantize == "int8" && formats.tflite) {
        // Refuse what TensorFlow Lite cannot take (naming the node) before reading weights and
        // calibrating for it; which operators exist depends on the graph alone.
        auto probe = io::exportTflite(model, params, {});
        if (!probe.ok()) return io::locate(probe.error(), project);
    }
    if (req.weights.empty()) return Error(ErrorCode::InvalidArgument, "no weights file given").with("field", "weights");
    KILN_TRY(train::loadWeights(params, req.weights));

    ExportJobResult out;
    out.name = req.name.empty() ? project.name : req.name;
    io::RepositoryExport r;
    r.base = req.base;
    r.name = out.name;
    r.version = req.version;
    r.formats = formats;
    r.projectText = io::serializeProject(project);
    r.metrics = runMetrics(req.weights);
    r.meta.name = out.name;
    r.meta.kilnVersion = req.kilnVersion;
    r.meta.preprocessingJson = preprocessing(project, seed).dump();
    if (project.data.contains("class_names") && project.data["class_names"].is_array())
        for (const auto& c : project.data["class_names"])
            if (c.is_string()) r.meta.classNames.push_back(c.get<std::string>());

    // Held-out batch: validation split, else test, else training samples.
    step(2, "data");
    auto bundle = train::openData(project.data, project.path, seed, req.parityBatch, false);
    if (bundle.ok() && bundle->trainStream) {
        // Streamed data: the first batch of the validation split, else test, else training.
        auto& stream = bundle->validationStream ? *bundle->validationStream
                       : bundle->testStream     ? *bundle->testStream
                                                : *bundle->trainStream;
        out.paritySource = bundle->validationStream ? "validation" : bundle->testStream ? "test" : "train";
        if (bundle->classNames.size() && r.meta.classNames.empty()) r.meta.classNames = bundle->classNames;
        data::Batch batch;
        Status started = stream.startEpoch(0);
        auto more = started.ok() ? stream.next(batch) : Result<bool>(started.error());
        std::vector<Tensor> inputs;
        if (more.ok() && *more) {
            for (int i : model.inputs) {
                const std::string& input = model.graph.nodes[static_cast<size_t>(i)].name;
                auto it = bundle->inputs.find(input);
                std::string column = it == bundle->inputs.end() ? input : it->second;
                if (batch.column(column) < 0 && model.inputs.size() == 1 && batch.column("image") >= 0) column = "image";
                const int c = batch.column(column);
                Shape shape = model.nodes[static_cast<size_t>(i)].output.withBatch(batch.size);
                if (c < 0 || batch.columns[static_cast<size_t>(c)].size() != static_cast<size_t>(shape.numel())) {
                    inputs.clear();
                    break;
                }
                Tensor t(shape);
                std::memcpy(t.raw(), batch.columns[static_cast<size_t>(c)].data(), t.bytes());
                inputs.push_back(std::move(t));
            }
        }
        if (!inputs.empty()) r.parityInputs = std::move(inputs);
        else out.parityNote = more.ok() ? "the data does not match the model inputs" : more.error().message;
    } else if (bundle.ok()) {
        const data::InMemoryDataset* set = bundle->validation ? &*bundle->validation : bundle->test ? &*bundle->test : &bundle->train;
        out.paritySource = bundle->validation ? "validation" : bundle->test ? "test" : "train";
        if (bundle->classNames.size() && r.meta.classNames.empty()) r.meta.classNames = bundle->classNames;
        int64_t n = std::min<int64_t>(req.parityBatch, set->count());
        std::vector<Tensor> inputs;
        for (int i : model.inputs) {
            const std::string& input = model.graph.nodes[static_cast<size_t>(i)].name;
            auto it = bundle->inputs.find(input);
            const data::Column* col = set->column(it == bundle->inputs.end() ? input : it->second);
            Shape shape = model.nodes[static_cast<size_t>(i)].output.withBatch(n);
            if (!col || n <= 0 || col->sampleSize() != shape.numelFrom(1)) {
                inputs.clear();
                break;
            }
            Tensor t(shape);
            std::memcpy(t.raw(), col->values.data(), t.bytes());
            inputs.push_back(std::move(t));
        }
        if (!inputs.empty()) r.parityInputs = std::move(inputs);
        else out.parityNote = "the data does not match the model inputs";
    } else {
        out.parityNote = bundle.error().message;
    }
    if (r.parityInputs.empty()) {
        out.paritySource = "synthetic";
        r.parityInputs = io::syntheticInputs(model, req.parityBatch, seed + 1);
    }
    r.paritySource = out.paritySource;

    int first = 5;
    if (req.quantize == "int8") {
        // Calibration and the float/int8 comparison, then the QDQ model from the same ranges.
        api::QuantizationOptions qo;
        qo.weights = req.weights;
        qo.calibrationSamples = req.calibrationSamples;
        qo.percentile = req.calibrationPercentile;
        qo.threads = req.threads;
        qo.schemes.clear();
        if (formats.onnx) qo.schemes.push_back(api::Int8Scheme::Qdq);
        if (formats.tflite) qo.schemes.push_back(api::Int8Scheme::FullInteger);
        QuantizationSummary qs;
        KILN_ASSIGN(qs.report, api::quantizeInt8(project, req.project, qo,
                                                 [&](int pct) { step(5 + pct * 55 / 100, "quantize"); }));
        for (const auto& c : qs.report.models) {
            QuantizedFile f;
            f.comparison = c;
            std::string floatBytes;
            const io::Int8Quantization quantization = exporterQuantization(c.quantization);
            if (c.scheme == api::Int8Scheme::Qdq) {
                f.format = "onnx";
                f.file = "model.int8.onnx";
                f.floatFile = "model.onnx";
                KILN_ASSIGN(r.onnxInt8, io::exportOnnx(model, params, r.meta, nullptr, &quantization));
                KILN_ASSIGN(floatBytes, io::exportOnnx(model, params, r.meta));
                f.int8Bytes = static_cast<int64_t>(r.onnxInt8.size());
            } else {
                f.format = "tflite";
                f.file = "model.int8.tflite";
                f.floatFile = "model.tflite";
                KILN_ASSIGN(r.tfliteInt8, io::exportTflite(model, params, r.meta, &quantization, req.int8Io));
                f.int8Io = req.int8Io;
                if (req.int8Io) {
                    // The grid of each edge value, as the exporter writes it on the tensor.
                    auto edge = [&](int node) -> Result<EdgeQuantization> {
                        const std::string& name = model.graph.nodes[static_cast<size_t>(node)].name;
                        auto it = c.quantization.values.find(name);
                        if (it == c.quantization.values.end())
                            return Error(ErrorCode::Internal, "no int8 parameters for " + name).withNode(name);
                        return EdgeQuantization{name, it->second};
                    };
                    for (int i : model.inputs) {
                        KILN_ASSIGN(auto e, edge(i));
                        f.inputs.push_back(std::move(e));
                    }
                    for (int o : model.outputs) {
                        KILN_ASSIGN(auto e, edge(o));
                        f.outputs.push_back(std::move(e));
                    }
                }
                KILN_ASSIGN(floatBytes, io::exportTflite(model, params, r.meta));
                f.int8Bytes = static_cast<int64_t>(r.tfliteInt8.size());
            }
            f.floatBytes = static_cast<int64_t>(floatBytes.size());
            qs.files.push_back(std::move(f));
        }
        r.quantization = quantizationJson(qs);
        out.quantization = std::move(qs);
        first = 60;
    }

    ThreadPool pool(req.threads);
    auto scaled = [&](int pct, const std::string& what) { step(first + pct * (100 - first) / 100, what); };
    KILN_ASSIGN(out.repo, io::exportToRepository(model, params, r, pool, scaled));
    return out;
}

}  // namespace kiln::app
