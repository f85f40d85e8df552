// SPDX-License-Identifier: Apache-2.0
// kiln-test-libs: kiln_api
// Transfer learning through the api's own types (engine/api/pretrained.h): every catalogue entry
// arrives field by field as engine/io holds it, availability and start weights are found in a real
// data folder (a stand-in backbone's cache), a project made through the api carries the engine's
// result, errors pass through with their parameters, and a head replaced through the api has the
// engine's nodes.
#include <QtTest>

#include <QTemporaryDir>

#include <filesystem>

#include "engine/api/pretrained.h"
#include "engine/io/head_replacement.h"
#include "engine/io/model_zoo.h"
#include "tests/engine/io/backbone_fixture.h"

using namespace kiln::engine;
namespace fs = std::filesystem;

class TestPretrained : public QObject {
    Q_OBJECT

private slots:
    void catalogueIsCopiedWhole() {
        const auto& ours = api::backboneCatalogue();
        const auto& theirs = io::backboneCatalogue();
        QCOMPARE(ours.size(), theirs.size());
        QVERIFY(ours.size() >= 3);
        for (size_t i = 0; i < ours.size(); ++i) {
            const api::Backbone& a = ours[i];
            const io::Backbone& b = theirs[i];
            QCOMPARE(a.id, b.id);
            QCOMPARE(a.name, b.name);
            QCOMPARE(a.dataset, b.dataset);
            QCOMPARE(a.licence, b.licence);
            QCOMPARE(a.weightsOrigin, b.weightsOrigin);
            QCOMPARE(a.source == api::BackboneSource::UserFile, b.source == io::BackboneSource::UserFile);
            QCOMPARE(a.cacheDir, b.cacheDir);
            QCOMPARE(a.projectFile, b.projectFile);
            QCOMPARE(a.weightsFile, b.weightsFile);
            QCOMPARE(a.fetchCommand, b.fetchCommand);
            QCOMPARE(a.cutAfter, b.cutAfter);
            QCOMPARE(a.note, b.note);
            QCOMPARE(a.preprocessing.height, b.preprocessing.height);
            QCOMPARE(a.preprocessing.width, b.preprocessing.width);
            QCOMPARE(a.preprocessing.resize, b.preprocessing.resize);
            QCOMPARE(a.preprocessing.channelOrder, b.preprocessing.channelOrder);
            QCOMPARE(a.preprocessing.preset, b.preprocessing.preset);
            QCOMPARE(a.preprocessing.scale, b.preprocessing.scale);
            QCOMPARE(a.preprocessing.mean, b.preprocessing.mean);
            QCOMPARE(a.preprocessing.stddev, b.preprocessing.stddev);
            QCOMPARE(a.preprocessing.formula, b.preprocessing.formula);
            QCOMPARE(api::findBackbone(a.id), &a);
        }
        // Both kinds of entry are there, so both enumeration values were mapped.
        QVERIFY(api::findBackbone("efficientnet-lite0")->source == api::BackboneSource::Cache);
        QVERIFY(api::findBackbone("mobilenet-v2")->source == api::BackboneSource::UserFile);
        QVERIFY(!api::findBackbone("no-such-backbone"));
        QCOMPARE(api::defaultDataDir(), io::defaultDataDir());
    }

    void availabilityAndProjectFromTheCache() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const std::string dataDir = (fs::path(tmp.path().toStdString()) / "data").string();
        const api::Backbone& b = *api::findBackbone("efficientnet-lite0");

        const api::BackboneAvailability none = api::backboneAvailability(b, dataDir);
        QVERIFY(!none.available);
        QVERIFY(!none.missing.empty());
        QCOMPARE(none.parameters, int64_t{-1});

        kiln::test::writeBackboneCache(*io::findBackbone(b.id), dataDir);
        const api::BackboneAvailability here = api::backboneAvailability(b, dataDir);
        QVERIFY(here.available);
        QVERIFY(here.missing.empty());
        QCOMPARE(here.parameters, int64_t{17368});  // 3·3·3·8 + 8 + 8·16 + 16 + 16·1000 + 1000
        QVERIFY(fs::exists(here.projectPath) && fs::exists(here.weightsPath));

        api::PretrainedProjectRequest req;
        req.backbone = b.id;
        req.dataDir = dataDir;
        req.projectPath = tmp.filePath("flowers.kiln").toStdString();
        req.classes = 5;
        auto made = api::createPretrainedProject(req);
        QVERIFY2(made.ok(), made.ok() ? "" : made.error().toString().c_str());
        QCOMPARE(made->head, (std::vector<std::string>{"head_pooling", "head_dropout", "head_predictions"}));
        QCOMPARE(made->removed, (std::vector<std::string>{"global_average_pooling2d", "dense"}));
        QCOMPARE(made->projectPath, req.projectPath);
        QVERIFY(fs::exists(made->weightsPath));
        QVERIFY(made->weightTensors > 0);
        QCOMPARE(made->project.graph.outputs, std::vector<std::string>{"head_predictions"});

        // The start weights name the project's file, and the catalogue entry is the api's own.
        const api::PretrainedWeights w = api::pretrainedWeights(made->project, made->projectPath);
        QCOMPARE(fs::path(w.path), fs::path(made->weightsPath));
        QVERIFY(w.exists);
        QCOMPARE(w.backbone, &b);

        // Agreeing preprocessing gives nothing; another normalisation one mismatch, as the engine says.
        QVERIFY(api::preprocessingMismatches(made->project).empty());
        io::Project p = made->project;
        p.data["eval_transforms"].back() = {{"type", "normalize"}, {"preset", "imagenet"}};
        const auto ours = api::preprocessingMismatches(p);
        const auto theirs = io::preprocessingMismatches(p);
        QCOMPARE(ours.size(), size_t{1});
        QCOMPARE(theirs.size(), size_t{1});
        QVERIFY(ours[0].kind == api::PreprocessingMismatch::Kind::Normalization);
        QCOMPARE(ours[0].backbone, b.name);
        QCOMPARE(ours[0].formula, theirs[0].formula);
        QCOMPARE(ours[0].message, theirs[0].message);

        // A head replaced through the api: the engine's nodes, and its errors with their parameters.
        api::HeadOptions options;
        options.classes = 3;
        options.dropout = 0;
        options.prefix = "tail";
        auto r = api::replaceHead(made->project, "conv2d_32", options);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QCOMPARE(r->added, (std::vector<std::string>{"tail_pooling", "tail_predictions"}));
        QVERIFY(r->pooled);
        QVERIFY(r->graph.find("tail_predictions") >= 0);
        QVERIFY(r->graph.find("head_predictions") < 0);
        QCOMPARE(api::suggestCutNode(made->project), io::suggestCutNode(made->project));
        auto bad = api::replaceHead(made->project, "no_such_node", options);
        QVERIFY(!bad.ok());
        QCOMPARE(bad.error().toString(), io::replaceHead(made->project, "no_such_node", io::HeadOptions{3, 0, "tail"}).error().toString());
    }

    void errorsPassThrough() {
        QTemporaryDir tmp;
        api::PretrainedProjectRequest req;
        req.backbone = "mobilenet-v2";  // a template without its model file
        req.dataDir = tmp.path().toStdString();
        req.projectPath = tmp.filePath("t.kiln").toStdString();
        req.classes = 2;
        auto none = api::createPretrainedProject(req);
        QVERIFY(!none.ok());
        QCOMPARE(none.error().param("field"), std::string("model"));
        QVERIFY(!fs::exists(req.projectPath));
    }
};

QTEST_GUILESS_MAIN(TestPretrained)
#include "tst_pretrained.moc"
