// SPDX-License-Identifier: Apache-2.0
// Exported models against the real tools: every bundled example (and op-coverage models, one of
// them a sequence averaged over its positions, and one built from composite layers) is written to a model repository; onnx.checker (full check), onnxruntime and
// tf.saved_model.load(...).signatures["serving_default"] must accept it and reproduce Kiln's
// outputs within 1e-4.
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

class TestExportInterop : public QObject {
    Q_OBJECT

private slots:
    void realTools() {
        const QString python = kiln::test::pythonEnvInterpreter();
        if (python.isEmpty()) QSKIP("the Python environment is not available");

        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const std::string base = tmp.path().toStdString();
        ThreadPool pool(2);
        json manifest = {{"models", json::array()}};
        std::vector<std::pair<std::string, Graph>> graphs;
        for (const char* name : {"fashion_mlp", "fashion_cnn", "residual", "two_tower"}) {
            auto p = io::loadProject(std::string(KILN_SOURCE_DIR) + "/resources/examples/" + name + ".kiln");
            QVERIFY(p.ok());
            graphs.emplace_back(name, p->graph);
        }
        auto cov = io::parseProject(R"({"format":"kiln-project","version":2,"name":"cov","graph":{"nodes":[
          {"name":"x","op":"Input","attrs":{"shape":[9,11,4]}},
          {"name":"dw","op":"Conv2D","inputs":["x"],"attrs":{"filters":8,"kernel_size":[3,3],"groups":4,"padding":"same","activation":"relu6"}},
          {"name":"dil","op":"Conv2D","inputs":["dw"],"attrs":{"filters":6,"kernel_size":[3,2],"dilation_rate":[2,2],"padding":"same","activation":"gelu"}},
          {"name":"st","op":"Conv2D","inputs":["dil"],"attrs":{"filters":5,"kernel_size":[3,3],"strides":[2,2],"padding":"same"}},
          {"name":"avg","op":"AveragePooling2D","inputs":["st"],"attrs":{"pool_size":[2,2],"padding":"same"}},
          {"name":"bn","op":"BatchNormalization","inputs":["avg"]},
          {"name":"lr","op":"LeakyReLU","inputs":["bn"]},
          {"name":"cat","op":"Concatenate","inputs":["lr","avg"]},
          {"name":"flat","op":"Flatten","inputs":["cat"]},
          {"name":"ln","op":"LayerNormalization","inputs":["flat"]},
          {"name":"g","op":"GELU","inputs":["ln"],"attrs":{"approximate":true}},
          {"name":"out","op":"Dense","inputs":["g"],"attrs":{"units":4,"activation":"softmax"}}],"outputs":["out"]}})",
                                    "cov.kiln");
        QVERIFY2(cov.ok(), cov.ok() ? "" : cov.error().toString().c_str());
        graphs.emplace_back("coverage", cov->graph);
        // Composite layers export inline, with their expanded names ("res/conv1"); squeeze-and-
        // excitation scales channels through Multiply's broadcast.
        auto blocks = io::parseProject(R"({"format":"kiln-project","version":2,"name":"blocks","graph":{"nodes":[
          {"name":"x","op":"Input","attrs":{"shape":[8,8,3]}},
          {"name":"stem","op":"ConvBNReLU","inputs":["x"],"attrs":{"filters":6}},
          {"name":"res","op":"ResidualBlock","inputs":["stem"],"attrs":{"filters":6}},
          {"name":"down","op":"ResidualProjectionBlock","inputs":["res"],"attrs":{"filters":8}},
          {"name":"se","op":"SqueezeExcitation","inputs":["down"],"attrs":{"filters":8,"reduced_filters":2}},
          {"name":"pool","op":"GlobalAveragePooling2D","inputs":["se"]},
          {"name":"head","op":"DenseBNReLU","inputs":["pool"],"attrs":{"units":5}},
          {"name":"out","op":"Dense","inputs":["head"],"attrs":{"units":2}}],"outputs":["out"]}})",
                                       "blocks.kiln");
        QVERIFY2(blocks.ok(), blocks.ok() ? "" : blocks.error().toString().c_str());
        auto blocksGraph = io::modelGraph(*blocks);
        QVERIFY2(blocksGraph.ok(), blocksGraph.ok() ? "" : blocksGraph.error().toString().c_str());
        graphs.emplace_back("composite_layers", *blocksGraph);
        // The ops of mobile and efficient backbones.
        auto mobile = io::parseProject(R"({"format":"kiln-project","version":2,"name":"mobile","graph":{"nodes":[
          {"name":"x","op":"Input","attrs":{"shape":[8,8,3]}},
          {"name":"nz","op":"Normalization","inputs":["x"]},
          {"name":"rs","op":"Rescaling","inputs":["nz"],"attrs":{"scale":0.5,"offset":-0.25}},
          {"name":"zp","op":"ZeroPadding2D","inputs":["rs"],"attrs":{"padding":[1,0,2,1]}},
          {"name":"c0","op":"Conv2D","inputs":["zp"],"attrs":{"filters":6,"kernel_size":[2,4]}},
          {"name":"zp2","op":"ZeroPadding2D","inputs":["c0"]},
          {"name":"dw","op":"DepthwiseConv2D","inputs":["zp2"],"attrs":{"depth_multiplier":2,"padding":"same","activation":"relu6"}},
          {"name":"dws","op":"DepthwiseConv2D","inputs":["dw"],"attrs":{"kernel_size":[3,2],"strides":2,"padding":"same"}},
          {"name":"dwd","op":"DepthwiseConv2D","inputs":["x"],"attrs":{"dilation_rate":[2,1],"use_bias":false}},
          {"name":"gdw","op":"GlobalAveragePooling2D","inputs":["dws"]},
          {"name":"gdwd","op":"GlobalAveragePooling2D","inputs":["dwd"]},
          {"name":"c","op":"Conv2D","inputs":["dw"],"attrs":{"filters":6,"padding":"same"}},
          {"name":"up","op":"UpSampling2D","inputs":["c"],"attrs":{"interpolation":"bilinear"}},
          {"name":"up2","op":"UpSampling2D","inputs":["c"],"attrs":{"size":[2,3]}},
          {"name":"gmp","op":"GlobalMaxPooling2D","inputs":["up"]},
          {"name":"gmp2","op":"GlobalMaxPooling2D","inputs":["x"]},
          {"name":"s","op":"SiLU","inputs":["c"]},
          {"name":"hs","op":"HardSwish","inputs":["s"]},
          {"name":"hsg","op":"HardSigmoid","inputs":["c"]},
          {"name":"cl","op":"Clip","inputs":["hsg"],"attrs":{"min":0.2,"max":0.7}},
          {"name":"m","op":"Multiply","inputs":["hs","cl"]},
          {"name":"gap","op":"GlobalAveragePooling2D","inputs":["m"]},
          {"name":"ex","op":"Dense","inputs":["gap"],"attrs":{"units":6,"activation":"sigmoid"}},
          {"name":"se","op":"Multiply","inputs":["m","ex"]},
          {"name":"exr","op":"Reshape","inputs":["ex"],"attrs":{"target_shape":[1,1,6]}},
          {"name":"se2","op":"Multiply","inputs":["exr","c"]},
          {"name":"sub","op":"Subtract","inputs":["se","se2"]},
          {"name":"ex3","op":"Dense","inputs":["gap"],"attrs":{"units":3,"activation":"sigmoid"}},
          {"name":"xs","op":"Multiply","inputs":["x","ex3"]},
          {"name":"gap2","op":"GlobalAveragePooling2D","inputs":["sub"]},
          {"name":"d","op":"Dense","inputs":["gap2"],"attrs":{"units":5}},
          {"name":"s2","op":"SiLU","inputs":["d"]},
          {"name":"c2","op":"Clip","inputs":["s2"],"attrs":{"min":-0.2,"max":1.5}},
          {"name":"cat","op":"Concatenate","inputs":["c2","gmp","gmp2","gdw","gdwd"]},
          {"name":"out","op":"Dense","inputs":["cat"],"attrs":{"units":3}}],"outputs":["out","hs","xs","up2"]}})",
                                       "mobile.kiln");
        QVERIFY2(mobile.ok(), mobile.ok() ? "" : mobile.error().toString().c_str());
        graphs.emplace_back("mobile", mobile->graph);
        // An Input that is also an output (ONNX: "x_output", an Identity), an unused Input and a
        // Dropout output.
        auto passthrough = io::parseProject(R"({"format":"kiln-project","version":2,"name":"passthrough","graph":{"nodes":[
          {"name":"x","op":"Input","attrs":{"shape":[4]}},
          {"name":"unused","op":"Input","attrs":{"shape":[3]}},
          {"name":"d","op":"Dense","inputs":["x"],"attrs":{"units":2,"activation":"relu"}},
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

        for (auto& [name, graph] : graphs) {
            auto model = ops::analyzeModel(graph);
            QVERIFY(model.ok());
            auto params = exec::ParamStore::create(*model, 21);
            for (auto& p : params.params())
                if (p.name.ends_with("moving_variance") || p.name.ends_with("moving_mean") || p.name.ends_with("/variance") ||
                    p.name.ends_with("/mean"))
                    for (int64_t e = 0; e < p.value.numel(); ++e) p.value.data<float>()[e] += 0.25f * static_cast<float>(e % 3);
            io::RepositoryExport req;
            req.base = base;
            req.name = name;
            req.meta.kilnVersion = "test";
            req.formats.kiln = false;  // model.kiln is covered by tst_model_repository
            req.meta.classNames = {"a", "b"};
            req.parityInputs = io::syntheticInputs(*model, 3, 9);
            auto res = io::exportToRepository(*model, params, req, pool);
            QVERIFY2(res.ok(), res.ok() ? "" : res.error().toString().c_str());

            // Kiln's own outputs for the same batch.
            exec::CompileOptions opts;
            opts.batch = 3;
            opts.training = false;
            auto plan = exec::Plan::compile(*model, params, opts, pool);
            QVERIFY(plan.ok());
            json entry = {{"name", name}, {"dir", res->versionDir}, {"inputs", json::array()}, {"outputs", json::array()}};
            for (size_t k = 0; k < model->inputs.size(); ++k) {
                const auto& t = req.parityInputs[k];
                std::memcpy((*plan)->input(k), t.data<float>(), t.bytes());
                std::string file = base + "/" + name + "_in" + std::to_string(k) + ".f32";
                std::ofstream(file, std::ios::binary).write(static_cast<const char*>(t.raw()), static_cast<std::streamsize>(t.bytes()));
                entry["inputs"].push_back({{"name", model->graph.nodes[static_cast<size_t>(model->inputs[k])].name},
                                           {"file", file}, {"shape", t.shape().dims()}});
            }
            QVERIFY((*plan)->forward().ok());
            for (size_t k = 0; k < model->outputs.size(); ++k) {
                Shape s = (*plan)->outputShape(k);
                std::string file = base + "/" + name + "_out" + std::to_string(k) + ".f32";
                std::ofstream(file, std::ios::binary)
                    .write(reinterpret_cast<const char*>((*plan)->output(k)), static_cast<std::streamsize>(s.numel() * 4));
                const int o = model->outputs[k];
                const std::string& outName = model->graph.nodes[static_cast<size_t>(o)].name;
                const bool isInput = model->nodes[static_cast<size_t>(o)].def->kind == ops::OpKind::Input;
                entry["outputs"].push_back({{"name", outName}, {"onnx_name", isInput ? outName + "_output" : outName},
                                            {"file", file}, {"shape", s.dims()}});
            }
            manifest["models"].push_back(entry);
        }
        const std::string manifestPath = base + "/manifest.json";
        std::ofstream(manifestPath) << manifest.dump(2);

        QProcess py;
        py.setProcessChannelMode(QProcess::MergedChannels);
        py.start(python, {QString(KILN_SOURCE_DIR) + "/tests/interop/export_check.py", QString::fromStdString(manifestPath)});
        QVERIFY(py.waitForFinished(900000));
        const QString out = QString::fromUtf8(py.readAll());
        int checked = 0;
        for (const QString& line : out.split('\n')) {
            if (!line.startsWith('{')) continue;
            qInfo().noquote() << line;
            json r = json::parse(line.toStdString());
            QVERIFY2(!r.contains("onnx_error"), line.toUtf8().constData());
            QVERIFY2(!r.contains("tf_error"), line.toUtf8().constData());
            QCOMPARE(r["checker"].get<std::string>(), std::string("ok"));
            QCOMPARE(r["ort_input_shape"][0].get<std::string>(), std::string("N"));
            QVERIFY(r["ort_max_abs_diff"].get<double>() <= 1e-4);
            QVERIFY(r["tf_max_abs_diff"].get<double>() <= 1e-4);
            QCOMPARE(r["metadata"]["kiln.class_names"].get<std::string>(), std::string(R"(["a","b"])"));
            ++checked;
        }
        QVERIFY2(py.exitCode() == 0, out.right(4000).toUtf8().constData());
        QCOMPARE(checked, static_cast<int>(graphs.size()));
    }
};

QTEST_GUILESS_MAIN(TestExportInterop)
#include "tst_export_interop.moc"
