// SPDX-License-Identifier: Apache-2.0
// Weights files: an exact load refuses a file that does not fit and lists every tensor that does
// not; a load by name takes the tensors whose name and shape match and reports the rest.
#include <QtTest>

#include <QTemporaryDir>

#include <string>

#include "engine/io/project.h"
#include "engine/io/safetensors.h"
#include "engine/ops/model.h"
#include "engine/train/weights.h"

using namespace kiln::engine;
using namespace kiln::engine::train;

namespace {

ops::ModelInfo buildModel(int hidden, int classes) {
    const std::string text = R"({"format": "kiln-project", "version": 2, "graph": {"nodes": [
      {"name": "x", "op": "Input", "attrs": {"shape": [3]}},
      {"name": "body", "op": "Dense", "inputs": ["x"], "attrs": {"units": )" + std::to_string(hidden) + R"(}},
      {"name": "head", "op": "Dense", "inputs": ["body"], "attrs": {"units": )" + std::to_string(classes) + R"(}}]}})";
    auto p = io::parseProject(text, "test.kiln");
    if (!p.ok()) qFatal("parseProject: %s", p.error().toString().c_str());
    auto m = ops::analyzeModel(p->graph);
    if (!m.ok()) qFatal("analyzeModel: %s", m.error().toString().c_str());
    return std::move(m).value();
}

QByteArray bytes(const exec::ParamStore& ps, const std::string& name) {
    for (const auto& p : ps.params())
        if (p.name == name) return {static_cast<const char*>(p.value.raw()), static_cast<qsizetype>(p.value.bytes())};
    return {};
}

}  // namespace

class TestWeights : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::string path(const char* name) { return m_dir.filePath(QString::fromLatin1(name)).toStdString(); }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void exactRoundTrip() {
        auto m = buildModel(4, 2);
        auto a = exec::ParamStore::create(m, 1), b = exec::ParamStore::create(m, 2);
        QVERIFY(saveWeights(a, path("a.safetensors")).ok());
        QVERIFY(bytes(a, "body/kernel") != bytes(b, "body/kernel"));
        auto r = loadWeightsByName(b, path("a.safetensors"), false);
        QVERIFY(r.ok());
        QVERIFY(r->exact());
        QCOMPARE(r->loaded.size(), size_t{4});
        QCOMPARE(r->loadedValues, int64_t{3 * 4 + 4 + 4 * 2 + 2});
        QCOMPARE(bytes(b, "body/kernel"), bytes(a, "body/kernel"));
        QCOMPARE(bytes(b, "head/bias"), bytes(a, "head/bias"));
    }

    void partialLoadReportsEveryTensor() {
        // The file: body 3x4 and head 4x2, plus a tensor of another model.
        auto src = buildModel(4, 2);
        auto a = exec::ParamStore::create(src, 1);
        std::vector<io::NamedTensor> tensors;
        for (const auto& p : a.params())
            if (p.name != "body/bias") tensors.push_back({p.name, p.value});
        tensors.push_back({"extra/kernel", Tensor(Shape{2, 2})});
        QVERIFY(io::saveSafetensors(path("mixed.safetensors"), tensors, {}).ok());

        // The model: the same body, a head for 5 classes.
        auto m = buildModel(4, 5);
        auto b = exec::ParamStore::create(m, 2);
        const QByteArray headBefore = bytes(b, "head/kernel"), biasBefore = bytes(b, "body/bias");

        // Exact: refused, the error lists all of them, nothing is loaded.
        auto exact = loadWeightsByName(b, path("mixed.safetensors"), false);
        QVERIFY(!exact.ok());
        QVERIFY(exact.error().code == ErrorCode::WeightsMismatch);
        QCOMPARE(exact.error().file, path("mixed.safetensors"));
        QCOMPARE(exact.error().param("mismatches"), std::string("4"));
        for (const char* needle : {"head/kernel", "[4,2]", "[4,5]", "head/bias", "body/bias", "extra/kernel"})
            QVERIFY2(exact.error().message.find(needle) != std::string::npos, needle);
        QVERIFY(bytes(b, "body/kernel") != bytes(a, "body/kernel"));

        // By name: body/kernel loads; the rest is reported and keeps its initial values.
        auto r = loadWeightsByName(b, path("mixed.safetensors"), true);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QVERIFY(!r->exact());
        QCOMPARE(r->loaded, (std::vector<std::string>{"body/kernel"}));
        QCOMPARE(r->initialised, (std::vector<std::string>{"body/bias"}));
        QCOMPARE(r->mismatched.size(), size_t{2});
        QCOMPARE(r->mismatched[0].name, std::string("head/kernel"));
        QCOMPARE(r->mismatched[0].fileShape, std::string("[4,2]"));
        QCOMPARE(r->mismatched[0].modelShape, std::string("[4,5]"));
        QCOMPARE(r->mismatched[1].name, std::string("head/bias"));
        QCOMPARE(r->unused, (std::vector<std::string>{"extra/kernel"}));
        QCOMPARE(r->loadedValues, int64_t{12});
        QCOMPARE(bytes(b, "body/kernel"), bytes(a, "body/kernel"));
        QCOMPARE(bytes(b, "head/kernel"), headBefore);
        QCOMPARE(bytes(b, "body/bias"), biasBefore);

        const auto j = r->toJson();
        QCOMPARE(j.at("loaded").size(), size_t{1});
        QCOMPARE(j.at("mismatched")[0].at("model_shape").get<std::string>(), std::string("[4,5]"));
        QCOMPARE(j.at("unused")[0].get<std::string>(), std::string("extra/kernel"));

        // compareWeights reports the same without loading.
        auto fresh = exec::ParamStore::create(m, 3);
        const QByteArray freshBody = bytes(fresh, "body/kernel");
        auto cmp = compareWeights(fresh, path("mixed.safetensors"));
        QVERIFY(cmp.ok());
        QCOMPARE(cmp->loaded, r->loaded);
        QCOMPARE(bytes(fresh, "body/kernel"), freshBody);
    }

    void unreadableFileNamesIt() {
        auto m = buildModel(4, 2);
        auto b = exec::ParamStore::create(m, 1);
        auto r = loadWeightsByName(b, path("missing.safetensors"), true);
        QVERIFY(!r.ok());
        QVERIFY(r.error().toString().find("missing.safetensors") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestWeights)
#include "tst_weights.moc"
