// kiln-test-timeout: 600
// SPDX-License-Identifier: Apache-2.0
// A plugin loss and metric through the programs: a small CSV project trained by kiln-train with
// the example plugin huber_fbeta loaded (--plugin), whose Huber loss falls and whose F-beta metric
// reaches the run's history and TensorBoard files; kiln-eval with the plugin reports the loss and
// the metric, which the test recomputes from the predictions of the saved weights; without the
// plugin both programs stop with a message naming the field; --check-plugins passes the example's
// loss, fails a loss with a wrong gradient (exit 1, naming it) and refuses when nothing is loaded.
#include <QtTest>

#include <QDir>
#include <QDirIterator>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <vector>

#include "app_test_util.h"

namespace {

using kiln::test::Run;

const QString kPlugin = QStringLiteral(KILN_TEST_PLUGIN_DIR "/huber_fbeta.so");

QString write(const QTemporaryDir& dir, const QString& name, const QByteArray& text) {
    const QString path = dir.filePath(name);
    QFile f(path);
    f.open(QIODevice::WriteOnly);
    f.write(text);
    return path;
}

// Four features and a 0/1 label that depends on them linearly, with noise.
struct Rows {
    std::vector<std::array<double, 4>> x;
    std::vector<double> y;
};

Rows makeRows(QByteArray& csv) {
    Rows r;
    for (int i = 0; i < 160; ++i) {
        std::array<double, 4> f{};
        double s = 0;
        for (int k = 0; k < 4; ++k) {
            f[static_cast<size_t>(k)] =
                std::round(std::sin(i * 12.9898 + k * 78.233) * 43758.5453 * 1e4) / 1e4;
            f[static_cast<size_t>(k)] -= std::floor(f[static_cast<size_t>(k)]);
            f[static_cast<size_t>(k)] = std::round((f[static_cast<size_t>(k)] * 4 - 2) * 1e4) / 1e4;
            s += (k % 2 ? 1.0 : -0.7) * f[static_cast<size_t>(k)];
            csv += QByteArray::number(f[static_cast<size_t>(k)], 'f', 4) + ',';
        }
        const int label = s + 0.3 * std::sin(i * 3.1) > 0 ? 1 : 0;
        csv += QByteArray::number(label) + '\n';
        r.x.push_back(f);
        r.y.push_back(label);
    }
    return r;
}

const QByteArray kProject =
    "{\"format\": \"kiln-project\", \"version\": 2,\n"
    " \"graph\": {\"nodes\": [\n"
    "  {\"name\": \"x\", \"op\": \"Input\", \"attrs\": {\"shape\": [4]}},\n"
    "  {\"name\": \"y\", \"op\": \"Dense\", \"inputs\": [\"x\"], \"attrs\": {\"units\": 1, \"activation\": "
    "\"sigmoid\"}}]},\n"
    " \"data\": {\"format\": \"csv\", \"path\": \"rows.csv\"},\n"
    " \"training\": {\"epochs\": 8, \"batch_size\": 16, \"seed\": 7, \"optimizer\": {\"type\": \"adam\", "
    "\"learning_rate\": 0.05},\n"
    "   \"loss\": [{\"type\": \"plugin:example.Huber\", \"delta\": 0.25}],\n"
    "   \"metrics\": [{\"type\": \"plugin:example.FBeta\", \"beta\": 2, \"name\": \"f2\"}],\n"
    "   \"callbacks\": [{\"type\": \"TensorBoard\"}]}}\n";

// The float32 tensors of a safetensors file, by name.
std::map<QString, std::vector<float>> readSafetensors(const QString& path) {
    std::map<QString, std::vector<float>> out;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return out;
    const QByteArray bytes = f.readAll();
    quint64 headerSize = 0;
    std::memcpy(&headerSize, bytes.constData(), 8);
    const QJsonObject header =
        QJsonDocument::fromJson(bytes.mid(8, static_cast<qsizetype>(headerSize))).object();
    const char* data = bytes.constData() + 8 + headerSize;
    for (auto it = header.begin(); it != header.end(); ++it) {
        if (it.key() == QLatin1String("__metadata__")) continue;
        const QJsonArray off = it.value().toObject().value(QStringLiteral("data_offsets")).toArray();
        const auto begin = static_cast<size_t>(off[0].toInteger()),
                   end = static_cast<size_t>(off[1].toInteger());
        std::vector<float> v((end - begin) / sizeof(float));
        std::memcpy(v.data(), data + begin, end - begin);
        out[it.key()] = std::move(v);
    }
    return out;
}

}  // namespace

class TestKilnTrainPluginLoss : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_home;  // holds no plugin folder: programs run in it see only the plugins they are given
    Rows m_rows;

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        QVERIFY2(QFileInfo::exists(kPlugin), qPrintable(kPlugin));
        m_home = m_dir.filePath(QStringLiteral("home"));
        QVERIFY(QDir().mkpath(m_home));
        QByteArray csv;
        m_rows = makeRows(csv);
        write(m_dir, QStringLiteral("rows.csv"), csv);
        write(m_dir, QStringLiteral("p.kiln"), kProject);
    }

    void trainsAndEvaluatesWithThePlugin() {
        const QString runDir = m_dir.filePath(QStringLiteral("run"));
        Run r = kiln::test::runProgram(
            "kiln-train",
            {QStringLiteral("--plugin"), kPlugin, m_dir.filePath(QStringLiteral("p.kiln")),
             QStringLiteral("--run-dir"), runDir, QStringLiteral("--json")},
            600000);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err + r.out));
        QVERIFY2(r.out.contains(QStringLiteral(" - f2: ")), qPrintable(r.out));
        QFile runJson(runDir + QStringLiteral("/run.json"));
        QVERIFY(runJson.open(QIODevice::ReadOnly));
        const QJsonArray history =
            QJsonDocument::fromJson(runJson.readAll()).object().value(QStringLiteral("history")).toArray();
        QCOMPARE(history.size(), 8);
        const QJsonObject first = history.first().toObject().value(QStringLiteral("train")).toObject();
        const QJsonObject last = history.last().toObject().value(QStringLiteral("train")).toObject();
        const double firstLoss = first.value(QStringLiteral("loss")).toDouble(),
                     lastLoss = last.value(QStringLiteral("loss")).toDouble();
        qInfo("Huber loss %g -> %g, f2 %g -> %g", firstLoss, lastLoss,
              first.value(QStringLiteral("f2")).toDouble(), last.value(QStringLiteral("f2")).toDouble());
        QVERIFY2(lastLoss < 0.7 * firstLoss,
                 qPrintable(QStringLiteral("%1 -> %2").arg(firstLoss).arg(lastLoss)));
        QVERIFY(last.value(QStringLiteral("f2")).toDouble(-1) >
                0);  // the run summary holds each epoch's metrics
        // The metric is a TensorBoard scalar of the run too.
        bool tagged = false;
        for (QDirIterator it(runDir, {QStringLiteral("events.out.tfevents*")}, QDir::Files,
                             QDirIterator::Subdirectories);
             it.hasNext();) {
            QFile f(it.next());
            QVERIFY(f.open(QIODevice::ReadOnly));
            tagged = tagged || f.readAll().contains("epoch_f2");
        }
        QVERIFY(tagged);

        // kiln-eval over the whole table, then the same numbers from the saved weights.
        Run e = kiln::test::runProgram(
            "kiln-eval", {QStringLiteral("--plugin"), kPlugin, m_dir.filePath(QStringLiteral("p.kiln")),
                          QStringLiteral("--weights"), runDir, QStringLiteral("--split"),
                          QStringLiteral("train"), QStringLiteral("--json")});
        QVERIFY2(e.exitCode == 0, qPrintable(e.err + e.out));
        const QJsonObject report = QJsonDocument::fromJson(e.out.trimmed().toUtf8()).object();
        const auto weights = readSafetensors(runDir + QStringLiteral("/weights.safetensors"));
        QVERIFY(weights.count(QStringLiteral("y/kernel")) && weights.count(QStringLiteral("y/bias")));
        const auto& kernel = weights.at(QStringLiteral("y/kernel"));
        QCOMPARE(kernel.size(), size_t{4});
        double tp = 0, fp = 0, fn = 0, huber = 0;
        for (size_t i = 0; i < m_rows.y.size(); ++i) {
            double z = weights.at(QStringLiteral("y/bias"))[0];
            for (size_t k = 0; k < 4; ++k) z += static_cast<double>(kernel[k]) * m_rows.x[i][k];
            const double p = 1.0 / (1.0 + std::exp(-z));
            const bool predicted = p > 0.5, actual = m_rows.y[i] > 0.5;
            tp += predicted && actual;
            fp += predicted && !actual;
            fn += !predicted && actual;
            const double d = std::abs(p - m_rows.y[i]);
            huber += d <= 0.25 ? 0.5 * d * d : 0.25 * (d - 0.125);
        }
        const double f2 = 5 * tp / (5 * tp + 4 * fn + fp);
        huber /= static_cast<double>(m_rows.y.size());
        const double reported =
            report.value(QStringLiteral("metrics")).toObject().value(QStringLiteral("f2")).toDouble(-1);
        qInfo("kiln-eval: loss %g, f2 %g; recomputed: loss %g, f2 %g",
              report.value(QStringLiteral("loss")).toDouble(), reported, huber, f2);
        QVERIFY2(std::abs(reported - f2) < 1e-9, qPrintable(e.out));
        QVERIFY2(std::abs(report.value(QStringLiteral("loss")).toDouble() - huber) < 1e-4, qPrintable(e.out));
        QVERIFY(f2 > 0.7);
    }

    void checksPluginLosses() {
        Run good = kiln::test::runProgram("kiln-train", {QStringLiteral("--plugin"), kPlugin, QStringLiteral("--check-plugins")});
        QVERIFY2(good.exitCode == 0, qPrintable(good.err + good.out));
        QVERIFY2(good.out.contains(QStringLiteral("plugin:example.Huber  predictions [4,3], targets [4,3]  gradient vs "
                                                  "finite differences: passed")),
                 qPrintable(good.out));
        // The Quantile loss's required quantile comes from the plugin's declared check cases.
        QVERIFY2(good.out.contains(QStringLiteral("plugin:example.Quantile  median (predictions [5,1], targets [5,1])  "
                                                  "gradient vs finite differences: passed")),
                 qPrintable(good.out));
        QVERIFY2(good.out.contains(QStringLiteral("8 passed, 0 failed, 0 skipped")), qPrintable(good.out));
        Run bad = kiln::test::runProgram(
            "kiln-train", {QStringLiteral("--plugin"), QStringLiteral(KILN_TEST_PLUGIN_DIR "/bad/bad_loss.so"),
                           QStringLiteral("--check-plugins")});
        QCOMPARE(bad.exitCode, 1);
        QVERIFY2(bad.out.contains(QStringLiteral("plugin:bad.HalfGradient")) &&
                     bad.out.contains(QStringLiteral("gradient vs finite differences: FAILED (d loss / d prediction [")),
                 qPrintable(bad.out));
        // No plugin anywhere: an empty user plugin folder and no KILN_PLUGIN_PATH.
        Run none = kiln::test::runIsolated("kiln-train", {QStringLiteral("--check-plugins")}, m_home);
        QCOMPARE(none.exitCode, 2);
        QVERIFY2(none.err.contains(QStringLiteral("no plugin is loaded")), qPrintable(none.err));
    }

    void refusesWithoutThePlugin() {
        Run r = kiln::test::runIsolated("kiln-train", {m_dir.filePath(QStringLiteral("p.kiln")), QStringLiteral("--quiet")},
                                        m_home);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("training.loss[0].type")), qPrintable(r.err));
        QVERIFY2(r.err.contains(QStringLiteral("plugin:example.Huber")), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestKilnTrainPluginLoss)
#include "tst_kiln_train_plugin_loss.moc"
