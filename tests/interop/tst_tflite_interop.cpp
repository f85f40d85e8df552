// SPDX-License-Identifier: Apache-2.0
// TensorFlow Lite export against the real interpreter: every bundled example and models covering
// the other exported operators (one of them a sequence averaged over its positions) are written as model.tflite into a model repository;
// tf.lite.Interpreter (TensorFlow from the test environment) must load each, accept a batch of 3
// and reproduce Kiln's outputs within 1e-4, each output found under its Kiln node's name (also an
// Input that is an output, and a Dropout output). Batch normalisation after a convolution must have
// been folded (no MUL/ADD pair left for it).
#include <QtTest>

#include <QProcess>
#include <QTemporaryDir>

#include <fstream>

#include <nlohmann/json.hpp>

#include "engine/exec/plan.h"
#include "engine/io/model_repository.h"
#include "engine/io/project.h"
#include "tests/python_env.h"

using namespace kiln::engine;
using nlohmann::json;

class TestTfliteInterop : public QObject {
    Q_OBJECT

private slots:
    void interpreterMatchesKiln() {
        const QString python = kiln::test::pythonEnvInterpreter();
        if (python.isEmpty()) QSKIP("the Python environment is not available");

        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const std::string base = tmp.path().toStdString();
        ThreadPool pool(2);
        std::vector<std::pair<std::string, Graph>> graphs;
        for (const char* name : {"fashion_mlp", "fashion_cnn", "residual", "two_tower"}) {
            auto p = io::loadProject(std::string(KILN_SOURCE_DIR) + "/resources/examples/" + name + ".kiln");
            QVERIFY(p.ok());
            graphs.emplace_back(name, p->graph);
        }
        auto mobile = io::parseProject(R"({"format":"kiln-project","version":2,"name":"mobile","graph":{"nodes":[
          {"name":"x","op":"Input","attrs":{"shape":[8,8,3]}},
          {"name":"nz","op":"Normalization","inputs":["x"]},
          {"name":"rs","op":"Rescaling","inputs":["nz"],"attrs":{"scale":0.5,"offset":-0.25}},
          {"name":"zp","op":"ZeroPadding2D","inputs":["rs"],"attrs":{"padding":[1,0,2,1]}},
          {"name":"c0","op":"Conv2D","inputs":["zp"],"attrs":{"filters":6,"kernel_size":[2,4],"activation":"tanh"}},
          {"name":"dw","op":"DepthwiseConv2D","inputs":["c0"],"attrs":{"depth_multiplier":2,"padding":"same","activation":"relu6"}},
          {"name":"dws","op":"DepthwiseConv2D","inputs":["dw"],"attrs":{"kernel_size":[3,2],"strides":2,"padding":"same"}},
          {"name":"bn","op":"BatchNormalization","inputs":["dws"]},
          {"name":"dwd","op":"DepthwiseConv2D","inputs":["x"],"attrs":{"dilation_rate":[2,1],"use_bias":false}},
          {"name":"gdw","op":"GlobalAveragePooling2D","inputs":["bn"]},
          {"name":"gdwd","op":"GlobalAveragePooling2D","inputs":["dwd"]},
          {"name":"c","op":"Conv2D","inputs":["dw"],"attrs":{"filters":6,"padding":"same","strides":[1,1],"dilation_rate":[2,2]}},
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
          {"name":"se","op":"Multiply","inputs":["m","ex"]},
          {"name":"exr","op":"Reshape","inputs":["ex"],"attrs":{"target_shape":[1,1,6]}},
          {"name":"se2","op":"Multiply","inputs":["exr","cbn"]},
          {"name":"sub","op":"Subtract","inputs":["se","se2"]},
          {"name":"gap2","op":"GlobalAveragePooling2D","inputs":["sub"]},
          {"name":"d","op":"Dense","inputs":["gap2"],"attrs":{"units":5,"activation":"relu"}},
          {"name":"dbn","op":"BatchNormalization","inputs":["d"]},
          {"name":"g","op":"GELU","inputs":["dbn"]},
          {"name":"t","op":"Tanh","inputs":["g"]},
          {"name":"sg","op":"Sigmoid","inputs":["t"]},
          {"name":"r6","op":"ReLU6","inputs":["sg"]},
          {"name":"fl","op":"Flatten","inputs":["mp"]},
          {"name":"fa","op":"Flatten","inputs":["ap"]},
          {"name":"cat","op":"Concatenate","inputs":["r6","gmp","gdw","gdwd","fl","fa"]},
          {"name":"dr","op":"Dropout","inputs":["cat"]},
          {"name":"out","op":"Dense","inputs":["dr"],"attrs":{"units":3,"activation":"softmax"}},
          {"name":"sm","op":"Softmax","inputs":["d"]},
          {"name":"sum","op":"Add","inputs":["d","sm","dbn"]}],"outputs":["out","hs","up2","sum"]}})",
                                       "mobile.kiln");
        QVERIFY2(mobile.ok(), mobile.ok() ? "" : mobile.error().toString().c_str());
        graphs.emplace_back("mobile", mobile->graph);
        // Outputs that are not computed by an operator: an Input that is also an output (one
        // tensor in both lists), an unused Input (an output by having no reader) and a Dropout
        // that passes a Dense's value on (a copy under its own name).
        auto passthrough = io::parseProject(R"({"format":"kiln-project","version":2,"name":"passthrough","graph":{"nodes":[
          {"name":"x","op":"Input","attrs":{"shape":[4]}},
          {"name":"unused","op":"Input","attrs":{"shape":[3]}},
          {"name":"d","op":"Dense","inputs":["x"],"attrs":{"units":2}},
          {"name":"dr","op":"Dropout","inputs":["d"]}],"outputs":["dr","x","unused"]}})",
                                            "passthrough.kiln");
        QVERIFY2(passthrough.ok(), passthrough.ok() ? "" : passthrough.error().toString().c_str());
        graphs.emplace_back("passthrough", passthrough->graph);
        // A sequence [6, 4] averaged over its positions, with and without keepdims.
        auto sequence = io::parseProject(R"({"format":"kiln-project","version":2,"name":"sequence","graph":{"nodes":[
          {"name":"x","op":"Input","attrs":{"shape":[6,4]}},
          {"name":"mean","op":"GlobalAveragePooling1D","inputs":["x"]},
          {"name":"keep","op":"GlobalAveragePooling1D","inputs":["x"],"attrs":{"keepdims":true}},
          {"name":"flat","op":"Flatten","inputs":["keep"]},
          {"name":"cat","op":"Concatenate","inputs":["mean","flat"]},
          {"name":"out","op":"Dense","inputs":["cat"],"attrs":{"units":3}}],"outputs":["out","keep"]}})",
                                         "sequence.kiln");
        QVERIFY2(sequence.ok(), sequence.ok() ? "" : sequence.error().toString().c_str());
        graphs.emplace_back("sequence", sequence->graph);

        json manifest = {{"models", json::array()}};
        for (auto& [name, graph] : graphs) {
            auto model = ops::analyzeModel(graph);
            QVERIFY2(model.ok(), model.ok() ? "" : model.error().toString().c_str());
            auto params = exec::ParamStore::create(*model, 21);
            // Statistics away from the identity, so that folding them is visible in the numbers.
            for (auto& p : params.params())
                if (p.name.ends_with("moving_variance") || p.name.ends_with("moving_mean") || p.name.ends_with("gamma") ||
                    p.name.ends_with("beta") || p.name.ends_with("/mean") || p.name.ends_with("/variance"))
                    for (int64_t e = 0; e < p.value.numel(); ++e) p.value.data<float>()[e] += 0.25f * static_cast<float>(e % 3);
            io::RepositoryExport req;
            req.base = base;
            req.name = name;
            req.meta.kilnVersion = "test";
            req.formats = io::parseFormats("tflite").value();
            auto res = io::exportToRepository(*model, params, req, pool);
            QVERIFY2(res.ok(), res.ok() ? "" : res.error().toString().c_str());
            QVERIFY(std::find(res->files.begin(), res->files.end(), "model.tflite") != res->files.end());

            const std::vector<Tensor> inputs = io::syntheticInputs(*model, 3, 9);
            exec::CompileOptions opts;
            opts.batch = 3;
            opts.training = false;
            auto plan = exec::Plan::compile(*model, params, opts, pool);
            QVERIFY(plan.ok());
            json entry = {{"name", name}, {"file", res->versionDir + "/model.tflite"}, {"inputs", json::array()}, {"outputs", json::array()}};
            for (size_t k = 0; k < model->inputs.size(); ++k) {
                const auto& t = inputs[k];
                std::memcpy((*plan)->input(k), t.data<float>(), t.bytes());
                const std::string file = base + "/" + name + "_in" + std::to_string(k) + ".f32";
                std::ofstream(file, std::ios::binary).write(static_cast<const char*>(t.raw()), static_cast<std::streamsize>(t.bytes()));
                entry["inputs"].push_back({{"name", model->graph.nodes[static_cast<size_t>(model->inputs[k])].name},
                                           {"file", file}, {"shape", t.shape().dims()}});
            }
            QVERIFY((*plan)->forward().ok());
            for (size_t k = 0; k < model->outputs.size(); ++k) {
                const Shape s = (*plan)->outputShape(k);
                const std::string file = base + "/" + name + "_out" + std::to_string(k) + ".f32";
                std::ofstream(file, std::ios::binary)
                    .write(reinterpret_cast<const char*>((*plan)->output(k)), static_cast<std::streamsize>(s.numel() * 4));
                entry["outputs"].push_back({{"name", model->graph.nodes[static_cast<size_t>(model->outputs[k])].name},
                                            {"file", file}, {"shape", s.dims()}});
            }
            manifest["models"].push_back(entry);
        }
        const std::string manifestPath = base + "/manifest.json";
        std::ofstream(manifestPath) << manifest.dump(2);

        QProcess py;
        py.setProcessChannelMode(QProcess::MergedChannels);
        py.start(python, {QString(KILN_SOURCE_DIR) + "/tests/interop/tflite_check.py", QString::fromStdString(manifestPath)});
        QVERIFY(py.waitForFinished(900000));
        const QString out = QString::fromUtf8(py.readAll());
        int checked = 0;
        for (const QString& line : out.split('\n')) {
            if (!line.startsWith('{')) continue;
            qInfo().noquote() << line;
            const json r = json::parse(line.toStdString());
            QVERIFY2(!r.contains("error"), line.toUtf8().constData());
            QVERIFY2(r["max_abs_diff"].get<double>() <= 1e-4, line.toUtf8().constData());
            QCOMPARE(r["input_signature"][0].get<int>(), -1);
            if (r["name"] == "fashion_cnn" || r["name"] == "residual") {
                // Every BatchNormalization there follows a convolution and is folded into it.
                for (const auto& op : r["operators"]) QVERIFY2(op != "MUL", line.toUtf8().constData());
            }
            ++checked;
        }
        QVERIFY2(py.exitCode() == 0, out.right(4000).toUtf8().constData());
        QCOMPARE(checked, static_cast<int>(graphs.size()));
    }
};

QTEST_GUILESS_MAIN(TestTfliteInterop)
#include "tst_tflite_interop.moc"
