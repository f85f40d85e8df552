// SPDX-License-Identifier: Apache-2.0
// kiln-test-libs: kiln_data Qt6::Core
// TFRecords of tf.train.Example both ways with real TensorFlow: Kiln writes (uncompressed, GZIP,
// ZLIB) and tf.data + tf.io.parse_single_example read the same values and count; TensorFlow writes
// with tf.io.TFRecordWriter and Kiln reads the same values back (tests/interop/tf_records.py).
#include <QtTest/QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <random>
#include <string>
#include <vector>

#include "engine/data/example.h"
#include "engine/data/tfrecord.h"
#include "tests/python_env.h"

using namespace kiln::engine;
using namespace kiln::engine::data;

namespace {

// Runs the peer script; returns its output, or fails the test with it.
bool runPeer(const QString& python, const QString& mode, const QString& dir, QString& output) {
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(python, {QStringLiteral(KILN_SOURCE_DIR "/tests/interop/tf_records.py"), mode, dir});
    bool finished = p.waitForFinished(600000);
    output = QString::fromLocal8Bit(p.readAll());
    return finished && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
}

QString hex(const std::string& s) { return QString::fromLatin1(QByteArray(s.data(), static_cast<qsizetype>(s.size())).toHex()); }

}  // namespace

class TstTfRecords : public QObject {
    Q_OBJECT
private:
    QString m_python;

private slots:
    void initTestCase() {
        m_python = kiln::test::pythonEnvInterpreter();
        if (m_python.isEmpty()) QSKIP("the Python environment with TensorFlow could not be created");
    }

    void kilnWritesTensorFlowReads() {
        QTemporaryDir dir;
        std::mt19937 gen(5);
        std::normal_distribution<float> normal;
        const int pixels = 12;
        QJsonArray files;
        const std::vector<std::pair<TfRecordCompression, int>> variants = {
            {TfRecordCompression::None, 300}, {TfRecordCompression::Gzip, 257}, {TfRecordCompression::Zlib, 31}};
        for (const auto& [compression, count] : variants) {
            const QString name = QStringLiteral("kiln_%1.tfrecord").arg(QString::fromLatin1(tfRecordCompressionName(compression)).toLower());
            auto w = TfRecordWriter::create(dir.filePath(name).toStdString(), compression);
            QVERIFY(w.ok());
            QJsonArray examples;
            for (int i = 0; i < count; ++i) {
                Example ex;
                const int64_t label = static_cast<int64_t>(gen() % 10) - (i % 3 == 0 ? (int64_t{1} << 40) : 0);
                std::vector<float> px(pixels);
                for (auto& v : px) v = normal(gen);
                std::vector<int64_t> ids;
                for (int k = 0; k < i % 5; ++k) ids.push_back(static_cast<int64_t>(gen()) - (int64_t{1} << 31));
                if (i % 7 == 0) ids.push_back(-1);
                std::vector<std::string> blobs;
                for (int k = 0; k < i % 3; ++k) {
                    std::string b(gen() % 9, '\0');
                    for (auto& c : b) c = static_cast<char>(gen() & 0xFF);
                    blobs.push_back(b);
                }
                const std::string nameValue = "sample " + std::to_string(i) + " – ü";
                ex.features["label"] = Feature::ofInt64s({label});
                ex.features["pixels"] = Feature::ofFloats(px);
                ex.features["ids"] = Feature::ofInt64s(ids);
                ex.features["name"] = Feature::ofBytes({nameValue});
                ex.features["blobs"] = Feature::ofBytes(blobs);
                QVERIFY((*w)->write(encodeExample(ex)).ok());
                QJsonArray jpx, jids, jblobs;
                for (float v : px) jpx.append(static_cast<double>(v));
                for (int64_t v : ids) jids.append(static_cast<qint64>(v));
                for (const auto& b : blobs) jblobs.append(hex(b));
                examples.append(QJsonObject{{QStringLiteral("label"), static_cast<qint64>(label)},
                                            {QStringLiteral("pixels"), jpx},
                                            {QStringLiteral("ids"), jids},
                                            {QStringLiteral("name"), QString::fromStdString(nameValue)},
                                            {QStringLiteral("blobs_hex"), jblobs}});
            }
            QVERIFY((*w)->close().ok());
            files.append(QJsonObject{{QStringLiteral("file"), name},
                                     {QStringLiteral("compression"), QString::fromLatin1(tfRecordCompressionName(compression))},
                                     {QStringLiteral("pixels"), pixels},
                                     {QStringLiteral("examples"), examples}});
        }
        QFile manifest(dir.filePath(QStringLiteral("manifest.json")));
        QVERIFY(manifest.open(QIODevice::WriteOnly));
        manifest.write(QJsonDocument(QJsonObject{{QStringLiteral("files"), files}}).toJson());
        manifest.close();
        QString out;
        const bool ok = runPeer(m_python, QStringLiteral("read"), dir.path(), out);
        QVERIFY2(ok, qPrintable(out));
        QVERIFY2(out.contains(QStringLiteral("OK kiln_.tfrecord NONE 300 records")) &&
                     out.contains(QStringLiteral("OK kiln_gzip.tfrecord GZIP 257 records")) &&
                     out.contains(QStringLiteral("OK kiln_zlib.tfrecord ZLIB 31 records")),
                 qPrintable(out));
    }

    void tensorFlowWritesKilnReads() {
        QTemporaryDir dir;
        QString out;
        const bool ok = runPeer(m_python, QStringLiteral("write"), dir.path(), out);
        QVERIFY2(ok, qPrintable(out));
        QFile f(dir.filePath(QStringLiteral("tf_expected.json")));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonArray expected = QJsonDocument::fromJson(f.readAll()).array();
        QCOMPARE(expected.size(), 57);
        for (const auto& [file, compression] : {std::pair{"tf_none.tfrecord", TfRecordCompression::None},
                                               std::pair{"tf_gzip.tfrecord", TfRecordCompression::Gzip},
                                               std::pair{"tf_zlib.tfrecord", TfRecordCompression::Zlib}}) {
            auto r = TfRecordReader::open(dir.filePath(QString::fromLatin1(file)).toStdString(), compression);
            QVERIFY(r.ok());
            std::string rec;
            int i = 0;
            for (;;) {
                auto more = (*r)->next(rec);
                QVERIFY2(more.ok(), more.ok() ? "" : more.error().toString().c_str());
                if (!*more) break;
                QVERIFY(i < expected.size());
                auto ex = decodeExample(rec);
                QVERIFY2(ex.ok(), ex.ok() ? "" : ex.error().toString().c_str());
                const QJsonObject want = expected[i].toObject();
                QCOMPARE(ex->features.size(), size_t{3});
                const Feature* label = ex->find("label");
                QVERIFY(label && label->kind == Feature::Kind::Int64);
                QCOMPARE(label->ints, (std::vector<int64_t>{want[QStringLiteral("label")].toInteger(), -1, 0}));
                const Feature* values = ex->find("values");
                QVERIFY(values && values->kind == Feature::Kind::Float);
                const QJsonArray wv = want[QStringLiteral("values")].toArray();
                QCOMPARE(values->floats.size(), static_cast<size_t>(wv.size()));
                for (qsizetype k = 0; k < wv.size(); ++k)
                    QCOMPARE(values->floats[static_cast<size_t>(k)], static_cast<float>(wv[k].toDouble()));
                const Feature* tags = ex->find("tags");
                QVERIFY(tags && tags->kind == Feature::Kind::Bytes);
                const QJsonArray wt = want[QStringLiteral("tags")].toArray();
                QCOMPARE(tags->bytes.size(), static_cast<size_t>(wt.size()));
                for (qsizetype k = 0; k < wt.size(); ++k) QCOMPARE(hex(tags->bytes[static_cast<size_t>(k)]), wt[k].toString());
                ++i;
            }
            QCOMPARE(i, 57);
        }
    }
};

QTEST_GUILESS_MAIN(TstTfRecords)
#include "tst_tf_records.moc"
