// kiln-test-timeout: 1800
// SPDX-License-Identifier: Apache-2.0
// Full-integer TensorFlow Lite models against tf.lite.Interpreter. (1) The Fashion-MNIST MLP
// example and a small CNN (convolution + batch norm, depthwise convolution, max and average
// pooling, dense) are trained for one epoch with kiln-train and exported with kiln-export
// --formats tflite --quantize int8: the report, then the interpreter runs model.tflite and
// model.int8.tflite on test images, which must agree on the top-1 class of at least 98% of them;
// every operator of the int8 model but the input QUANTIZE and output DEQUANTIZE must be integer
// only. (2) The small CNN and a model covering every exported operator, calibrated on synthetic
// inputs: the interpreter's outputs of the int8 model match Kiln's int8 simulation within a few
// steps of the output grid.
#include <QtTest>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <cmath>
#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "../app/app_test_util.h"
#include "engine/io/model_repository.h"
#include "engine/io/project.h"
#include "engine/io/quantize.h"
#include "engine/io/tflite_export.h"
#include "tests/python_env.h"

using namespace kiln::engine;
using nlohmann::json;

namespace {

QString dataDir() {
    QString d = qEnvironmentVariable("KILN_DATA");
    if (d.isEmpty()) d = QDir::homePath() + "/.cache/kiln/data";
    return d;
}

// A small CNN on Fashion-MNIST: Conv2D + BatchNormalization (folded) + ReLU, DepthwiseConv2D with
// a fused ReLU, max pooling, a strided Conv2D, average pooling and a dense head. (With 8 and 16
// filters the int8 agreement was 98.5–98.6%, too close to the bar; 16 and 32 give 99.1%.)
const char* kSmallCnn = R"({"format": "kiln-project", "version": 2, "name": "small_cnn",
  "graph": {"nodes": [
    {"name": "image", "op": "Input", "attrs": {"shape": [28, 28, 1]}},
    {"name": "conv1", "op": "Conv2D", "inputs": ["image"], "attrs": {"filters": 16, "kernel_size": [3, 3], "padding": "same", "use_bias": false}},
    {"name": "bn1", "op": "BatchNormalization", "inputs": ["conv1"]},
    {"name": "relu1", "op": "ReLU", "inputs": ["bn1"]},
    {"name": "dw", "op": "DepthwiseConv2D", "inputs": ["relu1"], "attrs": {"kernel_size": [3, 3], "padding": "same", "activation": "relu"}},
    {"name": "pool1", "op": "MaxPooling2D", "inputs": ["dw"], "attrs": {"pool_size": [2, 2]}},
    {"name": "conv2", "op": "Conv2D", "inputs": ["pool1"], "attrs": {"filters": 32, "kernel_size": [3, 3], "strides": [2, 2], "activation": "relu"}},
    {"name": "pool2", "op": "AveragePooling2D", "inputs": ["conv2"], "attrs": {"pool_size": [2, 2]}},
    {"name": "flat", "op": "Flatten", "inputs": ["pool2"]},
    {"name": "logits", "op": "Dense", "inputs": ["flat"], "attrs": {"units": 10}}]},
  "data": {"format": "idx",
    "train": {"images": "${KILN_DATA}/fashion-mnist/train-images-idx3-ubyte.gz", "labels": "${KILN_DATA}/fashion-mnist/train-labels-idx1-ubyte.gz"},
    "test": {"images": "${KILN_DATA}/fashion-mnist/t10k-images-idx3-ubyte.gz", "labels": "${KILN_DATA}/fashion-mnist/t10k-labels-idx1-ubyte.gz"},
    "inputs": {"image": "image"}},
  "training": {"epochs": 1, "batch_size": 64, "seed": 1, "optimizer": {"type": "adam", "learning_rate": 0.003},
    "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}}})";

// Every operator the TFLite exporter writes, in int8: the float export test's coverage model.
const char* kCoverage = R"({"format":"kiln-project","version":2,"name":"coverage","graph":{"nodes":[
  {"name":"x","op":"Input","attrs":{"shape":[8,8,3]}},
  {"name":"rs","op":"Rescaling","inputs":["x"],"attrs":{"scale":0.5,"offset":-0.25}},
  {"name":"zp","op":"ZeroPadding2D","inputs":["rs"],"attrs":{"padding":[1,0,2,1]}},
  {"name":"c0","op":"Conv2D","inputs":["zp"],"attrs":{"filters":6,"kernel_size":[2,4],"activation":"tanh"}},
  {"name":"dw","op":"DepthwiseConv2D","inputs":["c0"],"attrs":{"depth_multiplier":2,"padding":"same","activation":"relu6"}},
  {"name":"dws","op":"DepthwiseConv2D","inputs":["dw"],"attrs":{"kernel_size":[3,2],"strides":2,"padding":"same"}},
  {"name":"bn","op":"BatchNormalization","inputs":["dws"]},
  {"name":"gdw","op":"GlobalAveragePooling2D","inputs":["bn"]},
  {"name":"c","op":"Conv2D","inputs":["dw"],"attrs":{"filters":6,"padding":"same"}},
  {"name":"cbn","op":"BatchNormalization","inputs":["c"]},
  {"name":"up","op":"UpSampling2D","inputs":["cbn"],"attrs":{"interpolation":"bilinear"}},
  {"name":"up2","op":"UpSampling2D","inputs":["cbn"],"attrs":{"size":[2,3]}},
  {"name":"gmp","op":"GlobalMaxPooling2D","inputs":["up"]},
  {"name":"mp","op":"MaxPooling2D","inputs":["cbn"],"attrs":{"pool_size":[3,3],"strides":[2,2],"padding":"same"}},
  {"name":"ap","op":"AveragePooling2D","inputs":["cbn"],"attrs":{"pool_size":[3,3],"strides":[2,2],"padding":"same"}},
  {"name":"s","op":"SiLU","inputs":["cbn"]},
  {"name":"hs","op":"HardSwish","inputs":["s"]},
  {"name":"hsg","op":"HardSigmoid","inputs":["cbn"]},
  {"name":"cl","op":"Clip","inputs":["hsg"],"attrs":{"min":0.2,"max":0.7}},
  {"name":"lr","op":"LeakyReLU","inputs":["cbn"]},
  {"name":"m","op":"Multiply","inputs":["hs","cl","lr"]},
  {"name":"gap","op":"GlobalAveragePooling2D","inputs":["m"]},
  {"name":"ex","op":"Dense","inputs":["gap"],"attrs":{"units":6,"activation":"sigmoid"}},
  {"name":"exr","op":"Reshape","inputs":["ex"],"attrs":{"target_shape":[1,1,6]}},
  {"name":"se2","op":"Multiply","inputs":["exr","cbn"]},
  {"name":"sub","op":"Subtract","inputs":["m","se2"]},
  {"name":"gap2","op":"GlobalAveragePooling2D","inputs":["sub"]},
  {"name":"d","op":"Dense","inputs":["gap2"],"attrs":{"units":5,"activation":"relu"}},
  {"name":"dbn","op":"BatchNormalization","inputs":["d"]},
  {"name":"g","op":"GELU","inputs":["dbn"]},
  {"name":"t","op":"Tanh","inputs":["g"]},
  {"name":"sg","op":"Sigmoid","inputs":["t"]},
  {"name":"r6","op":"ReLU6","inputs":["sg"]},
  {"name":"re","op":"ReLU","inputs":["dbn"]},
  {"name":"fl","op":"Flatten","inputs":["mp"]},
  {"name":"fa","op":"Flatten","inputs":["ap"]},
  {"name":"cat","op":"Concatenate","inputs":["r6","re","gmp","gdw","fl","fa"]},
  {"name":"dr","op":"Dropout","inputs":["cat"]},
  {"name":"out","op":"Dense","inputs":["dr"],"attrs":{"units":3,"activation":"softmax"}},
  {"name":"sm","op":"Softmax","inputs":["d"]},
  {"name":"sum","op":"Add","inputs":["d","sm","dbn"]}],"outputs":["out","hs","up2","sum"]}})";

}  // namespace

class TestTfliteInt8Interop : public QObject {
    Q_OBJECT

private:
    QString m_python;

    // Runs the checker on a manifest; returns its JSON lines by model name.
    std::map<std::string, json> check(const QString& manifestPath, int expected) {
        QProcess py;
        py.start(m_python, {QString(KILN_SOURCE_DIR) + "/tests/interop/tflite_int8_check.py", manifestPath});
        if (!py.waitForFinished(900000)) qWarning("the interpreter did not finish");
        const QString out = QString::fromUtf8(py.readAllStandardOutput());
        std::map<std::string, json> results;
        for (const QString& line : out.split('\n')) {
            if (!line.startsWith('{')) continue;
            qInfo().noquote() << line;
            const json r = json::parse(line.toStdString());
            results[r["name"].get<std::string>()] = r;
        }
        if (py.exitCode() != 0 || int(results.size()) != expected)
            qWarning().noquote() << QString::fromUtf8(py.readAllStandardError()).right(4000);
        return results;
    }

    static void expectIntegerOnly(const json& r) {
        const std::string line = r.dump();
        QVERIFY2(!r.contains("error"), line.c_str());
        QVERIFY2(r["float_operators"].empty(), line.c_str());
        QCOMPARE(r["input_types"][0].get<std::string>(), std::string("float32"));
        QCOMPARE(r["output_types"][0].get<std::string>(), std::string("float32"));
        const auto& ops = r["operators"];
        QVERIFY2(std::find(ops.begin(), ops.end(), "QUANTIZE") != ops.end(), line.c_str());
        QVERIFY2(std::find(ops.begin(), ops.end(), "DEQUANTIZE") != ops.end(), line.c_str());
    }

private slots:
    void initTestCase() {
        m_python = kiln::test::pythonEnvInterpreter();
        if (m_python.isEmpty()) QSKIP("the Python environment is not available");
    }

    void trainedModelsThroughKilnExport() {
        const QString fashion = dataDir() + "/fashion-mnist";
        if (!QFileInfo::exists(fashion + "/train-images-idx3-ubyte.gz"))
            QSKIP("Fashion-MNIST is not in the data cache (kiln-fetch-data)");
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        QFile cnn(tmp.filePath("small_cnn.kiln"));
        QVERIFY(cnn.open(QIODevice::WriteOnly));
        cnn.write(kSmallCnn);
        cnn.close();
        const std::vector<std::pair<QString, QString>> projects = {
            {"mlp", QString(KILN_SOURCE_DIR) + "/resources/examples/fashion_mlp.kiln"}, {"cnn", cnn.fileName()}};
        json manifest = {{"models", json::array()}};
        for (const auto& [name, project] : projects) {
            const QString runDir = tmp.filePath(name + "_run");
            auto train = kiln::test::runProgram("kiln-train", {project, "--epochs", "1", "--run-dir", runDir, "--quiet",
                                                               "--threads", "2", "--run-store", "none"}, 1200000);
            QVERIFY2(train.exitCode == 0, qPrintable(train.err));
            auto exp = kiln::test::runProgram("kiln_export/kiln-export",
                                              {project, "--weights", runDir + "/weights.safetensors", "--base",
                                               tmp.filePath("repo"), "--name", name, "--format", "tflite", "--quantize",
                                               "int8", "--json", "--threads", "2"}, 900000);
            QVERIFY2(exp.exitCode == 0, qPrintable(exp.err));
            const QJsonObject j = QJsonDocument::fromJson(exp.out.trimmed().toUtf8()).object();
            const QJsonObject q = j["quantization"].toObject();
            QCOMPARE(q["file"].toString(), QString("model.int8.tflite"));
            QCOMPARE(q["metric"].toString(), QString("accuracy"));
            QCOMPARE(q["split"].toString(), QString("test"));
            QCOMPARE(q["samples"].toInt(), 10000);
            const QJsonArray models = q["models"].toArray();
            QCOMPARE(models.size(), 1);
            QCOMPARE(models[0].toObject()["format"].toString(), QString("tflite"));
            const double agreement = q["agreement"].toDouble(), ratio = q["size_ratio"].toDouble();
            qInfo("%s, Kiln: float %.4f, int8 %.4f, agreement %.4f on %d test images; %lld -> %lld bytes (%.3f)",
                  qPrintable(name), q["float"].toDouble(), q["int8"].toDouble(), agreement, q["samples"].toInt(),
                  qint64(q["float_bytes"].toDouble()), qint64(q["int8_bytes"].toDouble()), ratio);
            QVERIFY(q["float"].toDouble() > 0.7);  // one epoch trains both well past chance
            QVERIFY2(agreement >= 0.98, qPrintable(QString::number(agreement)));
            QVERIFY2(std::fabs(q["drop"].toDouble()) <= 0.02, qPrintable(QString::number(q["drop"].toDouble())));
            // Weights in int8 and biases in int32: about a quarter of the float file, more for
            // the CNN whose graph and per-channel scales weigh more beside its few weights.
            QVERIFY2(ratio > 0.2 && ratio < (name == "mlp" ? 0.3 : 0.6), qPrintable(QString::number(ratio)));

            const QString dir = j["version_dir"].toString();
            QVERIFY(QFileInfo::exists(dir + "/model.tflite"));
            QCOMPARE(qint64(q["int8_bytes"].toDouble()), QFileInfo(dir + "/model.int8.tflite").size());
            QCOMPARE(qint64(q["float_bytes"].toDouble()), QFileInfo(dir + "/model.tflite").size());
            QFile desc(dir + "/kiln-model.json");
            QVERIFY(desc.open(QIODevice::ReadOnly));
            const QJsonObject meta = QJsonDocument::fromJson(desc.readAll()).object();
            QCOMPARE(meta["files"].toObject()["tflite_int8"].toString(), QString("model.int8.tflite"));
            manifest["models"].push_back({{"name", name.toStdString()},
                                          {"file", (dir + "/model.int8.tflite").toStdString()},
                                          {"float_file", (dir + "/model.tflite").toStdString()},
                                          {"images", (fashion + "/t10k-images-idx3-ubyte.gz").toStdString()},
                                          {"labels", (fashion + "/t10k-labels-idx1-ubyte.gz").toStdString()},
                                          {"count", 2000},
                                          {"input", "image"},
                                          {"output", "logits"}});
        }
        const QString manifestPath = tmp.filePath("manifest.json");
        std::ofstream(manifestPath.toStdString()) << manifest.dump(2);
        auto results = check(manifestPath, 2);
        QCOMPARE(int(results.size()), 2);
        for (const auto& [name, r] : results) {
            expectIntegerOnly(r);
            const std::string line = r.dump();
            QVERIFY2(r["agreement"].get<double>() >= 0.98, line.c_str());
            QVERIFY2(std::fabs(r["float_accuracy"].get<double>() - r["int8_accuracy"].get<double>()) <= 0.02, line.c_str());
            const auto& ops = r["operators"];
            if (name == "cnn")
                for (const char* op : {"CONV_2D", "DEPTHWISE_CONV_2D", "MAX_POOL_2D", "AVERAGE_POOL_2D", "FULLY_CONNECTED"})
                    QVERIFY2(std::find(ops.begin(), ops.end(), op) != ops.end(), line.c_str());
        }
    }

    void interpreterMatchesSimulation() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const std::string base = tmp.path().toStdString();
        ThreadPool pool(2);
        json manifest = {{"models", json::array()}};
        std::map<std::string, std::map<std::string, float>> steps;  // model → output → grid step
        for (const auto& [name, text] : {std::pair<std::string, const char*>{"small_cnn", kSmallCnn}, {"coverage", kCoverage}}) {
            auto project = io::parseProject(text, name + ".kiln");
            QVERIFY2(project.ok(), project.ok() ? "" : project.error().toString().c_str());
            auto model = ops::analyzeModel(project->graph);
            QVERIFY2(model.ok(), model.ok() ? "" : model.error().toString().c_str());
            exec::ParamStore params = exec::ParamStore::create(*model, 21);
            // Batch-norm statistics away from the identity, so that folding shows in the numbers.
            for (auto& p : params.params())
                if (p.name.ends_with("moving_variance") || p.name.ends_with("moving_mean") || p.name.ends_with("gamma") ||
                    p.name.ends_with("beta"))
                    for (int64_t e = 0; e < p.value.numel(); ++e) p.value.data<float>()[e] += 0.25f * static_cast<float>(e % 3);
            const int64_t n = 16;
            const std::vector<Tensor> calib = io::syntheticInputs(*model, n, 5);
            auto rc = io::RangeCollector::create(*model, params, io::quantizedValues(*model, io::QuantScheme::FullInteger), n, pool);
            QVERIFY2(rc.ok(), rc.ok() ? "" : rc.error().toString().c_str());
            QVERIFY((*rc)->add({calib[0].data<float>()}, n).ok());
            auto quant = io::makeQuantization(*model, (*rc)->ranges(), true, io::QuantScheme::FullInteger);
            QVERIFY2(quant.ok(), quant.ok() ? "" : quant.error().toString().c_str());
            auto bytes = io::exportTflite(*model, params, {}, &*quant);
            QVERIFY2(bytes.ok(), bytes.ok() ? "" : bytes.error().toString().c_str());
            const std::string file = base + "/" + name + ".int8.tflite";
            std::ofstream(file, std::ios::binary) << *bytes;

            // Test inputs other than the calibration ones.
            const std::vector<Tensor> test = io::syntheticInputs(*model, n, 9);
            auto sim = io::Int8Simulator::create(*model, params, *quant, n, pool);
            QVERIFY(sim.ok());
            std::memcpy((*sim)->input(0), test[0].data<float>(), test[0].bytes());
            QVERIFY((*sim)->forward().ok());
            const std::string in = base + "/" + name + "_in.f32";
            std::ofstream(in, std::ios::binary).write(static_cast<const char*>(test[0].raw()), std::streamsize(test[0].bytes()));
            json entry = {{"name", name}, {"file", file}, {"outputs", json::array()},
                          {"inputs", {{{"name", model->graph.nodes[size_t(model->inputs[0])].name}, {"file", in},
                                       {"shape", test[0].shape().dims()}}}}};
            for (size_t k = 0; k < model->outputs.size(); ++k) {
                const std::string out = model->graph.nodes[size_t(model->outputs[k])].name;
                const Shape s = model->nodes[size_t(model->outputs[k])].output.withBatch(n);
                const std::string ref = base + "/" + name + "_" + out + ".f32";
                std::ofstream(ref, std::ios::binary)
                    .write(reinterpret_cast<const char*>((*sim)->output(k)), std::streamsize(s.numel() * 4));
                entry["outputs"].push_back({{"name", out}, {"reference", ref}, {"shape", s.dims()}});
                steps[name][out] = quant->values.at(out).scale;
            }
            manifest["models"].push_back(entry);
        }
        const std::string manifestPath = base + "/manifest.json";
        std::ofstream(manifestPath) << manifest.dump(2);
        auto results = check(QString::fromStdString(manifestPath), 2);
        QCOMPARE(int(results.size()), 2);
        for (const auto& [name, r] : results) {
            expectIntegerOnly(r);
            const std::string line = r.dump();
            for (const auto& [out, o] : r["per_output"].items()) {
                const double step = steps[name][out];
                QVERIFY2(std::fabs(o["step"].get<double>() - step) <= 1e-6 * step, line.c_str());
                // The interpreter and the simulation round every value onto the same grids; the
                // interpreter's fixed-point rescaling (and lookup tables) may put a value one step
                // away, and later operators carry that on. Measured: 2 steps for the small CNN,
                // at most 3 for the coverage model, whose outputs pass through up to 14
                // operators, some of them decompositions whose inner values the simulation does
                // not round (SiLU, HardSigmoid, the three-operand product). A wrong bias or
                // weight scale is off by tens of steps.
                const double allowed = (name == "small_cnn" ? 3 : 5) * step;
                QVERIFY2(o["max_abs_diff"].get<double>() <= allowed, (out + ": " + line).c_str());
            }
        }
    }

    // --int8-io: the small CNN and a model whose outputs include an Input and a Dropout, with int8
    // model inputs and outputs. The interpreter must see int8 tensors at the edges carrying the
    // calibrated scale and zero point, no QUANTIZE or DEQUANTIZE operator, and (fed and read
    // through those parameters) match Kiln's int8 simulation as the float-edged model does. The
    // second model is also written with float edges: its Input output must be the float input.
    void int8InputsAndOutputs() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const std::string base = tmp.path().toStdString();
        ThreadPool pool(2);
        const char* passthrough = R"({"format":"kiln-project","version":2,"name":"passthrough","graph":{"nodes":[
          {"name":"x","op":"Input","attrs":{"shape":[6]}},
          {"name":"d","op":"Dense","inputs":["x"],"attrs":{"units":4,"activation":"relu"}},
          {"name":"dr","op":"Dropout","inputs":["d"]},
          {"name":"p","op":"Dense","inputs":["dr"],"attrs":{"units":3}}],"outputs":["p","x","dr"]}})";
        json manifest = {{"models", json::array()}};
        std::map<std::string, std::map<std::string, io::QuantParams>> expected;  // model → edge tensor → parameters
        struct Case {
            std::string name;
            const char* text;
            bool int8Io;
        };
        for (const Case& c : {Case{"small_cnn_int8_io", kSmallCnn, true}, Case{"passthrough_int8_io", passthrough, true},
                              Case{"passthrough_float_io", passthrough, false}}) {
            auto project = io::parseProject(c.text, c.name + ".kiln");
            QVERIFY2(project.ok(), project.ok() ? "" : project.error().toString().c_str());
            auto model = ops::analyzeModel(project->graph);
            QVERIFY2(model.ok(), model.ok() ? "" : model.error().toString().c_str());
            exec::ParamStore params = exec::ParamStore::create(*model, 21);
            const int64_t n = 16;
            const std::vector<Tensor> calib = io::syntheticInputs(*model, n, 5);
            auto rc = io::RangeCollector::create(*model, params, io::quantizedValues(*model, io::QuantScheme::FullInteger), n, pool);
            QVERIFY2(rc.ok(), rc.ok() ? "" : rc.error().toString().c_str());
            QVERIFY((*rc)->add({calib[0].data<float>()}, n).ok());
            auto quant = io::makeQuantization(*model, (*rc)->ranges(), true, io::QuantScheme::FullInteger);
            QVERIFY2(quant.ok(), quant.ok() ? "" : quant.error().toString().c_str());
            auto bytes = io::exportTflite(*model, params, {}, &*quant, c.int8Io);
            QVERIFY2(bytes.ok(), bytes.ok() ? "" : bytes.error().toString().c_str());
            const std::string file = base + "/" + c.name + ".tflite";
            std::ofstream(file, std::ios::binary) << *bytes;

            const std::vector<Tensor> test = io::syntheticInputs(*model, n, 9);
            auto sim = io::Int8Simulator::create(*model, params, *quant, n, pool);
            QVERIFY(sim.ok());
            std::memcpy((*sim)->input(0), test[0].data<float>(), test[0].bytes());
            QVERIFY((*sim)->forward().ok());
            const std::string inName = model->graph.nodes[size_t(model->inputs[0])].name;
            const std::string in = base + "/" + c.name + "_in.f32";
            std::ofstream(in, std::ios::binary).write(static_cast<const char*>(test[0].raw()), std::streamsize(test[0].bytes()));
            json entry = {{"name", c.name}, {"file", file}, {"outputs", json::array()},
                          {"inputs", {{{"name", inName}, {"file", in}, {"shape", test[0].shape().dims()}}}}};
            expected[c.name][inName] = quant->values.at(inName);
            for (size_t k = 0; k < model->outputs.size(); ++k) {
                const std::string out = model->graph.nodes[size_t(model->outputs[k])].name;
                const Shape s = model->nodes[size_t(model->outputs[k])].output.withBatch(n);
                const std::string ref = base + "/" + c.name + "_" + out + ".f32";
                // With float edges the Input output is the float input itself, unrounded; with
                // int8 edges it is the int8 input, which the simulation computes.
                const bool rawInput = out == "x" && !c.int8Io;
                std::ofstream(ref, std::ios::binary)
                    .write(rawInput ? static_cast<const char*>(test[0].raw()) : reinterpret_cast<const char*>((*sim)->output(k)),
                           std::streamsize(s.numel() * 4));
                entry["outputs"].push_back({{"name", out}, {"reference", ref}, {"shape", s.dims()}});
                expected[c.name][out] = quant->values.at(out);
            }
            manifest["models"].push_back(entry);
        }
        const std::string manifestPath = base + "/manifest.json";
        std::ofstream(manifestPath) << manifest.dump(2);
        auto results = check(QString::fromStdString(manifestPath), 3);
        QCOMPARE(int(results.size()), 3);
        for (const auto& [name, r] : results) {
            const std::string line = r.dump();
            QVERIFY2(!r.contains("error"), line.c_str());
            QVERIFY2(r["float_operators"].empty(), line.c_str());
            const bool int8Io = name.ends_with("_int8_io");
            const auto& ops = r["operators"];
            if (int8Io) {
                // No conversion at the edges, and each edge tensor carries its calibrated grid.
                QVERIFY2(std::find(ops.begin(), ops.end(), "QUANTIZE") == ops.end(), line.c_str());
                QVERIFY2(std::find(ops.begin(), ops.end(), "DEQUANTIZE") == ops.end(), line.c_str());
                for (const char* key : {"input_types", "output_types"})
                    for (const auto& t : r[key]) QCOMPARE(t.get<std::string>(), std::string("int8"));
                for (const char* key : {"input_quantization", "output_quantization"})
                    for (const auto& q : r[key]) {
                        const io::QuantParams want = expected[name].at(q[0].get<std::string>());
                        QVERIFY2(std::fabs(q[1].get<double>() - want.scale) <= 1e-6 * want.scale, line.c_str());
                        QCOMPARE(q[2].get<int>(), want.zeroPoint);
                    }
            } else {
                for (const char* key : {"input_types", "output_types"})
                    for (const auto& t : r[key]) QCOMPARE(t.get<std::string>(), std::string("float32"));
            }
            QCOMPARE(int(r["output_quantization"].size()), name.starts_with("passthrough") ? 3 : 1);
            for (const auto& [out, o] : r["per_output"].items()) {
                const double step = expected[name].at(out).scale;
                // The Input output is the fed value: exactly the simulation's rounded int8 input
                // with int8 edges, exactly the float input with float edges; the others as in
                // interpreterMatchesSimulation.
                const double allowed = out == "x" ? 1e-6 : 3 * step;
                QVERIFY2(o["max_abs_diff"].get<double>() <= allowed, (out + ": " + line).c_str());
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestTfliteInt8Interop)
#include "tst_tflite_int8_interop.moc"
