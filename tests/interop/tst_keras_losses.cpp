// SPDX-License-Identifier: Apache-2.0
// kiln-test-libs: kiln_ops Qt6::Core
// The focal losses against Keras 3 on TensorFlow (tests/interop/keras_losses.py, in the Python
// environment of tools/py_env.sh): the loss value and its gradient with respect to the
// predictions agree within 1e-5 for probabilities and logits, soft targets, label smoothing,
// class balancing and several gammas. Skipped when the environment cannot be created.
#include <QtTest/QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <cmath>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "engine/core/thread_pool.h"
#include "engine/ops/op_table.h"
#include "tests/python_env.h"

using namespace kiln::engine;
using namespace kiln::engine::ops;

namespace {

constexpr double kTolerance = 1e-5;

enum class Targets { Binary, Soft, OneHot, Labels };

struct Case {
    std::string name;
    std::string loss;
    QJsonObject attrs;  // Keras constructor arguments = Kiln attributes
    int64_t batch, width;
    bool logits;
    Targets targets;
    std::vector<float> predictions, target;
};

void writeFloats(const QString& path, const std::vector<float>& v) {
    std::ofstream f(path.toStdString(), std::ios::binary);
    f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
}

std::vector<float> readFloats(const QString& path) {
    std::ifstream f(path.toStdString(), std::ios::binary | std::ios::ate);
    std::vector<float> v(static_cast<size_t>(f.tellg()) / sizeof(float));
    f.seekg(0);
    f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
    return v;
}

Case makeCase(std::string name, std::string loss, QJsonObject attrs, int64_t batch, int64_t width, Targets targets,
              unsigned seed) {
    Case c{std::move(name), std::move(loss), std::move(attrs), batch, width, false, targets, {}, {}};
    c.logits = c.attrs.value("from_logits").toBool(false);
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> logit(-3.0f, 3.0f), unit(0.02f, 0.98f);
    std::uniform_int_distribution<int64_t> cls(0, width - 1);
    const bool categorical = targets == Targets::OneHot || targets == Targets::Labels;
    for (int64_t i = 0; i < batch; ++i) {
        float rowSum = 0;
        for (int64_t j = 0; j < width; ++j) {
            c.predictions.push_back(c.logits ? logit(gen) : unit(gen));
            rowSum += c.predictions.back();
        }
        if (categorical && !c.logits)  // probabilities that sum to 1, as after a softmax
            for (int64_t j = 0; j < width; ++j) c.predictions[static_cast<size_t>(i * width + j)] /= rowSum;
        const int64_t label = cls(gen);
        if (targets == Targets::Labels) c.target.push_back(static_cast<float>(label));
        for (int64_t j = 0; targets != Targets::Labels && j < width; ++j) {
            if (targets == Targets::OneHot) c.target.push_back(j == label ? 1.0f : 0.0f);
            else if (targets == Targets::Binary) c.target.push_back(unit(gen) > 0.5f ? 1.0f : 0.0f);
            else c.target.push_back(unit(gen));
        }
    }
    return c;
}

// Runs the Kiln kernel: the mean loss and d(loss)/d(predictions).
bool runKiln(const Case& c, float& loss, std::vector<float>& grad, QString& why) {
    const OpDef* def = findOp(c.loss);
    if (!def) {
        why = QString::fromStdString("no op " + c.loss);
        return false;
    }
    Node node;
    node.name = c.name;
    node.op = c.loss;
    for (auto it = c.attrs.begin(); it != c.attrs.end(); ++it) {
        if (it.value().isBool()) node.attrs.set(it.key().toStdString(), it.value().toBool());
        else node.attrs.set(it.key().toStdString(), it.value().toDouble());
    }
    auto attrs = resolveAttrs(*def, node);
    if (!attrs.ok()) {
        why = QString::fromStdString(attrs.error().toString());
        return false;
    }
    const std::vector<Shape> shapes{Shape{c.batch, c.width},
                                    c.targets == Targets::Labels ? Shape{c.batch} : Shape{c.batch, c.width}};
    const ShapeContext ctx{node, *attrs, shapes};
    auto kernel = def->cpu(ctx, Shape{1});
    if (!kernel.ok()) {
        why = QString::fromStdString(kernel.error().toString());
        return false;
    }
    ThreadPool pool(2);
    const float* in[2] = {c.predictions.data(), c.target.data()};
    grad.assign(c.predictions.size(), 0.0f);
    float* dIn[2] = {grad.data(), nullptr};
    KernelIo io;
    io.in = in;
    io.out = &loss;
    io.dIn = dIn;
    io.pool = &pool;
    io.training = true;
    Status st = (*kernel)->forward(io);
    if (st.ok()) st = (*kernel)->backward(io);
    if (!st.ok()) why = QString::fromStdString(st.error().toString());
    return st.ok();
}

}  // namespace

class TstKerasLosses : public QObject {
    Q_OBJECT
private slots:
    void focalLossesMatchKeras() {
        const QString python = kiln::test::pythonEnvInterpreter();
        if (python.isEmpty()) QSKIP("the Python environment with TensorFlow and Keras could not be created");
        QProcess probe;
        probe.start(python, {QStringLiteral("-c"), QStringLiteral("import keras, tensorflow")});
        if (!probe.waitForFinished(300000) || probe.exitCode() != 0) QSKIP("Keras/TensorFlow are not importable");

        const QJsonObject logits{{"from_logits", true}};
        std::vector<Case> cases{
            makeCase("bfc_prob", "BinaryFocalCrossentropy", {}, 6, 3, Targets::Binary, 1),
            makeCase("bfc_logits", "BinaryFocalCrossentropy", logits, 6, 3, Targets::Binary, 2),
            makeCase("bfc_logits_balanced_smoothed", "BinaryFocalCrossentropy",
                     {{"from_logits", true}, {"apply_class_balancing", true}, {"alpha", 0.4}, {"gamma", 3.0},
                      {"label_smoothing", 0.1}},
                     8, 4, Targets::Binary, 3),
            makeCase("bfc_prob_soft_gamma_half", "BinaryFocalCrossentropy", {{"gamma", 0.5}}, 5, 2, Targets::Soft, 4),
            makeCase("bfc_prob_gamma0", "BinaryFocalCrossentropy", {{"gamma", 0.0}}, 4, 1, Targets::Binary, 5),
            makeCase("cfc_prob", "CategoricalFocalCrossentropy", {}, 6, 4, Targets::OneHot, 6),
            makeCase("cfc_logits", "CategoricalFocalCrossentropy", logits, 6, 5, Targets::OneHot, 7),
            makeCase("cfc_logits_smoothed", "CategoricalFocalCrossentropy",
                     {{"from_logits", true}, {"label_smoothing", 0.2}, {"alpha", 0.6}, {"gamma", 1.5}}, 7, 3,
                     Targets::OneHot, 8),
            makeCase("cfc_logits_soft", "CategoricalFocalCrossentropy", logits, 5, 4, Targets::Soft, 9),
            makeCase("scfc_prob", "SparseCategoricalFocalCrossentropy", {}, 6, 4, Targets::Labels, 10),
            makeCase("scfc_logits", "SparseCategoricalFocalCrossentropy", {{"from_logits", true}, {"gamma", 1.0}},
                     9, 6, Targets::Labels, 11),
        };

        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QJsonArray list;
        for (const auto& c : cases) {
            const QString name = QString::fromStdString(c.name);
            writeFloats(dir.filePath(name + ".predictions.bin"), c.predictions);
            writeFloats(dir.filePath(name + ".targets.bin"), c.target);
            QJsonArray targetShape{qint64(c.batch)};
            if (c.targets != Targets::Labels) targetShape.append(qint64(c.width));
            list.append(QJsonObject{{"name", name},
                                    {"loss", QString::fromStdString(c.loss)},
                                    {"attrs", c.attrs},
                                    {"predictions", QJsonArray{qint64(c.batch), qint64(c.width)}},
                                    {"targets", targetShape}});
        }
        QFile f(dir.filePath("cases.json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QJsonDocument(QJsonObject{{"cases", list}}).toJson());
        f.close();

        QProcess p;
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.start(python, {QStringLiteral(KILN_SOURCE_DIR "/tests/interop/keras_losses.py"), dir.path()});
        QVERIFY(p.waitForFinished(600000));
        QVERIFY2(p.exitCode() == 0, p.readAll().constData());

        for (const auto& c : cases) {
            const QString name = QString::fromStdString(c.name);
            float loss = 0;
            std::vector<float> grad;
            QString why;
            QVERIFY2(runKiln(c, loss, grad, why), qPrintable(name + ": " + why));
            const std::vector<float> kerasLoss = readFloats(dir.filePath(name + ".loss.bin"));
            const std::vector<float> kerasGrad = readFloats(dir.filePath(name + ".grad.bin"));
            QCOMPARE(kerasLoss.size(), size_t{1});
            QCOMPARE(kerasGrad.size(), grad.size());
            const double lossTol = kTolerance * std::max(1.0, std::fabs(double(kerasLoss[0])));
            QVERIFY2(std::fabs(double(loss) - kerasLoss[0]) <= lossTol,
                     qPrintable(QStringLiteral("%1: loss %2, Keras %3").arg(name).arg(loss, 0, 'g', 9).arg(kerasLoss[0], 0, 'g', 9)));
            double mag = 0;
            for (float g : kerasGrad) mag = std::max(mag, std::fabs(double(g)));
            for (size_t i = 0; i < grad.size(); ++i)
                QVERIFY2(std::fabs(double(grad[i]) - kerasGrad[i]) <= kTolerance * std::max(1.0, mag),
                         qPrintable(QStringLiteral("%1: gradient[%2] %3, Keras %4")
                                        .arg(name).arg(i).arg(grad[i], 0, 'g', 9).arg(kerasGrad[i], 0, 'g', 9)));
        }
    }
};

QTEST_GUILESS_MAIN(TstKerasLosses)
#include "tst_keras_losses.moc"
