// SPDX-License-Identifier: Apache-2.0
// MultiHeadAttention exported to ONNX against onnxruntime: a model with a rank-3 Dense, a
// cross-attention (query and value from different nodes, with biases) and a causal self-attention
// (value_dim and output_dim of their own, no biases) is written with saveOnnx, onnxruntime runs it
// on the batch Kiln's inference plan ran, and the outputs agree within 1e-4. SavedModel export
// refuses the model, naming the attention node.
#include <QtTest>

#include <QProcess>
#include <QTemporaryDir>

#include <cmath>
#include <cstring>
#include <fstream>
#include <vector>

#include "engine/exec/param_store.h"
#include "engine/exec/plan.h"
#include "engine/io/onnx_export.h"
#include "engine/io/onnx_import.h"
#include "engine/io/project.h"
#include "engine/io/saved_model_export.h"
#include "engine/ops/model.h"
#include "tests/python_env.h"

using namespace kiln::engine;

class TestAttentionExport : public QObject {
    Q_OBJECT

private slots:
    void onnxMatchesOnnxruntime() {
        auto project = io::parseProject(R"({"format":"kiln-project","version":2,"name":"attention","graph":{"nodes":[
          {"name":"x","op":"Input","attrs":{"shape":[5,8]}},
          {"name":"d","op":"Dense","inputs":["x"],"attrs":{"units":8,"activation":"gelu"}},
          {"name":"cross","op":"MultiHeadAttention","inputs":["x","d"],"attrs":{"num_heads":2,"key_dim":4}},
          {"name":"self","op":"MultiHeadAttention","inputs":["cross","cross"],
           "attrs":{"num_heads":3,"key_dim":2,"value_dim":3,"output_dim":6,"use_bias":false,"use_causal_mask":true}}],
          "outputs":["self"]}})",
                                        "attention.kiln");
        QVERIFY2(project.ok(), project.ok() ? "" : project.error().toString().c_str());
        auto model = ops::analyzeModel(project->graph);
        QVERIFY2(model.ok(), model.ok() ? "" : model.error().toString().c_str());
        auto params = exec::ParamStore::create(*model, 5);
        // Non-zero biases, so that their export is exercised.
        for (auto& p : params.params())
            if (p.name.ends_with("/bias"))
                for (int64_t e = 0; e < p.value.numel(); ++e)
                    p.value.data<float>()[e] = 0.1f * static_cast<float>(e % 5) - 0.2f;

        // SavedModel cannot express the op: a refusal naming the node.
        auto saved = io::exportSavedModel(*model, params, io::ModelMetadata{"attention", {}, "{}", "test"});
        QVERIFY(!saved.ok());
        QCOMPARE(saved.error().code, ErrorCode::Unsupported);
        QVERIFY2(saved.error().node == "cross" || saved.error().node == "d", saved.error().toString().c_str());

        const QString python = kiln::test::pythonEnvInterpreter();
        if (python.isEmpty()) QSKIP("the Python environment is not available");

        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const std::string onnxPath = tmp.filePath("attention.onnx").toStdString();
        auto written = io::saveOnnx(onnxPath, *model, params, io::ModelMetadata{"attention", {}, "{}", "test"});
        QVERIFY2(written.ok(), written.ok() ? "" : written.error().toString().c_str());

        const int64_t batch = 3;
        ThreadPool pool(2);
        exec::CompileOptions opts;
        opts.batch = batch;
        opts.training = false;
        auto plan = exec::Plan::compile(*model, params, opts, pool);
        QVERIFY2(plan.ok(), plan.ok() ? "" : plan.error().toString().c_str());
        const std::vector<Tensor> inputs = io::syntheticInputs(*model, batch, 11);
        std::memcpy((*plan)->input(0), inputs[0].data<float>(), inputs[0].bytes());
        QVERIFY((*plan)->forward().ok());
        const Shape outShape = (*plan)->outputShape(0);
        QCOMPARE(outShape, (Shape{batch, 5, 6}));
        const float* kiln = (*plan)->output(0);

        const std::string inPath = tmp.filePath("in.f32").toStdString();
        const std::string outPath = tmp.filePath("out.f32").toStdString();
        std::ofstream(inPath, std::ios::binary)
            .write(static_cast<const char*>(inputs[0].raw()), static_cast<std::streamsize>(inputs[0].bytes()));
        QProcess py;
        py.setProcessChannelMode(QProcess::MergedChannels);
        py.start(python, {QString(KILN_SOURCE_DIR) + "/tests/interop/onnx_run.py", QString::fromStdString(onnxPath),
                          QString::fromStdString(inPath), "3,5,8", QString::fromStdString(outPath)});
        QVERIFY(py.waitForFinished(300000));
        QVERIFY2(py.exitCode() == 0, py.readAll().right(3000).constData());
        std::vector<float> ort(static_cast<size_t>(outShape.numel()));
        std::ifstream(outPath, std::ios::binary)
            .read(reinterpret_cast<char*>(ort.data()), static_cast<std::streamsize>(ort.size() * sizeof(float)));
        double worst = 0;
        for (size_t i = 0; i < ort.size(); ++i) worst = std::max(worst, std::fabs(static_cast<double>(ort[i]) - kiln[i]));
        qInfo("onnxruntime vs Kiln: largest difference %.3g over %zu values", worst, ort.size());
        QVERIFY2(worst <= 1e-4, qPrintable(QString::number(worst)));
    }
};

QTEST_GUILESS_MAIN(TestAttentionExport)
#include "tst_attention_export.moc"
