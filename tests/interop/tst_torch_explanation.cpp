// SPDX-License-Identifier: Apache-2.0
// Grad-CAM and saliency of Kiln's Explainer against PyTorch autograd on the same small CNN, weights
// and picture (tests/interop/torch_explanation.py under Debian's python3-torch): scores, the map
// at the layer's resolution and the upsampled, scaled maps agree within 1e-4 (max abs error over
// max magnitude). Skipped when PyTorch is not importable.
#include <QtTest/QtTest>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <cmath>
#include <random>

#include "engine/api/explanation.h"
#include "engine/exec/param_store.h"
#include "engine/io/project.h"

using namespace kiln::engine;

namespace {

constexpr const char* kPython = "/usr/bin/python3";  // Debian's, which has python3-torch
constexpr double kTolerance = 1e-4;

const char* kNet = R"({"format": "kiln-project", "version": 2, "graph": {"nodes": [
  {"name": "image", "op": "Input", "attrs": {"shape": [10, 12, 3]}},
  {"name": "c1", "op": "Conv2D", "inputs": ["image"], "attrs": {"filters": 6, "kernel_size": 3, "padding": "same"}},
  {"name": "b1", "op": "BatchNormalization", "inputs": ["c1"]},
  {"name": "r1", "op": "ReLU", "inputs": ["b1"]},
  {"name": "p1", "op": "MaxPooling2D", "inputs": ["r1"]},
  {"name": "c2", "op": "Conv2D", "inputs": ["p1"], "attrs": {"filters": 8, "kernel_size": 3, "padding": "same"}},
  {"name": "r2", "op": "ReLU", "inputs": ["c2"]},
  {"name": "gap", "op": "GlobalAveragePooling2D", "inputs": ["r2"]},
  {"name": "drop", "op": "Dropout", "inputs": ["gap"], "attrs": {"rate": 0.3}},
  {"name": "logits", "op": "Dense", "inputs": ["drop"], "attrs": {"units": 4}},
  {"name": "probs", "op": "Softmax", "inputs": ["logits"]}
]}})";

double relErr(const std::vector<float>& ours, const std::vector<float>& ref) {
    if (ours.size() != ref.size()) return INFINITY;
    double err = 0.0, mag = 1e-30;
    for (size_t i = 0; i < ref.size(); ++i) {
        if (!std::isfinite(ours[i])) return INFINITY;
        err = std::max(err, std::abs(double(ours[i]) - double(ref[i])));
        mag = std::max(mag, std::abs(double(ref[i])));
    }
    return err / mag;
}

bool writeFloats(const QString& path, const float* data, size_t n) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return false;
    return f.write(reinterpret_cast<const char*>(data), qint64(n * sizeof(float))) == qint64(n * sizeof(float));
}

std::vector<float> readFloats(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    const QByteArray b = f.readAll();
    std::vector<float> out(size_t(b.size()) / sizeof(float));
    std::memcpy(out.data(), b.constData(), out.size() * sizeof(float));
    return out;
}

}  // namespace

class TestTorchExplanation : public QObject {
    Q_OBJECT

private slots:
    void matchesPyTorch();
};

void TestTorchExplanation::matchesPyTorch() {
    {
        QProcess probe;
        probe.start(kPython, {"-c", "import torch"});
        if (!probe.waitForFinished(60000) || probe.exitStatus() != QProcess::NormalExit || probe.exitCode() != 0)
            QSKIP("PyTorch is not importable by /usr/bin/python3 (install Debian's python3-torch); "
                  "skipping the Grad-CAM and saliency parity checks");
    }
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    auto project = io::parseProject(kNet, "net.kiln");
    QVERIFY2(project.ok(), project.ok() ? "" : project.error().toString().c_str());
    auto model = ops::analyzeModel(project->graph);
    QVERIFY(model.ok());

    // Random weights, with moving statistics far from the identity so BatchNorm's inference
    // gradient matters; every parameter goes to the reference as raw float32.
    exec::ParamStore params = exec::ParamStore::create(*model, 7);
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (auto& p : params.params()) {
        float* v = p.value.data<float>();
        const int64_t n = p.value.numel();
        for (int64_t i = 0; i < n; ++i) {
            if (p.name == "b1/moving_variance") v[i] = 0.5f + 0.5f * (u(rng) + 1.0f);
            else if (p.name == "b1/gamma") v[i] = 1.0f + 0.5f * u(rng);
            else v[i] = (p.name.ends_with("/kernel") ? 0.6f : 0.3f) * u(rng);
        }
        QString file = QString::fromStdString(p.name).replace('/', '_');
        QVERIFY(writeFloats(dir.filePath(file + ".bin"), v, size_t(n)));
    }
    std::vector<float> image(10 * 12 * 3);
    for (auto& v : image) v = u(rng);
    QVERIFY(writeFloats(dir.filePath("image.bin"), image.data(), image.size()));
    const std::vector<int> classes{-1, 2};
    {
        QFile f(dir.filePath("classes.json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QJsonDocument(QJsonArray{-1, 2}).toJson());
    }

    QProcess py;
    py.setProcessChannelMode(QProcess::MergedChannels);
    py.start(kPython, {QStringLiteral(KILN_SOURCE_DIR "/tests/interop/torch_explanation.py"), dir.path()});
    QVERIFY(py.waitForFinished(300000));
    QVERIFY2(py.exitCode() == 0, py.readAll().constData());
    QFile rf(dir.filePath("results.json"));
    QVERIFY(rf.open(QIODevice::ReadOnly));
    const QJsonObject results = QJsonDocument::fromJson(rf.readAll()).object();

    ThreadPool pool(2);
    api::WeightValues weights;
    for (const auto& p : params.params())
        weights.values[p.name].assign(p.value.data<float>(), p.value.data<float>() + p.value.numel());
    auto explainer = api::Explainer::create(std::move(model.value()), weights, pool);
    QVERIFY2(explainer.ok(), explainer.ok() ? "" : explainer.error().toString().c_str());
    QCOMPARE(QString::fromStdString(*api::defaultGradCamLayer((*explainer)->model())), QStringLiteral("c2"));

    for (size_t k = 0; k < classes.size(); ++k) {
        std::optional<int64_t> cls;
        if (classes[k] >= 0) cls = classes[k];
        auto cam = (*explainer)->explain(image.data(), api::ExplainMethod::GradCam, {}, cls);
        QVERIFY2(cam.ok(), cam.ok() ? "" : cam.error().toString().c_str());
        const int expected = results["explained"].toArray()[qsizetype(k)].toInt();
        QCOMPARE(cam->explainedClass, int64_t(expected));
        QCOMPARE(cam->predictedClass, int64_t(results["predicted"].toInt()));
        QVERIFY2(relErr(cam->scores, readFloats(dir.filePath("logits.out.bin"))) < kTolerance, "logits differ");
        const QString stem = QStringLiteral("gradcam_%1").arg(expected);
        const auto refLayer = readFloats(dir.filePath(stem + ".layer.bin"));
        QCOMPARE(cam->layerHeight, int64_t(5));
        QCOMPARE(cam->layerWidth, int64_t(6));
        const double layerErr = relErr(cam->layerValues, refLayer);
        QVERIFY2(layerErr < kTolerance, qPrintable(QStringLiteral("Grad-CAM at c2, class %1: %2").arg(expected).arg(layerErr)));
        const double camErr = relErr(cam->values, readFloats(dir.filePath(stem + ".bin")));
        QVERIFY2(camErr < kTolerance, qPrintable(QStringLiteral("Grad-CAM upsampled, class %1: %2").arg(expected).arg(camErr)));
        // The reference map is not flat: the comparison sees structure.
        QVERIFY(*std::max_element(refLayer.begin(), refLayer.end()) > 0.0f);

        auto sal = (*explainer)->explain(image.data(), api::ExplainMethod::Saliency, {}, cls);
        QVERIFY2(sal.ok(), sal.ok() ? "" : sal.error().toString().c_str());
        const double salErr = relErr(sal->values, readFloats(dir.filePath(QStringLiteral("saliency_%1.bin").arg(expected))));
        QVERIFY2(salErr < kTolerance, qPrintable(QStringLiteral("saliency, class %1: %2").arg(expected).arg(salErr)));
    }
}

QTEST_GUILESS_MAIN(TestTorchExplanation)
#include "tst_torch_explanation.moc"
