// SPDX-License-Identifier: Apache-2.0
// kiln-train end to end: bad input exits 2 with a message naming the file and line or the node;
// --summary and --json; the run directory; the same seed twice gives identical weights; an image
// folder project trains from the streaming pipeline and lists the unreadable file it left out; run
// from a read-only folder, the run and its record go to the user's data folder; --weights-partial
// and its report; staged fine-tuning in one run.
#include <QtTest>

#include <QDir>
#include <algorithm>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include "app_test_util.h"

namespace {

using kiln::test::Run;

QString binary() { return kiln::test::program("kiln-train"); }
QString example(const char* name) { return QStringLiteral(KILN_SOURCE_DIR "/resources/examples/%1").arg(QLatin1String(name)); }

Run runTrain(const QStringList& args) {
    return kiln::test::runProgram("kiln-train", args, 600000);
}

QString write(const QTemporaryDir& dir, const QString& name, const QByteArray& text) {
    QString path = dir.filePath(name);
    QFile f(path);
    f.open(QIODevice::WriteOnly);
    f.write(text);
    return path;
}

// A valid small project over a CSV written next to it.
QByteArray project(const QByteArray& nodes, const QByteArray& extraTraining = {}) {
    return "{\n"
           "  \"format\": \"kiln-project\",\n"
           "  \"version\": 2,\n"
           "  \"graph\": {\"nodes\": [\n" + nodes + "\n  ]},\n"
           "  \"data\": {\"format\": \"csv\", \"path\": \"blobs.csv\", \"split\": {\"validation\": 0.25}},\n"
           "  \"training\": {\"epochs\": 3, \"batch_size\": 16, \"seed\": 3, " + extraTraining +
           "\"loss\": {\"type\": \"SparseCategoricalCrossentropy\", \"from_logits\": true}, \"metrics\": [\"accuracy\"]}\n"
           "}\n";
}

const QByteArray kGoodNodes =
    "    {\"name\": \"x\", \"op\": \"Input\", \"attrs\": {\"shape\": [4]}},\n"
    "    {\"name\": \"hidden\", \"op\": \"Dense\", \"inputs\": [\"x\"], \"attrs\": {\"units\": 8, \"activation\": \"relu\"}},\n"
    "    {\"name\": \"logits\", \"op\": \"Dense\", \"inputs\": [\"hidden\"], \"attrs\": {\"units\": 2}}";

}  // namespace

class TestKilnTrain : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

    void expectBadInput(const QByteArray& text, const QStringList& needles, const QStringList& extraArgs = {}) {
        QString path = write(m_dir, QStringLiteral("bad.kiln"), text);
        Run r = runTrain(QStringList{path, QStringLiteral("--quiet")} + extraArgs);
        QCOMPARE(r.exitCode, 2);
        for (const auto& n : needles)
            QVERIFY2(r.err.contains(n), qPrintable(QStringLiteral("missing \"%1\" in: %2").arg(n, r.err)));
    }

private slots:
    void initTestCase() {
        QVERIFY(QFileInfo::exists(binary()));
        QVERIFY(m_dir.isValid());
        // Two separable blobs, 4 features, labels 0/1.
        QByteArray csv;
        for (int i = 0; i < 200; ++i) {
            int label = i % 2;
            for (int f = 0; f < 4; ++f) {
                double v = (label ? 1.5 : -1.5) + std::sin(i * 12.9898 + f * 78.233) * 0.8;
                csv += QByteArray::number(v, 'f', 4) + ',';
            }
            csv += QByteArray::number(label) + '\n';
        }
        write(m_dir, QStringLiteral("blobs.csv"), csv);
    }

    void trainsAndWritesRun() {
        QString path = write(m_dir, QStringLiteral("good.kiln"), project(kGoodNodes));
        QString runDir = m_dir.filePath(QStringLiteral("run1"));
        Run r = runTrain({path, QStringLiteral("--json"), QStringLiteral("--run-dir"), runDir});
        QCOMPARE(r.exitCode, 0);
        QString last = r.out.trimmed().split(QLatin1Char('\n')).last();
        QJsonObject j = QJsonDocument::fromJson(last.toUtf8()).object();
        for (const char* key : {"epochs", "train_loss", "val_loss", "val_accuracy", "samples_per_s", "seconds"})
            QVERIFY2(j.contains(QLatin1String(key)), key);
        QCOMPARE(j.value(QStringLiteral("epochs")).toInt(), 3);
        QVERIFY(j.value(QStringLiteral("val_accuracy")).toDouble() > 0.9);
        QVERIFY(QFileInfo::exists(runDir + QStringLiteral("/weights.safetensors")));
        QFile run(runDir + QStringLiteral("/run.json"));
        QVERIFY(run.open(QIODevice::ReadOnly));
        QJsonObject rj = QJsonDocument::fromJson(run.readAll()).object();
        QCOMPARE(rj.value(QStringLiteral("format")).toString(), QStringLiteral("kiln-run"));
        QCOMPARE(rj.value(QStringLiteral("history")).toArray().size(), 3);

        // Same seed, same weights, byte for byte; a different seed differs.
        QString runDir2 = m_dir.filePath(QStringLiteral("run2"));
        QCOMPARE(runTrain({path, QStringLiteral("--quiet"), QStringLiteral("--run-dir"), runDir2}).exitCode, 0);
        QFile a(runDir + QStringLiteral("/weights.safetensors")), b(runDir2 + QStringLiteral("/weights.safetensors"));
        QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
        QByteArray wa = a.readAll();
        QCOMPARE(wa, b.readAll());
        QString runDir3 = m_dir.filePath(QStringLiteral("run3"));
        QCOMPARE(runTrain({path, QStringLiteral("--quiet"), QStringLiteral("--seed"), QStringLiteral("4"),
                           QStringLiteral("--run-dir"), runDir3}).exitCode, 0);
        QFile c(runDir3 + QStringLiteral("/weights.safetensors"));
        QVERIFY(c.open(QIODevice::ReadOnly));
        QVERIFY(wa != c.readAll());

        // Weights from the run load back into the same model (and training continues).
        Run again = runTrain({path, QStringLiteral("--quiet"), QStringLiteral("--epochs"), QStringLiteral("1"),
                              QStringLiteral("--weights"), runDir + QStringLiteral("/weights.safetensors"),
                              QStringLiteral("--run-dir"), m_dir.filePath(QStringLiteral("run4"))});
        QCOMPARE(again.exitCode, 0);
    }

    void readOnlyFolderRunsGoToUserData() {
        QTemporaryDir ro, data;
        QVERIFY(QFile::copy(m_dir.filePath(QStringLiteral("blobs.csv")), ro.filePath(QStringLiteral("blobs.csv"))));
        write(ro, QStringLiteral("good.kiln"), project(kGoodNodes));
        const QStringList before = QDir(ro.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot);
        QVERIFY(QFile::setPermissions(ro.path(), QFile::ReadOwner | QFile::ExeOwner | QFile::ReadGroup | QFile::ExeGroup |
                                                     QFile::ReadOther | QFile::ExeOther));
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("XDG_DATA_HOME"), data.path());
        p.setProcessEnvironment(env);
        // The current folder is the read-only one too: the default run folder must not go there.
        p.setWorkingDirectory(ro.path());
        p.start(binary(), {QStringLiteral("good.kiln"), QStringLiteral("--epochs"), QStringLiteral("1"), QStringLiteral("--json")});
        QVERIFY(p.waitForFinished(600000));
        const QString out = QString::fromLocal8Bit(p.readAllStandardOutput());
        QVERIFY2(p.exitCode() == 0, qPrintable(QString::fromLocal8Bit(p.readAllStandardError())));
        QFile::setPermissions(ro.path(), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);

        QCOMPARE(QDir(ro.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot), before);
        const QJsonObject j = QJsonDocument::fromJson(out.trimmed().split(QLatin1Char('\n')).last().toUtf8()).object();
        const QString runDir = j.value(QStringLiteral("run_dir")).toString();
        QVERIFY2(runDir.startsWith(data.path() + QStringLiteral("/kiln/projects/")), qPrintable(runDir));
        QVERIFY(QFileInfo::exists(runDir + QStringLiteral("/weights.safetensors")));
        // The run store of the project sits beside the runs.
        const QDir home = QFileInfo(runDir).dir();
        QVERIFY(QFileInfo::exists(home.filePath(QStringLiteral("../.kiln/runs.sqlite"))));
    }

    void missingDataSetSaysHowToFetchIt() {
        QTemporaryDir empty;
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("KILN_DATA"), empty.path());
        p.setProcessEnvironment(env);
        p.start(binary(), {example("fashion_mlp.kiln"), QStringLiteral("--quiet"), QStringLiteral("--run-store"),
                           QStringLiteral("none"), QStringLiteral("--run-dir"), m_dir.filePath(QStringLiteral("nodata-run"))});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 2);
        const QString err = QString::fromLocal8Bit(p.readAllStandardError());
        QVERIFY2(err.contains(empty.path() + QStringLiteral("/fashion-mnist/")), qPrintable(err));
        QVERIFY2(err.contains(QStringLiteral("kiln-fetch-data")), qPrintable(err));
        // A missing file elsewhere gets no such advice.
        Run r = runTrain({m_dir.filePath(QStringLiteral("nope.kiln"))});
        QVERIFY(!r.err.contains(QStringLiteral("kiln-fetch-data")));
    }

    // A project using a bundled composite layer trains; the summary lists the expanded nodes.
    void trainsWithCompositeLayers() {
        QByteArray nodes =
            "    {\"name\": \"x\", \"op\": \"Input\", \"attrs\": {\"shape\": [4]}},\n"
            "    {\"name\": \"hidden\", \"op\": \"DenseBNReLU\", \"inputs\": [\"x\"], \"attrs\": {\"units\": 8}},\n"
            "    {\"name\": \"logits\", \"op\": \"Dense\", \"inputs\": [\"hidden\"], \"attrs\": {\"units\": 2}}";
        QString path = write(m_dir, QStringLiteral("layers.kiln"), project(nodes));
        Run s = runTrain({path, QStringLiteral("--summary")});
        QCOMPARE(s.exitCode, 0);
        QVERIFY2(s.out.contains(QStringLiteral("hidden/dense (Dense)")), qPrintable(s.out));
        QVERIFY(s.out.contains(QStringLiteral("hidden/bn (BatchNormalization)")));
        QString runDir = m_dir.filePath(QStringLiteral("layers_run"));
        Run r = runTrain({path, QStringLiteral("--json"), QStringLiteral("--run-dir"), runDir});
        QCOMPARE(r.exitCode, 0);
        QJsonObject j = QJsonDocument::fromJson(r.out.trimmed().split(QLatin1Char('\n')).last().toUtf8()).object();
        QVERIFY(j.value(QStringLiteral("val_accuracy")).toDouble() > 0.9);
        QFile w(runDir + QStringLiteral("/weights.safetensors"));
        QVERIFY(w.open(QIODevice::ReadOnly));
        QVERIFY(w.readAll().contains("hidden/dense/kernel"));

        // A bad instance attribute names the file, the line, the node and the attribute.
        nodes.replace("\"units\": 8", "\"unit\": 8");
        expectBadInput(project(nodes), {QStringLiteral("bad.kiln:6:"), QStringLiteral("\"hidden\""), QStringLiteral("\"unit\""),
                                        QStringLiteral("DenseBNReLU")});
    }

    void summary() {
        Run r = runTrain({example("fashion_mlp.kiln"), QStringLiteral("--summary")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains(QStringLiteral("Total params: 235,146")));
        QVERIFY(r.out.contains(QStringLiteral("fc1 (Dense)")));
        Run j = runTrain({example("residual.kiln"), QStringLiteral("--summary"), QStringLiteral("--json")});
        QCOMPARE(j.exitCode, 0);
        QJsonObject o = QJsonDocument::fromJson(j.out.toUtf8()).object();
        QVERIFY(o.value(QStringLiteral("frozen_params")).toInt() > 0);  // BatchNormalization moving statistics
        QVERIFY(o.value(QStringLiteral("macs")).toDouble() > 0);
    }

    void syntaxError() {
        expectBadInput("{\n  \"format\": \"kiln-project\",\n  \"version\": 2,\n  \"graph\": {\"nodes\": [\n   {\"name\": \"x\",, }\n]}}\n",
                       {QStringLiteral("bad.kiln:5:")});
    }

    void unknownOp() {
        QByteArray nodes = kGoodNodes;
        nodes.replace("\"op\": \"Dense\", \"inputs\": [\"x\"]", "\"op\": \"Dnse\", \"inputs\": [\"x\"]");
        expectBadInput(project(nodes), {QStringLiteral("bad.kiln:6:"), QStringLiteral("\"hidden\""), QStringLiteral("Dnse")});
    }

    void danglingInput() {
        QByteArray nodes = kGoodNodes;
        nodes.replace("\"inputs\": [\"hidden\"]", "\"inputs\": [\"hiddn\"]");
        expectBadInput(project(nodes), {QStringLiteral("bad.kiln:7:"), QStringLiteral("\"logits\""), QStringLiteral("hiddn")});
    }

    void cycle() {
        QByteArray nodes = kGoodNodes;
        nodes.replace("\"inputs\": [\"x\"]", "\"inputs\": [\"logits\"]");
        nodes.replace("{\"name\": \"x\", \"op\": \"Input\", \"attrs\": {\"shape\": [4]}},\n",
                      "{\"name\": \"x\", \"op\": \"Input\", \"attrs\": {\"shape\": [4]}},\n");
        expectBadInput(project(nodes), {QStringLiteral("cycle")});
    }

    void shapeMismatch() {
        QByteArray nodes =
            "    {\"name\": \"x\", \"op\": \"Input\", \"attrs\": {\"shape\": [2, 2, 1]}},\n"
            "    {\"name\": \"fc1\", \"op\": \"Dense\", \"inputs\": [\"x\"], \"attrs\": {\"units\": 2}}";
        expectBadInput(project(nodes), {QStringLiteral("bad.kiln:6:"), QStringLiteral("Dense \"fc1\" expects a rank-2 or rank-3 input but got [N,2,2,1]"),
                                        QStringLiteral("add a Flatten before it")});
    }

    void badAttribute() {
        QByteArray nodes = kGoodNodes;
        nodes.replace("\"units\": 8", "\"units\": 0");
        expectBadInput(project(nodes), {QStringLiteral("\"units\""), QStringLiteral("\"hidden\""), QStringLiteral("at least 1")});
    }

    void badTrainingSetting() {
        expectBadInput(project(kGoodNodes, "\"lerning_rate\": 0.1, "), {QStringLiteral("training.lerning_rate")});
    }

    void weightsMismatch() {
        // Weights of the MLP example's shape cannot load into this model.
        QString good = write(m_dir, QStringLiteral("w.kiln"), project(kGoodNodes));
        QString runDir = m_dir.filePath(QStringLiteral("wrun"));
        QCOMPARE(runTrain({good, QStringLiteral("--quiet"), QStringLiteral("--epochs"), QStringLiteral("0"),
                           QStringLiteral("--run-dir"), runDir}).exitCode, 0);
        QByteArray nodes = kGoodNodes;
        nodes.replace("\"units\": 8", "\"units\": 9");
        expectBadInput(project(nodes), {QStringLiteral("hidden/kernel"), QStringLiteral("[4,8]"), QStringLiteral("[4,9]")},
                       {QStringLiteral("--weights"), runDir + QStringLiteral("/weights.safetensors")});
        write(m_dir, QStringLiteral("garbage.safetensors"), "not a weights file at all");
        expectBadInput(project(kGoodNodes), {QStringLiteral("garbage.safetensors")},
                       {QStringLiteral("--weights"), m_dir.filePath(QStringLiteral("garbage.safetensors"))});
    }

    void weightsPartialReportsWhatLoaded() {
        // Weights of the 8-unit model into a 9-unit one: only logits/bias fits.
        QString good = write(m_dir, QStringLiteral("p8.kiln"), project(kGoodNodes));
        QString runDir = m_dir.filePath(QStringLiteral("prun"));
        QCOMPARE(runTrain({good, QStringLiteral("--quiet"), QStringLiteral("--epochs"), QStringLiteral("1"),
                           QStringLiteral("--run-dir"), runDir}).exitCode, 0);
        QByteArray nodes = kGoodNodes;
        nodes.replace("\"units\": 8", "\"units\": 9");
        QString wider = write(m_dir, QStringLiteral("p9.kiln"), project(nodes));
        const QString weights = runDir + QStringLiteral("/weights.safetensors");
        // Without --weights-partial: refused, every tensor that does not fit listed.
        Run refused = runTrain({wider, QStringLiteral("--quiet"), QStringLiteral("--weights"), weights,
                                QStringLiteral("--run-dir"), m_dir.filePath(QStringLiteral("prun2"))});
        QCOMPARE(refused.exitCode, 2);
        for (const char* t : {"hidden/kernel", "hidden/bias", "logits/kernel", "--weights-partial"})
            QVERIFY2(refused.err.contains(QLatin1String(t)), qPrintable(refused.err));
        QVERIFY(!refused.err.contains(QStringLiteral("logits/bias")));
        // With it: trains, and the report says what loaded.
        Run r = runTrain({wider, QStringLiteral("--json"), QStringLiteral("--epochs"), QStringLiteral("1"),
                          QStringLiteral("--weights"), weights, QStringLiteral("--weights-partial"),
                          QStringLiteral("--run-dir"), m_dir.filePath(QStringLiteral("prun3"))});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains(QStringLiteral("1 tensor(s) loaded, 0 initialised (not in the file), 3 with another shape, 0 unused")),
                 qPrintable(r.out));
        QVERIFY(r.out.contains(QStringLiteral("shape mismatch: hidden/kernel is [4,8] in the file, [4,9] in the model")));
        const QJsonObject j = QJsonDocument::fromJson(r.out.trimmed().split(QLatin1Char('\n')).last().toUtf8()).object();
        const QJsonObject report = j.value(QStringLiteral("weights_report")).toObject();
        QCOMPARE(report.value(QStringLiteral("loaded")).toArray().size(), 1);
        QCOMPARE(report.value(QStringLiteral("loaded")).toArray().first().toString(), QStringLiteral("logits/bias"));
        QCOMPARE(report.value(QStringLiteral("mismatched")).toArray().size(), 3);
        QCOMPARE(report.value(QStringLiteral("mismatched")).toArray().first().toObject().value(QStringLiteral("model_shape")).toString(),
                 QStringLiteral("[4,9]"));
        // --weights-partial alone is a usage error.
        Run alone = runTrain({wider, QStringLiteral("--weights-partial")});
        QCOMPARE(alone.exitCode, 2);
        QVERIFY(alone.err.contains(QStringLiteral("--weights")));
    }

    void stagedFineTuning() {
        const QByteArray stages =
            "\"stages\": [{\"name\": \"head\", \"epochs\": 1, \"trainable\": \"head\"}, "
            "{\"name\": \"all\", \"epochs\": 2, \"trainable\": {\"from\": \"hidden\"}, \"lr_factor\": 0.5, "
            "\"optimizer\": \"keep\"}], \"callbacks\": [{\"type\": \"TensorBoard\", \"log_dir\": \"tb\"}], ";
        QString path = write(m_dir, QStringLiteral("stages.kiln"), project(kGoodNodes, stages));
        QString runDir = m_dir.filePath(QStringLiteral("srun"));
        Run r = runTrain({path, QStringLiteral("--run-dir"), runDir, QStringLiteral("--run-store"), QStringLiteral("none")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains(QStringLiteral("Stage 1/2 \"head\": epochs 1 to 1, 18 trainable parameters")), qPrintable(r.out));
        QVERIFY(r.out.contains(QStringLiteral("Stage 2/2 \"all\": epochs 2 to 3, 58 trainable parameters")));
        QVERIFY(r.out.contains(QStringLiteral("Epoch 3/3")));
        QFile run(runDir + QStringLiteral("/run.json"));
        QVERIFY(run.open(QIODevice::ReadOnly));
        const QJsonArray history = QJsonDocument::fromJson(run.readAll()).object().value(QStringLiteral("history")).toArray();
        QCOMPARE(history.size(), 3);
        QCOMPARE(history[0].toObject().value(QStringLiteral("stage")).toInt(), 0);
        QCOMPARE(history[1].toObject().value(QStringLiteral("stage_name")).toString(), QStringLiteral("all"));
        QCOMPARE(history[2].toObject().value(QStringLiteral("stage")).toInt(), 1);
        // TensorBoard's event file holds the epoch_stage scalar.
        QDir tb(runDir + QStringLiteral("/tb/train"));
        const QStringList files = tb.entryList(QDir::Files);
        QCOMPARE(files.size(), 1);
        QFile events(tb.filePath(files.first()));
        QVERIFY(events.open(QIODevice::ReadOnly));
        QVERIFY(events.readAll().contains("epoch_stage"));

        // A stage naming a node the model lacks: exit 2, the stage and field named.
        QByteArray bad = stages;
        bad.replace("\"from\": \"hidden\"", "\"from\": \"conv3\"");
        expectBadInput(project(kGoodNodes, bad), {QStringLiteral("training.stages[1].trainable.from"), QStringLiteral("conv3")});
        QByteArray zero = stages;
        zero.replace("\"epochs\": 1,", "\"epochs\": 0,");
        expectBadInput(project(kGoodNodes, zero), {QStringLiteral("training.stages[0].epochs")});
    }

    void missingFilesAndArguments() {
        Run r = runTrain({m_dir.filePath(QStringLiteral("nope.kiln"))});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains(QStringLiteral("nope.kiln")));
        QString path = write(m_dir, QStringLiteral("nodata.kiln"), project(kGoodNodes).replace("blobs.csv", "missing.csv"));
        r = runTrain({path});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("missing.csv")), qPrintable(r.err));
        r = runTrain({example("fashion_mlp.kiln"), QStringLiteral("--batch-size"), QStringLiteral("zero")});
        QCOMPARE(r.exitCode, 2);
        r = runTrain({example("fashion_mlp.kiln"), QStringLiteral("--device"), QStringLiteral("tpu:0")});
        QCOMPARE(r.exitCode, 2);
    }

    void streamsAnImageFolder() {
        // 8x8 RGB bitmaps: "dark" and "light" classes in train/ and val/ folders, one broken file.
        auto bmp = [](int level, int seed) { return kiln::test::greyBmp8(level, seed, 30); };
        QDir root(m_dir.filePath(QStringLiteral("pics")));
        for (const char* split : {"train", "val"}) {
            for (int c = 0; c < 2; ++c) {
                const QString dir = QStringLiteral("%1/%2").arg(QLatin1String(split), QLatin1String(c ? "light" : "dark"));
                QVERIFY(root.mkpath(dir));
                for (int i = 0; i < (QLatin1String(split) == QLatin1String("train") ? 16 : 4); ++i)
                    write(m_dir, QStringLiteral("pics/%1/%2.bmp").arg(dir).arg(i), bmp(c ? 200 : 50, i));
            }
        }
        write(m_dir, QStringLiteral("pics/train/dark/broken.bmp"), "not a bitmap");
        const QByteArray nodes =
            "    {\"name\": \"image\", \"op\": \"Input\", \"attrs\": {\"shape\": [8, 8, 3]}},\n"
            "    {\"name\": \"flat\", \"op\": \"Flatten\", \"inputs\": [\"image\"]},\n"
            "    {\"name\": \"logits\", \"op\": \"Dense\", \"inputs\": [\"flat\"], \"attrs\": {\"units\": 2}}";
        QByteArray text = project(nodes, "\"optimizer\": {\"type\": \"adam\", \"learning_rate\": 0.01}, ");
        text.replace("{\"format\": \"csv\", \"path\": \"blobs.csv\", \"split\": {\"validation\": 0.25}}",
                     "{\"format\": \"folder\", \"path\": \"pics\", \"workers\": 2, "
                     "\"transforms\": [{\"type\": \"normalize\", \"preset\": \"symmetric\"}]}");
        const QString path = write(m_dir, QStringLiteral("folder.kiln"), text);
        Run r = runTrain({path, QStringLiteral("--json"), QStringLiteral("--run-dir"), m_dir.filePath(QStringLiteral("folder-run"))});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject j = QJsonDocument::fromJson(r.out.trimmed().split(QLatin1Char('\n')).last().toUtf8()).object();
        QCOMPARE(j.value(QStringLiteral("epochs")).toInt(), 3);
        QVERIFY2(j.value(QStringLiteral("val_accuracy")).toDouble() > 0.9, qPrintable(r.out));
        const QJsonArray bad = j.value(QStringLiteral("bad_samples")).toArray();
        QCOMPARE(bad.size(), 1);
        QVERIFY(bad[0].toObject().value(QStringLiteral("path")).toString().endsWith(QStringLiteral("broken.bmp")));
        // Mixed precision needs a GPU: named, exit 2.
        Run cpuHalf = runTrain({path, QStringLiteral("--quiet"), QStringLiteral("--precision"), QStringLiteral("mixed_float16")});
        QCOMPARE(cpuHalf.exitCode, 2);
        QVERIFY2(cpuHalf.err.contains(QStringLiteral("training.precision")), qPrintable(cpuHalf.err));
    }

    void badLabelInData() {
        QByteArray csv = "1,2,3,4,0\n1,2,3,4,7\n1,2,3,4,1\n1,2,3,4,0\n";
        write(m_dir, QStringLiteral("labels.csv"), csv);
        QString path = write(m_dir, QStringLiteral("labels.kiln"), project(kGoodNodes).replace("blobs.csv", "labels.csv")
                                                                       .replace("\"split\": {\"validation\": 0.25}", "\"stratify\": false"));
        Run r = runTrain({path, QStringLiteral("--quiet")});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("label 7")), qPrintable(r.err));
    }
};

QTEST_APPLESS_MAIN(TestKilnTrain)
#include "tst_kiln_train.moc"
