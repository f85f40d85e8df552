// SPDX-License-Identifier: Apache-2.0
// kiln-test-labels: slow
// kiln-test-timeout: 1800
// The bundled examples train to their promised accuracy on the real data sets:
// Fashion-MNIST MLP >= 88 % and CNN >= 90 % test accuracy, the residual network trains,
// the two-tower breast-cancer model >= 95 % validation accuracy.
#include <QtTest>

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

class TestExamples : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    QJsonObject train(const char* example) {
        QString dataDir = qEnvironmentVariable("KILN_DATA", QDir::homePath() + QStringLiteral("/.cache/kiln/data"));
        if (!QFileInfo::exists(dataDir + QStringLiteral("/fashion-mnist/train-images-idx3-ubyte.gz")))
            return {};
        QProcess p;
        p.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        p.start(QStringLiteral(KILN_BINARY_DIR "/app/kiln-train"),
                {QStringLiteral(KILN_SOURCE_DIR "/resources/examples/%1").arg(QLatin1String(example)), QStringLiteral("--json"),
                 QStringLiteral("--quiet"), QStringLiteral("--run-store"), QStringLiteral("none"), QStringLiteral("--run-dir"), m_dir.filePath(QLatin1String(example))});
        if (!p.waitForFinished(1200000)) return {};
        if (p.exitCode() != 0) return {};
        QString last = QString::fromLocal8Bit(p.readAllStandardOutput()).trimmed().split(QLatin1Char('\n')).last();
        QJsonObject j = QJsonDocument::fromJson(last.toUtf8()).object();
        qInfo("%s: %s", example, last.toLocal8Bit().constData());
        return j;
    }

private slots:
    void initTestCase() {
        QString dataDir = qEnvironmentVariable("KILN_DATA", QDir::homePath() + QStringLiteral("/.cache/kiln/data"));
        if (!QFileInfo::exists(dataDir + QStringLiteral("/fashion-mnist/train-images-idx3-ubyte.gz")))
            QSKIP("the data sets are not cached: run tools/fetch_data.sh");
    }

    void fashionMlp() {
        QJsonObject j = train("fashion_mlp.kiln");
        QVERIFY(!j.isEmpty());
        QCOMPARE(j.value(QStringLiteral("epochs")).toInt(), 5);
        QVERIFY2(j.value(QStringLiteral("test_accuracy")).toDouble() >= 0.88, "MLP test accuracy below 88 %");
    }

    void fashionCnn() {
        QJsonObject j = train("fashion_cnn.kiln");
        QVERIFY(!j.isEmpty());
        QVERIFY2(j.value(QStringLiteral("test_accuracy")).toDouble() >= 0.90, "CNN test accuracy below 90 %");
    }

    void residual() {
        QJsonObject j = train("residual.kiln");
        QVERIFY(!j.isEmpty());
        // Two epochs of a small ResNet: it must clearly learn (chance is 10 %). Training accuracy is
        // stable (0.85 with every kernel variant), but validation accuracy after two epochs of Adam
        // at 3e-3 is not: the moving BatchNormalization statistics lag the last steps, and runs
        // that differ only in summation order (AVX2 and AVX-512 kernels) measured 0.62-0.85 while
        // the weights of any one run evaluate identically on both. So only a clear margin over
        // chance is asked of it here.
        QVERIFY(j.value(QStringLiteral("val_accuracy")).toDouble() >= 0.55);
        QVERIFY(j.value(QStringLiteral("train_accuracy")).toDouble() >= 0.80);
        QVERIFY(j.value(QStringLiteral("train_loss")).toDouble() < 0.6);
    }

    void twoTower() {
        QJsonObject j = train("two_tower.kiln");
        QVERIFY(!j.isEmpty());
        QVERIFY2(j.value(QStringLiteral("val_accuracy")).toDouble() >= 0.95, "two-tower validation accuracy below 95 %");
    }
};

QTEST_APPLESS_MAIN(TestExamples)
#include "tst_examples.moc"
