// kiln-test-timeout: 600
// SPDX-License-Identifier: Apache-2.0
// kiln-eval and kiln-predict end to end: a small image folder project (three classes of 8x8
// pictures in train/val/test folders) is trained with kiln-train, then evaluated on its splits
// and on another folder, and its pictures are predicted. The JSON report's structure and its
// consistency (accuracy is the confusion matrix's trace over its total, supports are row sums,
// loss equals log loss) are checked, as are a TFRecord project and the exit code and message of
// bad input; a table project's records carry their feature values and their file's line, and so
// do those of a TFRecord project whose Examples hold numbers and of a CSV index of numbers, whose
// rows kiln-predict also predicts from a CSV file of their own, as kiln-eval predicted them.
// Stored predictions: a second evaluation reads them and prints the same report;
// --no-cache, touched weights, a picture rewritten in place or added make it run the model again.
#include <QtTest>

#include <QDateTime>
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <algorithm>
#include <cmath>

#include "app_test_util.h"
#include "engine/data/example.h"
#include "engine/data/tfrecord.h"

namespace {

using kiln::test::program;
using kiln::test::Run;
using kiln::test::writeFile;

Run run(const char* name, const QStringList& args) {
    return kiln::test::runProgram(name, args);
}

QByteArray bmp(int level, int seed) {
    return kiln::test::greyBmp8(level, seed, 20);
}

const char* const kClasses[3] = {"dark", "grey", "light"};
const int kLevels[3] = {40, 128, 215};

QJsonObject parse(const Run& r) {
    return QJsonDocument::fromJson(r.out.trimmed().toUtf8()).object();
}

// Writes `project` to `path`, trains it for a run beside it (run/) and evaluates its test split
// with kiln-eval --json --samples-csv `csvPath` into `evaluated`.
void trainAndEvaluate(const QString& path, const QByteArray& project, const QString& csvPath, Run& evaluated) {
    writeFile(path, project);
    const QString runDir = QFileInfo(path).dir().filePath(QStringLiteral("run"));
    Run t = run("kiln-train", {path, QStringLiteral("--quiet"), QStringLiteral("--run-dir"), runDir, QStringLiteral("--run-store"),
                               QStringLiteral("none")});
    QVERIFY2(t.exitCode == 0, qPrintable(t.err));
    evaluated = run("kiln-eval", {path, QStringLiteral("--weights"), runDir, QStringLiteral("--json"), QStringLiteral("--samples-csv"), csvPath});
}

}  // namespace

class TestKilnEval : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        QVERIFY(QFileInfo::exists(program("kiln-eval")));
        QVERIFY(QFileInfo::exists(program("kiln-predict")));
        QVERIFY(QFileInfo::exists(program("kiln-data")));
        QVERIFY(m_dir.isValid());
        const QString root = m_dir.filePath(QStringLiteral("pics"));
        for (const char* split : {"train", "val", "test"})
            for (int c = 0; c < 3; ++c)
                for (int i = 0; i < (QLatin1String(split) == QLatin1String("train") ? 12 : 5); ++i)
                    writeFile(QStringLiteral("%1/%2/%3/%4.bmp").arg(root, QLatin1String(split), QLatin1String(kClasses[c])).arg(i),
                              bmp(kLevels[c], i + (split[1] == 'e' ? 50 : 0)));
        // Other data in the project's layout, with one grey picture that looks light.
        for (int c = 0; c < 3; ++c)
            for (int i = 0; i < 3; ++i)
                writeFile(QStringLiteral("%1/%2/%3.bmp").arg(m_dir.filePath(QStringLiteral("other")), QLatin1String(kClasses[c])).arg(i),
                          bmp(c == 1 && i == 0 ? 230 : kLevels[c], i + 90));
        const QByteArray project =
            "{\"format\": \"kiln-project\", \"version\": 2,\n"
            " \"graph\": {\"nodes\": [\n"
            "  {\"name\": \"image\", \"op\": \"Input\", \"attrs\": {\"shape\": [8, 8, 3]}},\n"
            "  {\"name\": \"flat\", \"op\": \"Flatten\", \"inputs\": [\"image\"]},\n"
            "  {\"name\": \"logits\", \"op\": \"Dense\", \"inputs\": [\"flat\"], \"attrs\": {\"units\": 3}}]},\n"
            " \"data\": {\"format\": \"folder\", \"path\": \"pics\", \"workers\": 2,\n"
            "          \"transforms\": [{\"type\": \"normalize\", \"preset\": \"symmetric\"}]},\n"
            " \"training\": {\"epochs\": 4, \"batch_size\": 8, \"seed\": 5, \"optimizer\": {\"type\": \"adam\", \"learning_rate\": 0.02},\n"
            "   \"loss\": {\"type\": \"SparseCategoricalCrossentropy\", \"from_logits\": true}, \"metrics\": [\"accuracy\"]}}\n";
        m_project = m_dir.filePath(QStringLiteral("pics.kiln"));
        writeFile(m_project, project);
        m_runDir = m_dir.filePath(QStringLiteral("run"));
        Run t = run("kiln-train", {m_project, QStringLiteral("--quiet"), QStringLiteral("--json"), QStringLiteral("--run-dir"), m_runDir,
                                   QStringLiteral("--run-store"), QStringLiteral("none")});
        QVERIFY2(t.exitCode == 0, qPrintable(t.err));
        m_trainJson = QJsonDocument::fromJson(t.out.trimmed().split(QLatin1Char('\n')).last().toUtf8()).object();
        QVERIFY(QFileInfo::exists(m_runDir + QStringLiteral("/weights.safetensors")));
    }

    void jsonReportIsConsistent() {
        const QString csvPath = m_dir.filePath(QStringLiteral("samples.csv"));
        Run r = run("kiln-eval", {m_project, QStringLiteral("--weights"), m_runDir, QStringLiteral("--json"), QStringLiteral("--samples-csv"), csvPath});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject j = parse(r);
        QCOMPARE(j.value(QStringLiteral("samples")).toInt(), 15);
        const QJsonArray classes = j.value(QStringLiteral("classes")).toArray();
        QCOMPARE(classes.size(), 3);
        QCOMPARE(classes[0].toString(), QStringLiteral("dark"));
        const QJsonArray matrix = j.value(QStringLiteral("confusion_matrix")).toArray();
        QCOMPARE(matrix.size(), 3);
        int total = 0, trace = 0;
        const QJsonArray perClass = j.value(QStringLiteral("per_class")).toArray();
        QCOMPARE(perClass.size(), 3);
        for (int t = 0; t < 3; ++t) {
            int row = 0;
            for (int p = 0; p < 3; ++p) row += matrix[t].toArray()[p].toInt();
            total += row;
            trace += matrix[t].toArray()[t].toInt();
            const QJsonObject f = perClass[t].toObject();
            QCOMPARE(f.value(QStringLiteral("class")).toString(), classes[t].toString());
            QCOMPARE(f.value(QStringLiteral("support")).toInt(), row);
            for (const char* key : {"precision", "recall", "f1"}) {
                const double v = f.value(QLatin1String(key)).toDouble(-1);
                QVERIFY(v >= 0 && v <= 1);
            }
        }
        QCOMPARE(total, 15);
        QCOMPARE(j.value(QStringLiteral("accuracy")).toDouble(), double(trace) / total);
        // The model learnt the task, and kiln-train measured the same test set.
        QVERIFY2(trace >= 13, qPrintable(r.out));
        QVERIFY(std::abs(j.value(QStringLiteral("accuracy")).toDouble() - m_trainJson.value(QStringLiteral("test_accuracy")).toDouble()) < 1e-9);
        QVERIFY(std::abs(j.value(QStringLiteral("loss")).toDouble() - m_trainJson.value(QStringLiteral("test_loss")).toDouble()) < 1e-5);
        // The loss of a softmax cross-entropy head is the log loss of its probabilities.
        QVERIFY(std::abs(j.value(QStringLiteral("log_loss")).toDouble() - j.value(QStringLiteral("loss")).toDouble()) < 1e-4);
        for (const char* key : {"macro_avg", "weighted_avg"}) {
            const QJsonObject a = j.value(QLatin1String(key)).toObject();
            QVERIFY(a.contains(QStringLiteral("precision")) && a.contains(QStringLiteral("f1")));
            QCOMPARE(a.value(QStringLiteral("support")).toInt(), 15);
        }
        const QJsonArray roc = j.value(QStringLiteral("roc")).toArray(), pr = j.value(QStringLiteral("pr")).toArray();
        QCOMPARE(roc.size(), 3);
        QCOMPARE(pr.size(), 3);
        for (int c = 0; c < 3; ++c) {
            const QJsonObject o = roc[c].toObject();
            const QJsonArray fpr = o.value(QStringLiteral("fpr")).toArray(), tpr = o.value(QStringLiteral("tpr")).toArray();
            QCOMPARE(fpr.size(), tpr.size());
            QCOMPARE(fpr.first().toDouble(), 0.0);
            QCOMPARE(fpr.last().toDouble(), 1.0);
            QCOMPARE(tpr.last().toDouble(), 1.0);
            const double auc = o.value(QStringLiteral("auc")).toDouble(-1);
            QVERIFY(auc >= 0.5 && auc <= 1.0);
            const QJsonObject p = pr[c].toObject();
            QCOMPARE(p.value(QStringLiteral("precision")).toArray().last().toDouble(), 1.0);
            QCOMPARE(p.value(QStringLiteral("recall")).toArray().last().toDouble(), 0.0);
            QCOMPARE(p.value(QStringLiteral("thresholds")).toArray().size() + 1, p.value(QStringLiteral("recall")).toArray().size());
            QVERIFY(p.value(QStringLiteral("average_precision")).toDouble(-1) > 0);
        }
        const QJsonArray bins = j.value(QStringLiteral("calibration")).toObject().value(QStringLiteral("bins")).toArray();
        QCOMPARE(bins.size(), 10);
        int binned = 0;
        for (const auto& b : bins) binned += b.toObject().value(QStringLiteral("count")).toInt();
        QCOMPARE(binned, 15);
        // Per-sample records: the files of the test folder, one line each.
        QFile csv(csvPath);
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(csv.readAll()).trimmed().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 16);
        QCOMPARE(lines[0], QStringLiteral("index,source,true,predicted,confidence,loss,correct"));
        QVERIFY2(lines[1].contains(QStringLiteral("/pics/test/")), qPrintable(lines[1]));
    }

    void storedPredictionsAreReused() {
        // The first evaluation runs the model and stores its outputs beside the weights; the
        // second reads them and prints the same report. Single-threaded, so that two evaluations
        // that both run the model give the same bits.
        const QStringList args = {m_project, QStringLiteral("--weights"), m_runDir, QStringLiteral("--json"), QStringLiteral("--threads"),
                                  QStringLiteral("1")};
        const QString stored = QStringLiteral("read the stored predictions");
        const QString computed = QStringLiteral("evaluated and stored the predictions");
        // A test picture to be rewritten in place below: other pixels, the same name and size, and
        // even its old modification time put back. Its time is rounded to milliseconds first (what
        // QFile can set), so that only the hash of the (small) data can notice the change.
        const QString picture = m_dir.filePath(QStringLiteral("pics/test/grey/1.bmp"));
        QFile file(picture);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray original = file.readAll();
        const QDateTime originalTime = QFileInfo(picture).lastModified();
        file.close();
        auto rewrite = [&](const QByteArray& bytes) {
            QFile f(picture);
            QVERIFY(f.open(QIODevice::ReadWrite));
            QCOMPARE(f.write(bytes), qint64(bytes.size()));
            QVERIFY(f.flush());  // before the time is set, so that the write does not change it
            QVERIFY(f.setFileTime(originalTime, QFileDevice::FileModificationTime));
        };
        rewrite(original);
        Run first = run("kiln-eval", args + QStringList{QStringLiteral("--no-cache")});
        QVERIFY2(first.exitCode == 0, qPrintable(first.err));
        QVERIFY2(first.err.contains(computed), qPrintable(first.err));
        QVERIFY(QFileInfo::exists(m_runDir + QStringLiteral("/evaluations/weights.safetensors.test.kiln-eval")));
        Run second = run("kiln-eval", args);
        QVERIFY2(second.exitCode == 0, qPrintable(second.err));
        QVERIFY2(second.err.contains(stored), qPrintable(second.err));
        QCOMPARE(second.out, first.out);
        // --no-cache runs the model again, with the same result.
        Run forced = run("kiln-eval", args + QStringList{QStringLiteral("--no-cache")});
        QVERIFY2(forced.err.contains(computed) && !forced.err.contains(stored), qPrintable(forced.err));
        QCOMPARE(forced.out, first.out);
        // The text report comes from the same stored outputs.
        Run text = run("kiln-eval", {m_project, QStringLiteral("--weights"), m_runDir, QStringLiteral("--threads"), QStringLiteral("1")});
        QVERIFY2(text.err.contains(stored), qPrintable(text.err));
        QVERIFY(text.out.contains(QStringLiteral("Confusion matrix")));

        const QByteArray light = bmp(kLevels[2], 1);
        QCOMPARE(light.size(), original.size());
        rewrite(light);
        QCOMPARE(QFileInfo(picture).lastModified(), originalTime);
        Run edited = run("kiln-eval", args);
        QVERIFY2(edited.exitCode == 0, qPrintable(edited.err));
        QVERIFY2(edited.err.contains(computed) && !edited.err.contains(stored), qPrintable(edited.err));
        QVERIFY(parse(edited).value(QStringLiteral("loss")).toDouble() != parse(first).value(QStringLiteral("loss")).toDouble());
        Run editedAgain = run("kiln-eval", args);
        QVERIFY2(editedAgain.err.contains(stored), qPrintable(editedAgain.err));
        QCOMPARE(editedAgain.out, edited.out);
        rewrite(original);
        Run restored = run("kiln-eval", args);
        QVERIFY2(restored.err.contains(computed), qPrintable(restored.err));
        QCOMPARE(restored.out, first.out);

        // The weights touched (same bytes, newer time): evaluated again, same numbers.
        QFile weights(m_runDir + QStringLiteral("/weights.safetensors"));
        QVERIFY(weights.open(QIODevice::ReadWrite));
        QVERIFY(weights.setFileTime(QFileInfo(weights).lastModified().addSecs(5), QFileDevice::FileModificationTime));
        weights.close();
        Run touched = run("kiln-eval", args);
        QVERIFY2(touched.err.contains(computed), qPrintable(touched.err));
        QCOMPARE(touched.out, first.out);
        // A picture added to a class folder of other data: that data is evaluated again.
        const QString otherArg = m_dir.filePath(QStringLiteral("other"));
        const QStringList otherArgs = {m_project, QStringLiteral("--weights"), m_runDir, QStringLiteral("--json"), QStringLiteral("--split"), otherArg};
        Run other1 = run("kiln-eval", otherArgs);
        Run other2 = run("kiln-eval", otherArgs);
        QVERIFY2(other2.err.contains(stored), qPrintable(other2.err));
        QCOMPARE(other2.out, other1.out);
        writeFile(otherArg + QStringLiteral("/dark/9.bmp"), bmp(kLevels[0], 99));
        Run other3 = run("kiln-eval", otherArgs);
        QVERIFY2(other3.err.contains(computed), qPrintable(other3.err));
        QCOMPARE(parse(other3).value(QStringLiteral("samples")).toInt(), 10);
        QVERIFY(QFile::remove(otherArg + QStringLiteral("/dark/9.bmp")));
    }

    void textReportAndOtherSplits() {
        Run text = run("kiln-eval", {m_project, QStringLiteral("--weights"), m_runDir + QStringLiteral("/weights.safetensors"), QStringLiteral("--split"),
                                     QStringLiteral("val")});
        QVERIFY2(text.exitCode == 0, qPrintable(text.err));
        QVERIFY(text.out.contains(QStringLiteral("Confusion matrix")));
        QVERIFY(text.out.contains(QStringLiteral("macro avg")));
        Run train = run("kiln-eval", {m_project, QStringLiteral("--weights"), m_runDir, QStringLiteral("--split"), QStringLiteral("train"), QStringLiteral("--json")});
        QVERIFY2(train.exitCode == 0, qPrintable(train.err));
        QCOMPARE(parse(train).value(QStringLiteral("samples")).toInt(), 36);
        // Another folder in the project's layout: 9 pictures, the odd grey one predicted light.
        Run other = run("kiln-eval", {m_project, QStringLiteral("--weights"), m_runDir, QStringLiteral("--split"), m_dir.filePath(QStringLiteral("other")),
                                      QStringLiteral("--json")});
        QVERIFY2(other.exitCode == 0, qPrintable(other.err));
        const QJsonObject o = parse(other);
        QCOMPARE(o.value(QStringLiteral("samples")).toInt(), 9);
        const QJsonObject worst = o.value(QStringLiteral("samples_most_confidently_wrong")).toArray().first().toObject();
        QVERIFY2(worst.value(QStringLiteral("source")).toString().endsWith(QStringLiteral("other/grey/0.bmp")), qPrintable(other.out));
        QCOMPARE(worst.value(QStringLiteral("correct")).toBool(), false);
    }

    void predictsPictures() {
        const QString dark = m_dir.filePath(QStringLiteral("pics/test/dark/0.bmp"));
        Run r = run("kiln-predict", {m_project, QStringLiteral("--weights"), m_runDir, dark, m_dir.filePath(QStringLiteral("pics/test/light")),
                                     QStringLiteral("--top-k"), QStringLiteral("2"), QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject j = parse(r);
        const QJsonArray preds = j.value(QStringLiteral("predictions")).toArray();
        QCOMPARE(preds.size(), 6);
        QCOMPARE(preds[0].toObject().value(QStringLiteral("source")).toString(), dark);
        QCOMPARE(preds[0].toObject().value(QStringLiteral("predicted")).toString(), QStringLiteral("dark"));
        for (int i = 1; i < 6; ++i) QCOMPARE(preds[i].toObject().value(QStringLiteral("predicted")).toString(), QStringLiteral("light"));
        const QJsonArray top = preds[0].toObject().value(QStringLiteral("top_k")).toArray();
        QCOMPARE(top.size(), 2);
        QVERIFY(top[0].toObject().value(QStringLiteral("probability")).toDouble() >= top[1].toObject().value(QStringLiteral("probability")).toDouble());
        Run csv = run("kiln-predict", {m_project, QStringLiteral("--weights"), m_runDir, dark, QStringLiteral("--csv")});
        QVERIFY2(csv.exitCode == 0, qPrintable(csv.err));
        const QStringList lines = csv.out.trimmed().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 2);
        QCOMPARE(lines[0], QStringLiteral("source,class_1,probability_1"));
        QVERIFY(lines[1].startsWith(dark + QStringLiteral(",dark,")));
    }

    void tfrecordProject() {
        // The pictures as TFRecord files (kiln-data convert), trained and evaluated from them.
        for (const char* split : {"train", "test"}) {
            Run c = run("kiln-data", {QStringLiteral("convert"), m_dir.filePath(QStringLiteral("pics/%1").arg(QLatin1String(split))),
                                      m_dir.filePath(QStringLiteral("%1.tfrecord").arg(QLatin1String(split)))});
            QVERIFY2(c.exitCode == 0, qPrintable(c.err));
        }
        const QByteArray project =
            "{\"format\": \"kiln-project\", \"version\": 2,\n"
            " \"graph\": {\"nodes\": [\n"
            "  {\"name\": \"image\", \"op\": \"Input\", \"attrs\": {\"shape\": [8, 8, 3]}},\n"
            "  {\"name\": \"flat\", \"op\": \"Flatten\", \"inputs\": [\"image\"]},\n"
            "  {\"name\": \"logits\", \"op\": \"Dense\", \"inputs\": [\"flat\"], \"attrs\": {\"units\": 3}}]},\n"
            " \"data\": {\"format\": \"tfrecord\", \"train\": \"train.tfrecord\", \"test\": \"test.tfrecord\",\n"
            "          \"class_names\": [\"dark\", \"grey\", \"light\"],\n"
            "          \"transforms\": [{\"type\": \"normalize\", \"preset\": \"symmetric\"}]},\n"
            " \"training\": {\"epochs\": 3, \"batch_size\": 8, \"seed\": 5, \"optimizer\": {\"type\": \"adam\", \"learning_rate\": 0.02},\n"
            "   \"loss\": {\"type\": \"SparseCategoricalCrossentropy\", \"from_logits\": true}, \"metrics\": [\"accuracy\"]}}\n";
        const QString path = m_dir.filePath(QStringLiteral("records.kiln"));
        writeFile(path, project);
        const QString runDir = m_dir.filePath(QStringLiteral("records-run"));
        Run t = run("kiln-train", {path, QStringLiteral("--quiet"), QStringLiteral("--json"), QStringLiteral("--run-dir"), runDir,
                                   QStringLiteral("--run-store"), QStringLiteral("none")});
        QVERIFY2(t.exitCode == 0, qPrintable(t.err));
        const QJsonObject trained = QJsonDocument::fromJson(t.out.trimmed().split(QLatin1Char('\n')).last().toUtf8()).object();
        Run e = run("kiln-eval", {path, QStringLiteral("--weights"), runDir, QStringLiteral("--json")});
        QVERIFY2(e.exitCode == 0, qPrintable(e.err));
        const QJsonObject j = parse(e);
        QCOMPARE(j.value(QStringLiteral("samples")).toInt(), 15);
        QVERIFY(std::abs(j.value(QStringLiteral("accuracy")).toDouble() - trained.value(QStringLiteral("test_accuracy")).toDouble()) < 1e-9);
        QVERIFY(j.value(QStringLiteral("samples_most_confidently_wrong")).toArray().first().toObject().value(QStringLiteral("source")).toString().contains(QStringLiteral("test.tfrecord@")));
        QVERIFY(!j.contains(QStringLiteral("feature_names")));  // pictures are not a table
        Run p = run("kiln-predict", {path, QStringLiteral("--weights"), runDir, m_dir.filePath(QStringLiteral("test.tfrecord")), QStringLiteral("--json")});
        QVERIFY2(p.exitCode == 0, qPrintable(p.err));
        QCOMPARE(parse(p).value(QStringLiteral("predictions")).toArray().size(), 15);
    }

    void badInputExitsTwo() {
        Run noWeights = run("kiln-eval", {m_project});
        QCOMPARE(noWeights.exitCode, 2);
        QVERIFY(noWeights.err.contains(QStringLiteral("--weights")));
        Run missing = run("kiln-eval", {m_project, QStringLiteral("--weights"), m_dir.filePath(QStringLiteral("nope.safetensors"))});
        QCOMPARE(missing.exitCode, 2);
        QVERIFY2(missing.err.contains(QStringLiteral("nope.safetensors")), qPrintable(missing.err));
        Run notRun = run("kiln-eval", {m_project, QStringLiteral("--weights"), m_dir.filePath(QStringLiteral("pics"))});
        QCOMPARE(notRun.exitCode, 2);
        QVERIFY2(notRun.err.contains(QStringLiteral("weights.safetensors")), qPrintable(notRun.err));
        Run badSplit = run("kiln-eval", {m_project, QStringLiteral("--weights"), m_runDir, QStringLiteral("--split"), m_dir.filePath(QStringLiteral("nowhere"))});
        QCOMPARE(badSplit.exitCode, 2);
        QVERIFY2(badSplit.err.contains(QStringLiteral("nowhere")), qPrintable(badSplit.err));
        Run badBins = run("kiln-eval", {m_project, QStringLiteral("--weights"), m_runDir, QStringLiteral("--calibration-bins"), QStringLiteral("0")});
        QCOMPARE(badBins.exitCode, 2);
        // Weights of another model: named tensor, exit 2.
        QByteArray text;
        {
            QFile f(m_project);
            QVERIFY(f.open(QIODevice::ReadOnly));
            text = f.readAll();
        }
        text.replace("\"units\": 3}}]}", "\"units\": 3}}, {\"name\": \"extra\", \"op\": \"Dense\", \"inputs\": [\"logits\"], \"attrs\": {\"units\": 3}}]}");
        const QString other = m_dir.filePath(QStringLiteral("other.kiln"));
        writeFile(other, text);
        Run mismatch = run("kiln-eval", {other, QStringLiteral("--weights"), m_runDir});
        QCOMPARE(mismatch.exitCode, 2);
        QVERIFY2(mismatch.err.contains(QStringLiteral("extra")), qPrintable(mismatch.err));
        Run notPicture = run("kiln-predict", {m_project, QStringLiteral("--weights"), m_runDir, m_project});
        QCOMPARE(notPicture.exitCode, 2);
        Run noInput = run("kiln-predict", {m_project, QStringLiteral("--weights"), m_runDir, m_dir.filePath(QStringLiteral("absent.png"))});
        QCOMPARE(noInput.exitCode, 2);
        QVERIFY(noInput.err.contains(QStringLiteral("absent.png")));
    }

    // A table (data.format "csv", standardised): the JSON records and the CSV lines carry each
    // sample's feature values as the file holds them, named by the header, a category by name, and
    // name the sample by the file and the line of its row.
    void tableRecordsCarryFeatures() {
        QByteArray table = "size,shade,label\n";
        for (int i = 0; i < 60; ++i)
            table += QByteArray::number(10 + i) + (i % 2 ? ",dark," : ",light,") + QByteArray::number(i % 2) + "\n";
        writeFile(m_dir.filePath(QStringLiteral("table/table.csv")), table);
        const QString tableFile = QFileInfo(m_dir.filePath(QStringLiteral("table/table.csv"))).canonicalFilePath();
        const QByteArray project =
            "{\"format\": \"kiln-project\", \"version\": 2,\n"
            " \"graph\": {\"nodes\": [\n"
            "  {\"name\": \"x\", \"op\": \"Input\", \"attrs\": {\"shape\": [3]}},\n"
            "  {\"name\": \"logits\", \"op\": \"Dense\", \"inputs\": [\"x\"], \"attrs\": {\"units\": 2}}]},\n"
            " \"data\": {\"format\": \"csv\", \"path\": \"table.csv\", \"header\": true, \"label_column\": \"label\",\n"
            "          \"categorical_columns\": [\"shade\"], \"standardize\": true, \"split\": {\"test\": 0.25}},\n"
            " \"training\": {\"epochs\": 2, \"batch_size\": 8, \"seed\": 2, \"optimizer\": {\"type\": \"adam\", \"learning_rate\": 0.05},\n"
            "   \"loss\": {\"type\": \"SparseCategoricalCrossentropy\", \"from_logits\": true}}}\n";
        const QString csvPath = m_dir.filePath(QStringLiteral("table/samples.csv"));
        Run r;
        trainAndEvaluate(m_dir.filePath(QStringLiteral("table/table.kiln")), project, csvPath, r);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject j = parse(r);
        QCOMPARE(j.value(QStringLiteral("feature_names")).toArray(), (QJsonArray{QStringLiteral("size"), QStringLiteral("shade")}));
        const QJsonArray records = j.value(QStringLiteral("samples_most_confidently_wrong")).toArray();
        QCOMPARE(records.size(), 15);
        for (const auto& record : records) {
            const QJsonArray f = record.toObject().value(QStringLiteral("features")).toArray();
            QCOMPARE(f.size(), 2);
            const int size = f[0].toInt(-1);  // 10..69 as in the file, not standardised
            QVERIFY2(size >= 10 && size < 70 && f[0].toDouble() == size, qPrintable(r.out));
            QCOMPARE(f[1].toString(), QLatin1String(size % 2 ? "dark" : "light"));
            QCOMPARE(record.toObject().value(QStringLiteral("true")).toString(), QString::number(size % 2));
            // The source names the file and the line of the sample's row (the header is line 1).
            const QString source = record.toObject().value(QStringLiteral("source")).toString();
            QCOMPARE(source.section(QLatin1Char(':'), -1).toInt(), size - 8);
            QCOMPARE(QFileInfo(source.section(QLatin1Char(':'), 0, -2)).canonicalFilePath(), tableFile);
        }
        QFile csv(csvPath);
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(csv.readAll()).trimmed().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 16);
        QCOMPARE(lines[0], QStringLiteral("index,source,true,predicted,confidence,loss,correct,size,shade"));
        for (int l = 1; l < lines.size(); ++l) {
            const QStringList cells = lines[l].split(QLatin1Char(','));
            QCOMPARE(cells.size(), 9);
            QCOMPARE(cells[8], QLatin1String(cells[7].toInt() % 2 ? "dark" : "light"));
            QCOMPARE(cells[2], QString::number(cells[7].toInt() % 2));
            QCOMPARE(cells[1].section(QLatin1Char(':'), -1).toInt(), cells[7].toInt() - 8);
            QCOMPARE(QFileInfo(cells[1].section(QLatin1Char(':'), 0, -2)).canonicalFilePath(), tableFile);
        }
    }

    // TFRecord Examples of numbers (a float vector and an int64 label) are a table too: the
    // records carry the values as the files hold them (not standardised), named "x[i]", and
    // each sample's values are its own (the first element is the record's id, whose parity is
    // its label).
    void tfrecordTableRecordsCarryFeatures() {
        auto writeRecords = [&](const QString& path, int first, int count) {
            auto writer = kiln::engine::data::TfRecordWriter::create(path.toStdString());
            QVERIFY2(writer.ok(), writer.ok() ? "" : writer.error().toString().c_str());
            for (int i = first; i < first + count; ++i) {
                kiln::engine::data::Example e;
                e.features["x"] = kiln::engine::data::Feature::ofFloats({float(i), float(i % 2) * 2.0f + 0.1f * float(i % 5), 0.25f * float(i)});
                e.features["label"] = kiln::engine::data::Feature::ofInt64s({i % 2});
                QVERIFY((*writer)->write(kiln::engine::data::encodeExample(e)).ok());
            }
            QVERIFY((*writer)->close().ok());
        };
        QVERIFY(QDir().mkpath(m_dir.filePath(QStringLiteral("numbers"))));
        writeRecords(m_dir.filePath(QStringLiteral("numbers/train.tfrecord")), 500, 48);
        writeRecords(m_dir.filePath(QStringLiteral("numbers/test.tfrecord")), 600, 16);
        const QByteArray project =
            "{\"format\": \"kiln-project\", \"version\": 2,\n"
            " \"graph\": {\"nodes\": [\n"
            "  {\"name\": \"x\", \"op\": \"Input\", \"attrs\": {\"shape\": [3]}},\n"
            "  {\"name\": \"logits\", \"op\": \"Dense\", \"inputs\": [\"x\"], \"attrs\": {\"units\": 2}}]},\n"
            " \"data\": {\"format\": \"tfrecord\", \"train\": \"train.tfrecord\", \"test\": \"test.tfrecord\",\n"
            "          \"features\": {\"x\": {\"type\": \"float\", \"shape\": [3]}, \"label\": {\"type\": \"int64\", \"shape\": []}},\n"
            "          \"transforms\": [{\"type\": \"standardize\", \"column\": \"x\"}]},\n"
            " \"training\": {\"epochs\": 2, \"batch_size\": 8, \"seed\": 4, \"optimizer\": {\"type\": \"adam\", \"learning_rate\": 0.05},\n"
            "   \"loss\": {\"type\": \"SparseCategoricalCrossentropy\", \"from_logits\": true}}}\n";
        const QString csvPath = m_dir.filePath(QStringLiteral("numbers/samples.csv"));
        Run r;
        trainAndEvaluate(m_dir.filePath(QStringLiteral("numbers/numbers.kiln")), project, csvPath, r);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject j = parse(r);
        QCOMPARE(j.value(QStringLiteral("samples")).toInt(), 16);
        QCOMPARE(j.value(QStringLiteral("feature_names")).toArray(),
                 (QJsonArray{QStringLiteral("x[0]"), QStringLiteral("x[1]"), QStringLiteral("x[2]")}));
        const QJsonArray records = j.value(QStringLiteral("samples_most_confidently_wrong")).toArray();
        QCOMPARE(records.size(), 16);
        QSet<int> ids;
        for (const auto& record : records) {
            const QJsonArray f = record.toObject().value(QStringLiteral("features")).toArray();
            QCOMPARE(f.size(), 3);
            const int id = f[0].toInt(-1);
            QVERIFY2(id >= 600 && id < 616 && f[0].toDouble() == id, qPrintable(r.out));
            QCOMPARE(float(f[1].toDouble()), float(id % 2) * 2.0f + 0.1f * float(id % 5));
            QCOMPARE(float(f[2].toDouble()), 0.25f * float(id));
            QCOMPARE(record.toObject().value(QStringLiteral("true")).toString(), QString::number(id % 2));
            QVERIFY2(record.toObject().value(QStringLiteral("source")).toString().contains(QStringLiteral("test.tfrecord@")), qPrintable(r.out));
            ids.insert(id);
        }
        QCOMPARE(ids.size(), 16);
        QFile csv(csvPath);
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(csv.readAll()).trimmed().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 17);
        QCOMPARE(lines[0], QStringLiteral("index,source,true,predicted,confidence,loss,correct,x[0],x[1],x[2]"));
        for (int l = 1; l < lines.size(); ++l) {
            const QStringList cells = lines[l].split(QLatin1Char(','));
            QCOMPARE(cells.size(), 10);
            QCOMPARE(cells[2], QString::number(cells[7].toInt() % 2));
            QCOMPARE(cells[9].toFloat(), 0.25f * float(cells[7].toInt()));
        }
    }

    // A CSV index of number cells is a table as well: the vector variable `x` (columns x__0 to
    // x__2, the first a distinct id) gives features "x[0]" to "x[2]" with the file's values (not
    // standardised), and each sample is named by the index file and its line.
    void csvIndexTableRecordsCarryFeatures() {
        QByteArray index = "x__0,x__1,x__2,label,split\n";
        for (int i = 0; i < 40; ++i)
            index += QByteArray::number(700 + i) + ',' + QByteArray::number(i % 2 * 3 + i % 7 * 0.25) + ',' + QByteArray::number(i * 0.5) +
                     ',' + QByteArray::number(i % 2) + (i % 4 == 3 ? ",test\n" : ",train\n");
        writeFile(m_dir.filePath(QStringLiteral("index/index.csv")), index);
        const QString indexFile = QFileInfo(m_dir.filePath(QStringLiteral("index/index.csv"))).canonicalFilePath();
        const QByteArray project =
            "{\"format\": \"kiln-project\", \"version\": 2,\n"
            " \"graph\": {\"nodes\": [\n"
            "  {\"name\": \"x\", \"op\": \"Input\", \"attrs\": {\"shape\": [3]}},\n"
            "  {\"name\": \"logits\", \"op\": \"Dense\", \"inputs\": [\"x\"], \"attrs\": {\"units\": 2}}]},\n"
            " \"data\": {\"format\": \"csv_index\", \"path\": \"index.csv\", \"split_column\": \"split\",\n"
            "          \"transforms\": [{\"type\": \"standardize\", \"column\": \"x\"}]},\n"
            " \"training\": {\"epochs\": 2, \"batch_size\": 8, \"seed\": 4, \"optimizer\": {\"type\": \"adam\", \"learning_rate\": 0.05},\n"
            "   \"loss\": {\"type\": \"SparseCategoricalCrossentropy\", \"from_logits\": true}}}\n";
        const QString csvPath = m_dir.filePath(QStringLiteral("index/samples.csv"));
        Run r;
        trainAndEvaluate(m_dir.filePath(QStringLiteral("index/index.kiln")), project, csvPath, r);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject j = parse(r);
        QCOMPARE(j.value(QStringLiteral("samples")).toInt(), 10);
        QCOMPARE(j.value(QStringLiteral("feature_names")).toArray(),
                 (QJsonArray{QStringLiteral("x[0]"), QStringLiteral("x[1]"), QStringLiteral("x[2]")}));
        for (const auto& record : j.value(QStringLiteral("samples_most_confidently_wrong")).toArray()) {
            const QJsonArray f = record.toObject().value(QStringLiteral("features")).toArray();
            QCOMPARE(f.size(), 3);
            const int id = f[0].toInt(-1), i = id - 700;
            QVERIFY2(i >= 0 && i < 40 && i % 4 == 3, qPrintable(r.out));
            QCOMPARE(float(f[1].toDouble()), float(i % 2 * 3 + i % 7 * 0.25));
            QCOMPARE(float(f[2].toDouble()), float(i * 0.5));
            QCOMPARE(record.toObject().value(QStringLiteral("true")).toString(), QString::number(i % 2));
            const QString source = record.toObject().value(QStringLiteral("source")).toString();
            QCOMPARE(source.section(QLatin1Char(':'), -1).toInt(), i + 2);
            QCOMPARE(QFileInfo(source.section(QLatin1Char(':'), 0, -2)).canonicalFilePath(), indexFile);
        }

        // kiln-predict on CSV rows: the test rows in a file of their own (no split column), each
        // predicted as kiln-eval predicted it, named by its line, with the two classes and their
        // probabilities.
        QMap<int, QString> evaluated;  // feature x[0] (700 + i) -> predicted class
        {
            QFile samples(csvPath);
            QVERIFY(samples.open(QIODevice::ReadOnly | QIODevice::Text));
            const QStringList header = QString::fromUtf8(samples.readLine()).trimmed().split(QLatin1Char(','));
            const qsizetype predicted = header.indexOf(QStringLiteral("predicted")), x0 = header.indexOf(QStringLiteral("x[0]"));
            QVERIFY2(predicted >= 0 && x0 >= 0, qPrintable(header.join(QLatin1Char(','))));
            while (!samples.atEnd()) {
                const QStringList cells = QString::fromUtf8(samples.readLine()).trimmed().split(QLatin1Char(','));
                evaluated[cells.value(x0).toInt()] = cells.value(predicted);
            }
        }
        QCOMPARE(evaluated.size(), 10);
        QByteArray rows = "x__0,x__1,x__2,label\n";
        QList<int> ids;
        for (int i = 3; i < 40; i += 4) {
            rows += QByteArray::number(700 + i) + ',' + QByteArray::number(i % 2 * 3 + i % 7 * 0.25) + ',' +
                    QByteArray::number(i * 0.5) + ',' + QByteArray::number(i % 2) + '\n';
            ids << 700 + i;
        }
        const QString rowsPath = m_dir.filePath(QStringLiteral("index/rows.csv"));
        writeFile(rowsPath, rows);
        Run p = run("kiln-predict", {m_dir.filePath(QStringLiteral("index/index.kiln")), QStringLiteral("--weights"),
                                     m_dir.filePath(QStringLiteral("index/run")), rowsPath, QStringLiteral("--top-k"),
                                     QStringLiteral("2"), QStringLiteral("--csv")});
        QVERIFY2(p.exitCode == 0, qPrintable(p.err));
        const QStringList lines = p.out.trimmed().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 1 + ids.size());
        QCOMPARE(lines[0], QStringLiteral("source,class_1,probability_1,class_2,probability_2"));
        for (qsizetype k = 0; k < ids.size(); ++k) {
            const QStringList cells = lines[k + 1].split(QLatin1Char(','));
            QCOMPARE(cells.size(), 5);
            QCOMPARE(cells[0].section(QLatin1Char(':'), -1).toInt(), int(k) + 2);  // the row's line, after the header
            QCOMPARE(cells[1], evaluated.value(ids[k]));
            QVERIFY(cells[2].toDouble() >= cells[4].toDouble());
            QVERIFY2(std::abs(cells[2].toDouble() + cells[4].toDouble() - 1.0) < 1e-5, qPrintable(lines[k + 1]));
        }
    }

private:
    QTemporaryDir m_dir;
    QString m_project;
    QString m_runDir;
    QJsonObject m_trainJson;
};

QTEST_GUILESS_MAIN(TestKilnEval)
#include "tst_kiln_eval.moc"
