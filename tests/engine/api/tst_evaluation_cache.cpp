// SPDX-License-Identifier: Apache-2.0
// Stored predictions of a run: a small table project is trained, evaluated and stored; the stored
// predictions read back equal to the computed ones, and are refused (stale) once the weights file,
// the data file (even rewritten with its size and time kept), any file of a data folder, the split
// or the model changes, or when the file is damaged or of another version.
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/api/evaluation.h"
#include "engine/api/evaluation_cache.h"
#include "engine/api/training_job.h"
#include "engine/io/project.h"

using namespace kiln::engine;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

void writeBlobs(const fs::path& path, int rows) {
    std::ofstream f(path);
    std::mt19937 gen(3);
    std::normal_distribution<double> noise(0.0, 1.0);
    for (int i = 0; i < rows; ++i) {
        const int label = i % 3;
        for (int k = 0; k < 4; ++k) f << (label - 1) * 0.8 + noise(gen) << ',';
        f << label << '\n';
    }
}

io::Project blobProject(int units = 3) {
    const json j = {
        {"format", "kiln-project"},
        {"version", 2},
        {"name", "blobs"},
        {"graph",
         {{"nodes", json::array({{{"name", "x"}, {"op", "Input"}, {"attrs", {{"shape", {4}}}}},
                                 {{"name", "logits"}, {"op", "Dense"}, {"inputs", {"x"}}, {"attrs", {{"units", units}}}}})}}},
        {"data", {{"format", "csv"}, {"path", "blobs.csv"}, {"split", {{"validation", 0.25}, {"test", 0.25}}}}},
        {"training",
         {{"epochs", 2},
          {"batch_size", 16},
          {"seed", 4},
          {"optimizer", {{"type", "adam"}, {"learning_rate", 0.05}}},
          {"loss", {{"type", "SparseCategoricalCrossentropy"}, {"from_logits", true}}},
          {"metrics", {"accuracy"}}}}};
    auto p = io::parseProject(j.dump(), "blobs.kiln");
    if (!p.ok()) qFatal("parseProject: %s", p.error().toString().c_str());
    return std::move(p).value();
}

std::string readAll(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeAll(const fs::path& p, const std::string& bytes) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << bytes;
}

}  // namespace

class TestEvaluationCache : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_tmp;
    fs::path m_dir;
    std::string m_projectPath;
    io::Project m_project;
    std::string m_runDir;

    api::EvaluationOptions options(const std::string& split = "test") const {
        api::EvaluationOptions o;
        o.weights = m_runDir;
        o.split = split;
        o.threads = 1;
        return o;
    }

private slots:
    void initTestCase() {
        QVERIFY(m_tmp.isValid());
        m_dir = m_tmp.path().toStdString();
        writeBlobs(m_dir / "blobs.csv", 120);
        m_project = blobProject();
        m_projectPath = (m_dir / "blobs.kiln").string();
        QVERIFY(io::saveProject(m_project, m_projectPath).ok());
        api::TrainingOptions t;
        t.runDir = (m_dir / "runs" / "first").string();
        t.runName = "first";
        t.recordRun = false;
        auto job = api::TrainingJob::prepare(m_project, m_projectPath, t);
        QVERIFY2(job.ok(), job.ok() ? "" : job.error().toString().c_str());
        auto outcome = (*job)->run({});
        QVERIFY2(outcome.ok(), outcome.ok() ? "" : outcome.error().toString().c_str());
        m_runDir = outcome->runDir;
    }

    void storesAndReadsBack() {
        auto key = api::evaluationCacheKey(m_project, m_projectPath, options());
        QVERIFY2(key.ok(), key.ok() ? "" : key.error().toString().c_str());
        QCOMPARE(key->split, std::string("test"));
        QVERIFY(fs::path(key->weightsPath).is_absolute());
        QCOMPARE(fs::path(key->weightsPath).filename().string(), std::string("weights.safetensors"));
        // Beside the weights, in the run folder.
        const fs::path file = api::evaluationCachePath(*key);
        QCOMPARE(file.parent_path(), fs::path(m_runDir) / "evaluations");
        fs::remove(file);
        QVERIFY(!api::loadCachedPredictions(*key).has_value());

        auto p = api::predict(m_project, m_projectPath, options());
        QVERIFY2(p.ok(), p.ok() ? "" : p.error().toString().c_str());
        QVERIFY(p->samples == 30);
        QVERIFY(api::storeCachedPredictions(*key, *p).ok());
        QVERIFY(fs::is_regular_file(file));

        // A key computed again is equal, and the predictions come back as they were.
        auto again = api::evaluationCacheKey(m_project, m_projectPath, options());
        QVERIFY(again.ok());
        QVERIFY(*again == *key);
        auto cached = api::loadCachedPredictions(*again);
        QVERIFY(cached.has_value());
        const api::Predictions& c = cached->predictions;
        QCOMPARE(c.samples, p->samples);
        QCOMPARE(c.width, p->width);
        QCOMPARE(c.targetWidth, p->targetWidth);
        QVERIFY(c.outputs == p->outputs);
        QVERIFY(c.targets == p->targets);
        QVERIFY(c.sources == p->sources);
        QVERIFY(c.classNames == p->classNames);
        QCOMPARE(c.lossType, p->lossType);
        QCOMPARE(c.fromLogits, p->fromLogits);
        QCOMPARE(c.loss, p->loss);
        QVERIFY(c.metrics == p->metrics);
        QCOMPARE(c.split, p->split);
        QCOMPARE(c.weightsPath, p->weightsPath);
        QVERIFY(cached->createdMs > 0);
        QCOMPARE(cached->created.size(), size_t(20));  // 2026-12-02T07:30:00Z
        // The same report as from the computed predictions.
        auto e1 = api::evaluate(*p);
        auto e2 = api::evaluate(c);
        QVERIFY(e1.ok() && e2.ok());
        QCOMPARE(e2->classification->accuracy, e1->classification->accuracy);
        QCOMPARE(e2->classification->logLoss, e1->classification->logLoss);
    }

    void otherSplitsAreStoredApart() {
        auto test = api::evaluationCacheKey(m_project, m_projectPath, options("test"));
        auto val = api::evaluationCacheKey(m_project, m_projectPath, options("val"));
        auto data = api::evaluationCacheKey(m_project, m_projectPath, options((m_dir / "blobs.csv").string()));
        QVERIFY(test.ok() && val.ok() && data.ok());
        QCOMPARE(val->split, std::string("validation"));
        QVERIFY(api::evaluationCachePath(*test) != api::evaluationCachePath(*val));
        QVERIFY(api::evaluationCachePath(*data) != api::evaluationCachePath(*test));
        QVERIFY(QString::fromStdString(api::evaluationCachePath(*data)).contains(QStringLiteral(".data-")));
        QVERIFY(!api::loadCachedPredictions(*val).has_value());
    }

    void changedWeightsAreStale() {
        auto key = api::evaluationCacheKey(m_project, m_projectPath, options());
        QVERIFY(key.ok());
        auto p = api::predict(m_project, m_projectPath, options());
        QVERIFY(p.ok());
        QVERIFY(api::storeCachedPredictions(*key, *p).ok());
        QVERIFY(api::loadCachedPredictions(*key).has_value());
        // One weight changed in place: another hash (and size/time may stay), so not read.
        const fs::path weights = key->weightsPath;
        const std::string original = readAll(weights);
        std::string changed = original;
        changed[changed.size() - 2] = char(changed[changed.size() - 2] ^ 0x40);
        writeAll(weights, changed);
        auto newKey = api::evaluationCacheKey(m_project, m_projectPath, options());
        QVERIFY(newKey.ok());
        QVERIFY(newKey->weightsHash != key->weightsHash);
        QVERIFY(!api::loadCachedPredictions(*newKey).has_value());
        // The same bytes written again later: the modification time differs, still stale.
        writeAll(weights, original);
        fs::last_write_time(weights, fs::last_write_time(weights) + std::chrono::seconds(5));
        auto restored = api::evaluationCacheKey(m_project, m_projectPath, options());
        QVERIFY(restored.ok());
        QCOMPARE(restored->weightsHash, key->weightsHash);
        QVERIFY(!api::loadCachedPredictions(*restored).has_value());
    }

    void changedDataOrModelIsStale() {
        auto key = api::evaluationCacheKey(m_project, m_projectPath, options());
        QVERIFY(key.ok());
        auto p = api::predict(m_project, m_projectPath, options());
        QVERIFY(p.ok());
        QVERIFY(api::storeCachedPredictions(*key, *p).ok());
        // The data file rewritten (more rows): another data fingerprint.
        const fs::path csv = m_dir / "blobs.csv";
        const std::string original = readAll(csv);
        writeBlobs(csv, 132);
        auto dataKey = api::evaluationCacheKey(m_project, m_projectPath, options());
        QVERIFY(dataKey.ok());
        QVERIFY(dataKey->dataFingerprint != key->dataFingerprint);
        QVERIFY(!api::loadCachedPredictions(*dataKey).has_value());
        writeAll(csv, original);
        // The project's data section changed (another split).
        io::Project other = m_project;
        other.data["split"]["test"] = 0.3;
        auto sectionKey = api::evaluationCacheKey(other, m_projectPath, options());
        QVERIFY(sectionKey.ok());
        QVERIFY(sectionKey->dataFingerprint != key->dataFingerprint);
        // The loss changed: another model fingerprint.
        io::Project loss = m_project;
        loss.training["loss"]["from_logits"] = false;
        auto lossKey = api::evaluationCacheKey(loss, m_projectPath, options());
        QVERIFY(lossKey.ok());
        QVERIFY(lossKey->modelFingerprint != key->modelFingerprint);
        QVERIFY(!api::loadCachedPredictions(*lossKey).has_value());
        // The learning rate does not change what evaluation computes.
        io::Project lr = m_project;
        lr.training["optimizer"]["learning_rate"] = 0.5;
        auto lrKey = api::evaluationCacheKey(lr, m_projectPath, options());
        QVERIFY(lrKey.ok());
        QCOMPARE(lrKey->modelFingerprint, key->modelFingerprint);
    }

    void rewriteKeepingSizeAndTimeIsStale() {
        // The data file rewritten in place with one digit changed (same size) and its old
        // modification time put back: only the hash of the small data set can tell.
        auto key = api::evaluationCacheKey(m_project, m_projectPath, options());
        QVERIFY(key.ok());
        const fs::path csv = m_dir / "blobs.csv";
        const std::string original = readAll(csv);
        const auto time = fs::last_write_time(csv);
        std::string changed = original;
        const size_t digit = changed.find_first_of("123456789");
        QVERIFY(digit != std::string::npos);
        changed[digit] = changed[digit] == '9' ? '8' : char(changed[digit] + 1);
        writeAll(csv, changed);
        fs::last_write_time(csv, time);
        auto changedKey = api::evaluationCacheKey(m_project, m_projectPath, options());
        QVERIFY(changedKey.ok());
        QVERIFY(changedKey->dataFingerprint != key->dataFingerprint);
        writeAll(csv, original);
        fs::last_write_time(csv, time);
        auto restored = api::evaluationCacheKey(m_project, m_projectPath, options());
        QVERIFY(restored.ok());
        QCOMPARE(restored->dataFingerprint, key->dataFingerprint);
    }

    void everyFileOfAFolderIsStamped() {
        // Other data given as a folder: a file three levels down rewritten with another size
        // changes the key, and so does one renamed; a hidden file does not.
        const fs::path folder = m_dir / "deep";
        fs::create_directories(folder / "a" / "b" / "c");
        writeAll(folder / "a" / "b" / "c" / "x.png", "first");
        auto key = api::evaluationCacheKey(m_project, m_projectPath, options(folder.string()));
        QVERIFY(key.ok());
        writeAll(folder / "a" / "b" / "c" / "x.png", "second!");
        auto resized = api::evaluationCacheKey(m_project, m_projectPath, options(folder.string()));
        QVERIFY(resized.ok());
        QVERIFY(resized->dataFingerprint != key->dataFingerprint);
        fs::rename(folder / "a" / "b" / "c" / "x.png", folder / "a" / "b" / "c" / "y.png");
        auto renamed = api::evaluationCacheKey(m_project, m_projectPath, options(folder.string()));
        QVERIFY(renamed.ok());
        QVERIFY(renamed->dataFingerprint != resized->dataFingerprint);
        writeAll(folder / "a" / ".hidden", "ignored");
        auto hidden = api::evaluationCacheKey(m_project, m_projectPath, options(folder.string()));
        QVERIFY(hidden.ok());
        QCOMPARE(hidden->dataFingerprint, renamed->dataFingerprint);
    }

    void damagedOrOtherVersionIsNotRead() {
        auto key = api::evaluationCacheKey(m_project, m_projectPath, options());
        QVERIFY(key.ok());
        auto p = api::predict(m_project, m_projectPath, options());
        QVERIFY(p.ok());
        QVERIFY(api::storeCachedPredictions(*key, *p).ok());
        const fs::path file = api::evaluationCachePath(*key);
        const std::string good = readAll(file);
        writeAll(file, good.substr(0, good.size() - 3));  // cut short
        QVERIFY(!api::loadCachedPredictions(*key).has_value());
        std::string version = good;
        version[8] = char(api::kEvaluationCacheVersion + 1);  // the u32 after the magic
        writeAll(file, version);
        QVERIFY(!api::loadCachedPredictions(*key).has_value());
        writeAll(file, good + "x");  // trailing bytes
        QVERIFY(!api::loadCachedPredictions(*key).has_value());
        writeAll(file, good);
        QVERIFY(api::loadCachedPredictions(*key).has_value());
    }

    void missingWeightsAreNamed() {
        api::EvaluationOptions o = options();
        o.weights = (m_dir / "nowhere.safetensors").string();
        auto key = api::evaluationCacheKey(m_project, m_projectPath, o);
        QVERIFY(!key.ok());
        QCOMPARE(key.error().code, ErrorCode::FileNotFound);
        QVERIFY(key.error().file.find("nowhere.safetensors") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestEvaluationCache)
#include "tst_evaluation_cache.moc"
