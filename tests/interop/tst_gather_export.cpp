// SPDX-License-Identifier: Apache-2.0
// Kiln's per-sample Gather (each sample's own indices, from a second input) exported to ONNX and
// run by onnxruntime: ONNX has no such operation, so the export writes a function of Kiln's
// domain whose body is standard ONNX (Cast, Transpose, GatherND with batch_dims 1). A model
// gathering positions of a sequence by int32 ids, columns of it by float indices (two per row,
// negative ones counting from the end) and channels of an image by per-sample indices of rank 2 is
// written with saveOnnx; onnx.checker (full check) accepts it and onnxruntime's outputs agree with
// Kiln's inference plan on the same batch within 1e-5.
#include <QtTest>

#include <QProcess>
#include <QTemporaryDir>

#include <cmath>
#include <cstring>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/rng.h"
#include "engine/exec/param_store.h"
#include "engine/exec/plan.h"
#include "engine/io/onnx_export.h"
#include "engine/io/project.h"
#include "engine/ops/model.h"
#include "tests/python_env.h"

using namespace kiln::engine;
using nlohmann::json;

class TestGatherExport : public QObject {
    Q_OBJECT

private slots:
    void perSampleGatherMatchesOnnxruntime() {
        auto project = io::parseProject(R"({"format":"kiln-project","version":2,"name":"gather","graph":{"nodes":[
          {"name":"seq","op":"Input","attrs":{"shape":[6,4]}},
          {"name":"ids","op":"Input","attrs":{"shape":[3],"dtype":"int32"}},
          {"name":"cols","op":"Input","attrs":{"shape":[6,2]}},
          {"name":"img","op":"Input","attrs":{"shape":[5,4,3]}},
          {"name":"chans","op":"Input","attrs":{"shape":[2,2]}},
          {"name":"d","op":"Dense","inputs":["seq"],"attrs":{"units":5,"activation":"tanh"}},
          {"name":"pick","op":"Gather","inputs":["d","ids"]},
          {"name":"col","op":"Gather","inputs":["seq","cols"],"attrs":{"axis":-1}},
          {"name":"c","op":"Conv2D","inputs":["img"],"attrs":{"filters":4,"padding":"same"}},
          {"name":"ch","op":"Gather","inputs":["c","chans"],"attrs":{"axis":3}},
          {"name":"flat","op":"Flatten","inputs":["ch"]},
          {"name":"pf","op":"Flatten","inputs":["pick"]},
          {"name":"cat","op":"Concatenate","inputs":["pf","flat"]},
          {"name":"out","op":"Dense","inputs":["cat"],"attrs":{"units":3}}],
          "outputs":["out","pick","col","ch"]}})",
                                        "gather.kiln");
        QVERIFY2(project.ok(), project.ok() ? "" : project.error().toString().c_str());
        auto model = ops::analyzeModel(project->graph);
        QVERIFY2(model.ok(), model.ok() ? "" : model.error().toString().c_str());
        auto params = exec::ParamStore::create(*model, 17);

        const QString python = kiln::test::pythonEnvInterpreter();
        if (python.isEmpty()) QSKIP("the Python environment is not available");

        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const std::string onnxPath = tmp.filePath("gather.onnx").toStdString();
        auto written = io::saveOnnx(onnxPath, *model, params, io::ModelMetadata{"gather", {}, "{}", "test"});
        QVERIFY2(written.ok(), written.ok() ? "" : written.error().toString().c_str());

        // A batch of 3: random values, and indices covering every position of the gathered axes,
        // negative ones among them (-1 is the last).
        const int64_t batch = 3;
        ThreadPool pool(2);
        exec::CompileOptions opts;
        opts.batch = batch;
        opts.training = false;
        auto plan = exec::Plan::compile(*model, params, opts, pool);
        QVERIFY2(plan.ok(), plan.ok() ? "" : plan.error().toString().c_str());
        json manifest = {{"model", onnxPath}, {"inputs", json::array()}, {"outputs", json::array()}};
        for (size_t k = 0; k < model->inputs.size(); ++k) {
            const auto& node = model->graph.nodes[static_cast<size_t>(model->inputs[k])];
            const Shape shape = model->nodes[static_cast<size_t>(model->inputs[k])].output.withBatch(batch);
            std::vector<float> x(static_cast<size_t>(shape.numel()));
            for (size_t e = 0; e < x.size(); ++e) {
                const float u = rng::uniform(5, k + 1, e);
                if (node.name == "ids") x[e] = static_cast<float>((e * 5 + 1) % 6);                     // positions 0..5
                else if (node.name == "cols") x[e] = static_cast<float>(static_cast<int>(e % 8) - 4);   // -4..3 of 4 columns
                else if (node.name == "chans") x[e] = static_cast<float>(static_cast<int>(e % 7) - 3);  // -3..3 of 4 channels
                else x[e] = 2.0f * u - 1.0f;
            }
            std::memcpy((*plan)->input(k), x.data(), x.size() * sizeof(float));
            const std::string file = tmp.filePath(QString::fromStdString(node.name) + ".f32").toStdString();
            std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(x.data()), static_cast<std::streamsize>(x.size() * sizeof(float)));
            manifest["inputs"].push_back({{"name", node.name}, {"file", file}, {"shape", shape.dims()}});
        }
        QVERIFY((*plan)->forward().ok());
        for (size_t k = 0; k < model->outputs.size(); ++k) {
            const std::string& name = model->graph.nodes[static_cast<size_t>(model->outputs[k])].name;
            manifest["outputs"].push_back({{"name", name}, {"file", tmp.filePath(QString::fromStdString(name) + ".out.f32").toStdString()}});
        }
        const std::string manifestPath = tmp.filePath("manifest.json").toStdString();
        std::ofstream(manifestPath) << manifest.dump(1);

        QProcess py;
        py.setProcessChannelMode(QProcess::MergedChannels);
        py.start(python, {QString(KILN_SOURCE_DIR) + "/tests/interop/onnx_run_inputs.py", QString::fromStdString(manifestPath)});
        QVERIFY(py.waitForFinished(300000));
        const QByteArray out = py.readAll();
        QVERIFY2(py.exitStatus() == QProcess::NormalExit && py.exitCode() == 0, out.right(3000).constData());
        const QByteArray last = out.trimmed().split('\n').last();
        const json r = json::parse(last.toStdString());
        QCOMPARE(r["checker"].get<std::string>(), std::string("ok"));

        for (size_t k = 0; k < model->outputs.size(); ++k) {
            const std::string& name = manifest["outputs"][k]["name"].get_ref<const std::string&>();
            const Shape shape = (*plan)->outputShape(k);
            QCOMPARE(r["shapes"][name].get<std::vector<int64_t>>(), shape.dims());
            std::vector<float> ort(static_cast<size_t>(shape.numel()));
            std::ifstream(manifest["outputs"][k]["file"].get<std::string>(), std::ios::binary)
                .read(reinterpret_cast<char*>(ort.data()), static_cast<std::streamsize>(ort.size() * sizeof(float)));
            const float* kiln = (*plan)->output(k);
            double worst = 0, largest = 0;
            for (size_t i = 0; i < ort.size(); ++i) {
                worst = std::max(worst, std::fabs(static_cast<double>(ort[i]) - kiln[i]));
                largest = std::max(largest, std::fabs(static_cast<double>(kiln[i])));
            }
            qInfo("%s %s: largest |value| %.3g, largest |onnxruntime - Kiln| %.3g", name.c_str(), shape.toString().c_str(), largest, worst);
            QVERIFY2(largest > 0.01, name.c_str());
            QVERIFY2(worst <= 1e-5, qPrintable(QString::fromStdString(name) + ": " + QString::number(worst)));
        }
    }
};

QTEST_GUILESS_MAIN(TestGatherExport)
#include "tst_gather_export.moc"
