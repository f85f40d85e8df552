// SPDX-License-Identifier: Apache-2.0
// kiln-test-libs: kiln_io Qt6::Core
// Event files read by TensorBoard itself: EventAccumulator lists our scalar, histogram and image
// tags, and its steps, values, bucket counts and decoded pixels equal what Kiln logged
// (tests/interop/tensorboard_read.py).
#include <QtTest/QtTest>

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <cmath>
#include <random>
#include <vector>

#include "engine/io/tfevents.h"
#include "tests/python_env.h"

using namespace kiln::engine;
using namespace kiln::engine::io;

class TstTensorBoard : public QObject {
    Q_OBJECT
private:
    QString m_python;

private slots:
    void initTestCase() {
        m_python = kiln::test::pythonEnvInterpreter();
        if (m_python.isEmpty()) QSKIP("the Python environment with TensorBoard could not be created");
    }

    void eventAccumulatorSeesWhatWeLogged() {
        QTemporaryDir dir;
        const std::string logdir = dir.filePath(QStringLiteral("run/tb")).toStdString();
        auto w = EventFileWriter::create(logdir);
        QVERIFY2(w.ok(), w.ok() ? "" : w.error().toString().c_str());
        QVERIFY(QFileInfo(QString::fromStdString((*w)->path())).fileName().startsWith(QStringLiteral("events.out.tfevents.")));

        std::vector<float> loss;
        for (int s = 0; s < 50; ++s) {
            loss.push_back(2.0f * std::exp(-0.05f * static_cast<float>(s)) + 0.125f);
            QVERIFY((*w)->scalar("epoch_loss", s, loss.back()).ok());
            QVERIFY((*w)->scalar("learning_rate", s, 0.001 * (s < 25 ? 1.0 : 0.5)).ok());
        }
        std::mt19937 gen(2);
        std::normal_distribution<float> normal(0.5f, 2.0f);
        std::vector<float> weights(1000);
        for (auto& v : weights) v = normal(gen);
        Histogram h = Histogram::of(weights, 20);
        QCOMPARE(h.num, 1000.0);
        double total = 0;
        for (double c : h.bucket) total += c;
        QCOMPARE(total, 1000.0);
        QVERIFY((*w)->histogram("dense/kernel", 10, h).ok());
        QVERIFY((*w)->histogram("dense/kernel", 20, weights, 7).ok());

        const int width = 5, height = 3;
        std::vector<uint8_t> rgb(static_cast<size_t>(width * height * 3)), gray(static_cast<size_t>(width * height));
        for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<uint8_t>(i * 17 % 256);
        for (size_t i = 0; i < gray.size(); ++i) gray[i] = static_cast<uint8_t>(255 - i * 9);
        QVERIFY((*w)->image("samples/rgb", 3, height, width, 3, rgb).ok());
        QVERIFY((*w)->image("samples/gray", 4, height, width, 1, gray).ok());
        auto badImage = (*w)->image("bad", 0, height, width, 2, gray);
        QVERIFY(!badImage.ok());
        QVERIFY((*w)->close().ok());

        QProcess p;
        p.start(m_python, {QStringLiteral(KILN_SOURCE_DIR "/tests/interop/tensorboard_read.py"), QString::fromStdString(logdir)});
        QVERIFY(p.waitForFinished(300000));
        const QByteArray out = p.readAllStandardOutput();
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        const QJsonObject doc = QJsonDocument::fromJson(out).object();
        QVERIFY2(!doc.isEmpty(), out.constData());

        const QJsonObject tags = doc[QStringLiteral("tags")].toObject();
        QCOMPARE(tags[QStringLiteral("scalars")].toArray(),
                 (QJsonArray{QStringLiteral("epoch_loss"), QStringLiteral("learning_rate")}));
        QCOMPARE(tags[QStringLiteral("histograms")].toArray(), (QJsonArray{QStringLiteral("dense/kernel")}));
        QCOMPARE(tags[QStringLiteral("images")].toArray(), (QJsonArray{QStringLiteral("samples/gray"), QStringLiteral("samples/rgb")}));
        QCOMPARE(doc[QStringLiteral("file_version")].toDouble(), 2.0);

        const QJsonArray sl = doc[QStringLiteral("scalars")].toObject()[QStringLiteral("epoch_loss")].toArray();
        QCOMPARE(sl.size(), 50);
        for (int s = 0; s < 50; ++s) {
            QCOMPARE(sl[s].toArray()[0].toInt(), s);
            QCOMPARE(static_cast<float>(sl[s].toArray()[1].toDouble()), loss[static_cast<size_t>(s)]);
        }
        const QJsonArray lr = doc[QStringLiteral("scalars")].toObject()[QStringLiteral("learning_rate")].toArray();
        QCOMPARE(static_cast<float>(lr[30].toArray()[1].toDouble()), 0.0005f);

        const QJsonArray hs = doc[QStringLiteral("histograms")].toObject()[QStringLiteral("dense/kernel")].toArray();
        QCOMPARE(hs.size(), 2);
        const QJsonObject h0 = hs[0].toObject();
        QCOMPARE(h0[QStringLiteral("step")].toInt(), 10);
        QCOMPARE(h0[QStringLiteral("num")].toDouble(), 1000.0);
        QCOMPARE(h0[QStringLiteral("min")].toDouble(), h.min);
        QCOMPARE(h0[QStringLiteral("max")].toDouble(), h.max);
        QCOMPARE(h0[QStringLiteral("sum")].toDouble(), h.sum);
        QCOMPARE(h0[QStringLiteral("sum_squares")].toDouble(), h.sumSquares);
        const QJsonArray buckets = h0[QStringLiteral("bucket")].toArray();
        QCOMPARE(buckets.size(), 20);
        for (int i = 0; i < 20; ++i) {
            QCOMPARE(buckets[i].toDouble(), h.bucket[static_cast<size_t>(i)]);
            QCOMPARE(h0[QStringLiteral("bucket_limit")].toArray()[i].toDouble(), h.bucketLimit[static_cast<size_t>(i)]);
        }
        QCOMPARE(hs[1].toObject()[QStringLiteral("bucket")].toArray().size(), 7);

        const QJsonObject images = doc[QStringLiteral("images")].toObject();
        const QJsonObject ri = images[QStringLiteral("samples/rgb")].toArray()[0].toObject();
        QCOMPARE(ri[QStringLiteral("step")].toInt(), 3);
        QCOMPARE(ri[QStringLiteral("width")].toInt(), width);
        QCOMPARE(ri[QStringLiteral("height")].toInt(), height);
        QCOMPARE(ri[QStringLiteral("format")].toString(), QStringLiteral("PNG"));
        QCOMPARE(ri[QStringLiteral("mode")].toString(), QStringLiteral("RGB"));
        const QJsonArray px = ri[QStringLiteral("pixels")].toArray();
        QCOMPARE(px.size(), static_cast<qsizetype>(rgb.size()));
        for (size_t i = 0; i < rgb.size(); ++i) QCOMPARE(px[static_cast<qsizetype>(i)].toInt(), static_cast<int>(rgb[i]));
        const QJsonObject gi = images[QStringLiteral("samples/gray")].toArray()[0].toObject();
        QCOMPARE(gi[QStringLiteral("mode")].toString(), QStringLiteral("L"));
        const QJsonArray gpx = gi[QStringLiteral("pixels")].toArray();
        for (size_t i = 0; i < gray.size(); ++i) QCOMPARE(gpx[static_cast<qsizetype>(i)].toInt(), static_cast<int>(gray[i]));
    }
};

QTEST_GUILESS_MAIN(TstTensorBoard)
#include "tst_tensorboard.moc"
