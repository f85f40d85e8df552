// SPDX-License-Identifier: Apache-2.0
// kiln-train --gpus and --lr-scaling: GPU lists are checked (duplicates, bad entries, GPUs the
// machine lacks: exit 2 naming the GPU); linear learning-rate scaling with the batch size and its
// warm-up in epochs reach the rates the rule in docs/gpu.md gives (read back from the CSV log).
#include <QtTest>

#include <QTemporaryDir>

#include <cmath>

#include "app_test_util.h"
#include "engine/api/devices.h"

namespace {

using kiln::test::Run;

QString write(const QTemporaryDir& dir, const QString& name, const QByteArray& text) {
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(text) != text.size()) qFatal("cannot write %s", qPrintable(path));
    return path;
}

Run train(const QStringList& args) {
    return kiln::test::runProgram("kiln-train", args, 300000);
}

// The learning_rate column of a CSV log, one value per epoch.
QList<double> learningRates(const QString& csvPath) {
    QFile f(csvPath);
    if (!f.open(QIODevice::ReadOnly)) return {};
    const QList<QByteArray> lines = f.readAll().trimmed().split('\n');
    const int column = int(lines.value(0).split(',').indexOf("learning_rate"));
    QList<double> out;
    for (qsizetype i = 1; i < lines.size() && column >= 0; ++i) out << lines[i].split(',').value(column).toDouble();
    return out;
}

}  // namespace

class TestKilnTrainDevices : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_project;

    void expectError(const QStringList& args, const QStringList& needles) {
        const Run r = train(QStringList{m_project, QStringLiteral("--quiet"), QStringLiteral("--run-store"),
                                        QStringLiteral("none")} + args);
        QCOMPARE(r.exitCode, 2);
        for (const auto& n : needles)
            QVERIFY2(r.err.contains(n), qPrintable(QStringLiteral("missing \"%1\" in: %2").arg(n, r.err)));
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        QByteArray csv;
        for (int i = 0; i < 200; ++i) {
            const int label = i % 2;
            for (int f = 0; f < 4; ++f)
                csv += QByteArray::number((label ? 1.5 : -1.5) + std::sin(i * 12.9898 + f * 78.233) * 0.8, 'f', 4) + ',';
            csv += QByteArray::number(label) + '\n';
        }
        write(m_dir, QStringLiteral("blobs.csv"), csv);
        // 150 training samples: 10 steps per epoch of 16, 5 of 32.
        m_project = write(m_dir, QStringLiteral("blobs.kiln"), R"({
  "format": "kiln-project", "version": 2,
  "graph": {"nodes": [
    {"name": "x", "op": "Input", "attrs": {"shape": [4]}},
    {"name": "logits", "op": "Dense", "inputs": ["x"], "attrs": {"units": 2}}]},
  "data": {"format": "csv", "path": "blobs.csv", "split": {"validation": 0.25}},
  "training": {"epochs": 2, "batch_size": 16, "seed": 1,
    "optimizer": {"type": "sgd", "learning_rate": 0.01},
    "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true},
    "callbacks": [{"type": "CSVLogger", "filename": "log.csv"}]}
})");
    }

    void gpuListsAreChecked() {
        expectError({QStringLiteral("--gpus"), QStringLiteral("0,1,0")}, {QStringLiteral("GPU 0 is listed twice")});
        expectError({QStringLiteral("--gpus"), QStringLiteral("0,x")}, {QStringLiteral("\"x\" is not a GPU index")});
        expectError({QStringLiteral("--gpus"), QStringLiteral("0,")}, {QStringLiteral("an empty entry")});
        expectError({QStringLiteral("--gpus"), QString()}, {QStringLiteral("--gpus")});
        expectError({QStringLiteral("--gpus"), QStringLiteral("0"), QStringLiteral("--device"), QStringLiteral("cpu")},
                    {QStringLiteral("--device or --gpus")});
        // A GPU no machine has, then the first GPU where there is none.
        expectError({QStringLiteral("--gpus"), QStringLiteral("999")}, {QStringLiteral("cuda:999")});
        bool anyGpu = false;
        for (const auto& d : kiln::engine::api::availableDevices()) anyGpu = anyGpu || !d.device.isCpu();
        if (!anyGpu) {
            expectError({QStringLiteral("--gpus"), QStringLiteral("all")}, {QStringLiteral("cuda:0")});
            expectError({QStringLiteral("--gpus"), QStringLiteral("1,0")}, {QStringLiteral("cuda:1")});
        }
    }

    void linearScalingWithWarmup() {
        // Batch 32 is twice the project's 16: rate 0.02, reached after 2 epochs (10 steps of 32)
        // from 0.01, so halfway (0.015) after the first epoch's 5 steps.
        const QString warm = m_dir.filePath(QStringLiteral("warm"));
        Run r = train({m_project, QStringLiteral("--run-dir"), warm, QStringLiteral("--run-store"), QStringLiteral("none"),
                       QStringLiteral("--batch-size"), QStringLiteral("32"), QStringLiteral("--epochs"), QStringLiteral("3"),
                       QStringLiteral("--lr-scaling"), QStringLiteral("linear"), QStringLiteral("--warmup-epochs"),
                       QStringLiteral("2")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains(QStringLiteral("0.02")) && r.out.contains(QStringLiteral("10 steps")), qPrintable(r.out));
        const QList<double> rates = learningRates(warm + QStringLiteral("/log.csv"));
        QCOMPARE(rates.size(), 3);
        QVERIFY2(std::abs(rates[0] - 0.015) < 1e-9, qPrintable(QString::number(rates[0])));
        QVERIFY2(std::abs(rates[1] - 0.02) < 1e-9, qPrintable(QString::number(rates[1])));
        QVERIFY2(std::abs(rates[2] - 0.02) < 1e-9, qPrintable(QString::number(rates[2])));

        // Without scaling the project's rate stays.
        const QString plain = m_dir.filePath(QStringLiteral("plain"));
        r = train({m_project, QStringLiteral("--quiet"), QStringLiteral("--run-dir"), plain, QStringLiteral("--run-store"),
                   QStringLiteral("none"), QStringLiteral("--batch-size"), QStringLiteral("32")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QList<double> plainRates = learningRates(plain + QStringLiteral("/log.csv"));
        QCOMPARE(plainRates.size(), 2);
        QVERIFY(std::abs(plainRates[1] - 0.01) < 1e-9);
    }

    void scalingOptionsAreChecked() {
        expectError({QStringLiteral("--lr-scaling"), QStringLiteral("square")}, {QStringLiteral("none or linear")});
        expectError({QStringLiteral("--warmup-epochs"), QStringLiteral("2")}, {QStringLiteral("linear")});
        expectError({QStringLiteral("--lr-scaling"), QStringLiteral("linear"), QStringLiteral("--warmup-epochs"),
                     QStringLiteral("-1")},
                    {QStringLiteral("--warmup-epochs")});
    }
};

QTEST_GUILESS_MAIN(TestKilnTrainDevices)
#include "tst_kiln_train_devices.moc"
