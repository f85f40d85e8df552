// SPDX-License-Identifier: Apache-2.0
// The backbone catalogue: entries and their preprocessing, availability from the files in a data
// folder (parameters counted from the real graph), projects made from a cached backbone and from
// a template's model file (head, frozen nodes, stages, data transforms, weights loaded by name),
// and the preprocessing check.
#include <QtTest>

#include <QTemporaryDir>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>
#include <span>
#include <utility>

#include "engine/exec/param_store.h"
#include "engine/io/head_replacement.h"
#include "engine/io/keras_import.h"
#include "engine/io/model_zoo.h"
#include "engine/io/onnx_export.h"
#include "engine/io/project.h"
#include "engine/io/safetensors.h"
#include "engine/ops/model.h"
#include "engine/data/transforms.h"
#include "engine/train/config.h"
#include "engine/train/weights.h"
#include "tests/engine/io/backbone_fixture.h"

using namespace kiln::engine;
using namespace kiln::engine::io;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

using kiln::test::backboneProject;
exec::ParamStore writeCache(const Backbone& b, const std::string& dataDir) {
    return kiln::test::writeBackboneCache(b, dataDir);
}

const Node* nodeNamed(const Graph& g, const std::string& name) {
    return g.node(name);
}

}  // namespace

class TestModelZoo : public QObject {
    Q_OBJECT

private slots:
    void catalogueEntries() {
        const auto& list = backboneCatalogue();
        std::set<std::string> ids;
        for (const auto& b : list) {
            QVERIFY(ids.insert(b.id).second);
            QVERIFY(!b.name.empty() && !b.licence.empty() && !b.weightsOrigin.empty());
            QVERIFY(b.preprocessing.height > 0 && b.preprocessing.width > 0);
            QCOMPARE(b.preprocessing.channelOrder, std::string("RGB"));
            // Each preset is one the data pipeline knows, with the same numbers.
            auto t = data::normalizePreset(b.preprocessing.preset);
            QVERIFY(t.ok());
            QCOMPARE(b.preprocessing.scale, double(t->scale));
            QCOMPARE(b.preprocessing.mean.size(), t->mean.size());
            if (b.source == BackboneSource::Cache) QVERIFY(!b.fetchCommand.empty() && !b.projectFile.empty());
            else QVERIFY(!b.note.empty());
        }
        QVERIFY(ids.count("efficientnet-lite0") && ids.count("resnet50") && ids.count("mobilenet-v2"));
        const Backbone* e = findBackbone("efficientnet-lite0");
        QCOMPARE(e->preprocessing.preset, std::string("centered"));
        QCOMPARE(e->preprocessing.scale, 1.0);
        QCOMPARE(e->preprocessing.mean, std::vector<double>{127.0});
        QCOMPARE(e->preprocessing.stddev, std::vector<double>{128.0});
        QCOMPARE(e->preprocessing.height, int64_t{224});
        QVERIFY(!findBackbone("vgg19"));
    }

    void availabilityFollowsTheFiles() {
        QTemporaryDir tmp;
        const Backbone& b = *findBackbone("efficientnet-lite0");
        auto a = backboneAvailability(b, tmp.path().toStdString());
        QVERIFY(!a.available);
        QCOMPARE(a.missing, a.projectPath);
        QCOMPARE(a.parameters, int64_t{-1});

        writeCache(b, tmp.path().toStdString());
        a = backboneAvailability(b, tmp.path().toStdString());
        QVERIFY(a.available);
        // Counted from the graph: 3·3·3·8 + 8, 8·16 + 16, 16·1000 + 1000.
        QCOMPARE(a.parameters, int64_t{3 * 3 * 3 * 8 + 8 + 8 * 16 + 16 + 16 * 1000 + 1000});

        // Weights gone: unavailable again, naming that file.
        QVERIFY(QFile::remove(QString::fromStdString(a.weightsPath)));
        a = backboneAvailability(b, tmp.path().toStdString());
        QVERIFY(!a.available);
        QCOMPARE(a.missing, a.weightsPath);
        // A damaged project is no backbone either.
        writeCache(b, tmp.path().toStdString());
        {
            QFile f(QString::fromStdString(a.projectPath));
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
            f.write("{\"format\": \"kiln-project\", \"graph\": ");
        }
        a = backboneAvailability(b, tmp.path().toStdString());
        QVERIFY(!a.available);

        // Templates are never available by themselves.
        QVERIFY(!backboneAvailability(*findBackbone("resnet50"), tmp.path().toStdString()).available);
    }

    // A project's start weights: its own "pretrained.weights" when that file is there, else the
    // catalogue's cache (an example opened in place, a moved project), else the name it gives.
    void pretrainedWeightsAreFound() {
        QTemporaryDir tmp;
        const std::string data = tmp.filePath("data").toStdString();
        const Backbone& b = *findBackbone("efficientnet-lite0");
        writeCache(b, data);
        const std::string cached = backboneAvailability(b, data).weightsPath;
        Project p = backboneProject();
        QCOMPARE(pretrainedWeights(p, "", data).path, std::string());  // not made from a backbone
        p.extra["pretrained"] = {{"backbone", "efficientnet-lite0"}, {"weights", "mine.safetensors"}};
        const std::string project = tmp.filePath("proj/p.kiln").toStdString();
        // Named relative to the project but missing there: the cache.
        auto w = pretrainedWeights(p, project, data);
        QCOMPARE(w.path, cached);
        QVERIFY(w.exists);
        QCOMPARE(w.backbone, &b);
        // No project folder (an example opened in place): the cache too.
        QCOMPARE(pretrainedWeights(p, "", data).path, cached);
        // The project's own file wins when it is there.
        QVERIFY(QDir().mkpath(tmp.filePath("proj")));
        QVERIFY(QFile::copy(QString::fromStdString(cached), tmp.filePath("proj/mine.safetensors")));
        w = pretrainedWeights(p, project, data);
        QCOMPARE(w.path, tmp.filePath("proj/mine.safetensors").toStdString());
        QVERIFY(w.exists);
        // Neither there: the project's name for it, marked missing.
        QVERIFY(QFile::remove(tmp.filePath("proj/mine.safetensors")));
        w = pretrainedWeights(p, project, tmp.filePath("empty").toStdString());
        QCOMPARE(w.path, tmp.filePath("proj/mine.safetensors").toStdString());
        QVERIFY(!w.exists);
        // A backbone the catalogue does not cache, named nowhere that exists.
        p.extra["pretrained"] = {{"backbone", "resnet50"}, {"weights", "${KILN_DATA:-/nowhere}/w.safetensors"}};
        w = pretrainedWeights(p, "", data);
        QVERIFY(!w.exists);
        QVERIFY(w.path.ends_with("/w.safetensors"));
    }

    void projectFromTheCache() {
        QTemporaryDir tmp;
        const Backbone& b = *findBackbone("efficientnet-lite0");
        const std::string dataDir = (fs::path(tmp.path().toStdString()) / "data").string();
        auto params = writeCache(b, dataDir);

        PretrainedProjectRequest req;
        req.backbone = b.id;
        req.dataDir = dataDir;
        req.projectPath = tmp.filePath("flowers.kiln").toStdString();
        req.classes = 5;
        req.dropout = 0.25;
        req.dataFolder = "${KILN_DATA}/flowers";
        auto r = createPretrainedProject(req);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QCOMPARE(r->head, (std::vector<std::string>{"head_pooling", "head_dropout", "head_predictions"}));
        QCOMPARE(r->removed, (std::vector<std::string>{"global_average_pooling2d", "dense"}));

        auto loaded = loadProject(req.projectPath);
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().toString().c_str());
        const Graph& g = loaded->graph;
        QCOMPARE(g.outputs, std::vector<std::string>{"head_predictions"});
        QVERIFY(!nodeNamed(g, "stem")->trainable && !nodeNamed(g, "conv2d_32")->trainable);
        QVERIFY(nodeNamed(g, "head_predictions")->trainable && nodeNamed(g, "head_pooling")->trainable);
        QCOMPARE(nodeNamed(g, "head_pooling")->inputs, std::vector<std::string>{"conv2d_32"});

        // Stages the trainer accepts: head only, then all at a tenth of the rate.
        const json& stages = loaded->training.at("stages");
        QCOMPARE(stages.size(), size_t{2});
        QCOMPARE(stages[0].at("name").get<std::string>(), std::string("head only"));
        QCOMPARE(stages[0].at("trainable").at("from").get<std::string>(), std::string("head_pooling"));
        QCOMPARE(stages[1].at("trainable").get<std::string>(), std::string("all"));
        QCOMPARE(stages[1].at("lr_factor").get<double>(), 0.1);
        auto config = train::parseTrainingConfig(loaded->training, g);
        QVERIFY2(config.ok(), config.ok() ? "" : config.error().toString().c_str());

        // The data section: the folder, and transforms the pipeline reads, ending in the preset.
        QCOMPARE(loaded->data.at("path").get<std::string>(), req.dataFolder);
        QCOMPARE(loaded->data.at("inputs").at("image").get<std::string>(), std::string("image"));
        auto transforms = data::TransformList::fromJson(loaded->data.at("transforms"));
        QVERIFY2(transforms.ok(), transforms.ok() ? "" : transforms.error().toString().c_str());
        QCOMPARE(loaded->data.at("eval_transforms").back().at("preset").get<std::string>(), std::string("centered"));
        QCOMPARE(loaded->extra.at("pretrained").at("backbone").get<std::string>(), b.id);
        QVERIFY(preprocessingMismatches(*loaded).empty());

        // The weights: the backbone's kept nodes, loaded by name; the new head is initialised.
        auto info = ops::analyzeModel(g);
        QVERIFY(info.ok());
        auto model = exec::ParamStore::create(*info, 5);
        auto report = train::loadWeightsByName(model, r->weightsPath, true);
        QVERIFY2(report.ok(), report.ok() ? "" : report.error().toString().c_str());
        QCOMPARE(report->loaded.size(), size_t{4});
        auto initialised = report->initialised;
        std::sort(initialised.begin(), initialised.end());
        QCOMPARE(initialised, (std::vector<std::string>{"head_predictions/bias", "head_predictions/kernel"}));
        QVERIFY(report->unused.empty() && report->mismatched.empty());
        const Tensor* stem = nullptr;
        for (const auto& p : model.params())
            if (p.name == "stem/kernel") stem = &p.value;
        for (const auto& p : params.params())
            if (p.name == "stem/kernel") QCOMPARE(std::memcmp(stem->data<float>(), p.value.data<float>(), p.value.numel() * 4), 0);
    }

    void preprocessingDifferencesAreFound() {
        QTemporaryDir tmp;
        const Backbone& b = *findBackbone("efficientnet-lite0");
        const std::string dataDir = tmp.filePath("data").toStdString();
        writeCache(b, dataDir);
        PretrainedProjectRequest req;
        req.backbone = b.id;
        req.dataDir = dataDir;
        req.projectPath = tmp.filePath("p.kiln").toStdString();
        req.classes = 2;
        auto r = createPretrainedProject(req);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        Project p = r->project;
        QVERIFY(preprocessingMismatches(p).empty());
        // The same numbers written out instead of the preset still agree.
        p.data["eval_transforms"][2] = {{"type", "normalize"}, {"scale", 1.0}, {"mean", {127.0}}, {"std", {128.0}}};
        QVERIFY(preprocessingMismatches(p).empty());
        p.data["eval_transforms"][2] = {{"type", "normalize"}, {"preset", "imagenet"}};
        auto m = preprocessingMismatches(p);
        QCOMPARE(m.size(), size_t{1});
        QCOMPARE(m[0].kind, PreprocessingMismatch::Kind::Normalization);
        QVERIFY(m[0].message.find("(x - 127) / 128") != std::string::npos);
        p.data["eval_transforms"][1] = {{"type", "resize"}, {"size", 128}};
        m = preprocessingMismatches(p);
        QCOMPARE(m.size(), size_t{2});
        QCOMPARE(m[0].kind, PreprocessingMismatch::Kind::Size);
        QCOMPARE(m[0].height, int64_t{128});
        QCOMPARE(m[0].wantHeight, int64_t{224});
        QVERIFY(m[0].message.find("128x128") != std::string::npos && m[0].message.find("224x224") != std::string::npos);
        p.data["eval_transforms"] = json::array({{{"type", "decode"}, {"channels", 3}}});
        m = preprocessingMismatches(p);
        QCOMPARE(m.size(), size_t{1});
        QCOMPARE(m[0].kind, PreprocessingMismatch::Kind::NoNormalization);
        // A project not made from a backbone is not checked.
        p.extra.erase("pretrained");
        QVERIFY(preprocessingMismatches(p).empty());
    }

    void templateTakesAModelFile() {
        QTemporaryDir tmp;
        PretrainedProjectRequest req;
        req.backbone = "mobilenet-v2";
        req.projectPath = tmp.filePath("t.kiln").toStdString();
        req.classes = 3;
        auto none = createPretrainedProject(req);
        QVERIFY(!none.ok());
        QCOMPARE(none.error().param("field"), std::string("model"));

        // An ONNX file (the stand-in network exported) as the user's file: the catalogue's cut node
        // (out_relu) is not in it, so the feature map before the global pooling is used.
        const Project bb = backboneProject();
        auto info = ops::analyzeModel(bb.graph);
        QVERIFY(info.ok());
        auto params = exec::ParamStore::create(*info, 2);
        const std::string onnxPath = tmp.filePath("user.onnx").toStdString();
        QVERIFY(saveOnnx(onnxPath, *info, params, {"user", {}, "{}", "test"}).ok());
        req.modelFile = onnxPath;
        auto r = createPretrainedProject(req);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QCOMPARE(r->project.extra.at("pretrained").at("cut_after").get<std::string>(),
                 r->project.graph.node("head_pooling")->inputs.at(0));
        QCOMPARE(r->project.extra.at("pretrained").at("preprocessing").at("normalize").at("preset").get<std::string>(),
                 std::string("symmetric"));
        QVERIFY(r->weightTensors >= 4);
        QVERIFY(QFile::exists(tmp.filePath("t.safetensors")));

        // The same file as kiln-import's child has read it (a project and its weights, as the
        // studio has it read): the same project, the same weights, the original file named.
        ImportOptions options;
        options.readableNames = true;
        options.placeholders = true;
        auto read = loadModelFile(onnxPath, options);
        QVERIFY(read.ok());
        Project imported;
        imported.graph = read->graph;
        const std::string importedProject = tmp.filePath("read/model.kiln").toStdString();
        const std::string importedWeights = tmp.filePath("read/model.safetensors").toStdString();
        QVERIFY(QDir().mkpath(tmp.filePath("read")));
        QVERIFY(saveProject(imported, importedProject).ok());
        QVERIFY(saveSafetensors(importedWeights, read->weights, {}).ok());
        PretrainedProjectRequest viaChild = req;
        viaChild.projectPath = tmp.filePath("t2.kiln").toStdString();
        viaChild.importedProject = importedProject;
        viaChild.importedWeights = importedWeights;
        auto r2 = createPretrainedProject(viaChild);
        QVERIFY2(r2.ok(), r2.ok() ? "" : r2.error().toString().c_str());
        QCOMPARE(r2->project.graph.nodes.size(), r->project.graph.nodes.size());
        for (size_t k = 0; k < r->project.graph.nodes.size(); ++k) {
            QCOMPARE(r2->project.graph.nodes[k].name, r->project.graph.nodes[k].name);
            QCOMPARE(r2->project.graph.nodes[k].trainable, r->project.graph.nodes[k].trainable);
        }
        QCOMPARE(r2->weightTensors, r->weightTensors);
        QCOMPARE(r2->project.extra.at("pretrained").at("model_file").get<std::string>(), std::string("user.onnx"));
        auto w1 = loadSafetensors(r->weightsPath), w2 = loadSafetensors(r2->weightsPath);
        QVERIFY(w1.ok() && w2.ok());
        QCOMPARE(w2->tensors.size(), w1->tensors.size());
        for (size_t k = 0; k < w1->tensors.size(); ++k) {
            QCOMPARE(w2->tensors[k].name, w1->tensors[k].name);
            const std::span<const float> a = std::as_const(w1->tensors[k].tensor).f32(), b = std::as_const(w2->tensors[k].tensor).f32();
            QVERIFY2(std::equal(a.begin(), a.end(), b.begin(), b.end()), w1->tensors[k].name.c_str());
        }
        // Without its weights file: refused, nothing written.
        viaChild.importedWeights.clear();
        viaChild.projectPath = tmp.filePath("t3.kiln").toStdString();
        auto noWeights = createPretrainedProject(viaChild);
        QVERIFY(!noWeights.ok());
        QCOMPARE(noWeights.error().param("field"), std::string("weights"));
        QVERIFY(!QFile::exists(tmp.filePath("t3.kiln")));
        // A placeholder in what was read: refused, naming the user's file and the node.
        imported.graph.nodes[1].op = "Placeholder";
        QVERIFY(saveProject(imported, importedProject).ok());
        viaChild.importedWeights = importedWeights;
        auto placeholder = createPretrainedProject(viaChild);
        QVERIFY(!placeholder.ok());
        QCOMPARE(placeholder.error().code, ErrorCode::Unsupported);
        QCOMPARE(placeholder.error().file, onnxPath);
        QCOMPARE(placeholder.error().node, imported.graph.nodes[1].name);
        QVERIFY(!QFile::exists(tmp.filePath("t3.kiln")));
    }

    void refusals() {
        QTemporaryDir tmp;
        PretrainedProjectRequest req;
        req.backbone = "vgg19";
        req.projectPath = tmp.filePath("x.kiln").toStdString();
        req.classes = 2;
        auto unknown = createPretrainedProject(req);
        QVERIFY(!unknown.ok());
        QCOMPARE(unknown.error().param("field"), std::string("backbone"));

        // Not cached: the error says how to get it, and nothing is written.
        req.backbone = "efficientnet-lite0";
        req.dataDir = tmp.filePath("empty").toStdString();
        auto missing = createPretrainedProject(req);
        QVERIFY(!missing.ok());
        QCOMPARE(missing.error().code, ErrorCode::FileNotFound);
        QVERIFY(missing.error().message.find("fetch_pretrained.sh") != std::string::npos);
        QVERIFY(!QFile::exists(tmp.filePath("x.kiln")));

        // Zero classes: refused by the head, nothing written.
        writeCache(*findBackbone("efficientnet-lite0"), req.dataDir);
        req.classes = 0;
        auto zero = createPretrainedProject(req);
        QVERIFY(!zero.ok());
        QCOMPARE(zero.error().param("field"), std::string("classes"));
        QVERIFY(!QFile::exists(tmp.filePath("x.kiln")) && !QFile::exists(tmp.filePath("x.safetensors")));
    }

    void realEfficientNetLite0() {
        const Backbone& b = *findBackbone("efficientnet-lite0");
        const auto a = backboneAvailability(b, defaultDataDir());
        if (!a.available) QSKIP("EfficientNet-Lite0 is not cached (tools/fetch_pretrained.sh)");
        QVERIFY(a.parameters > 4600000 && a.parameters < 4700000);  // 4.65 M
        QTemporaryDir tmp;
        PretrainedProjectRequest req;
        req.backbone = b.id;
        req.projectPath = tmp.filePath("cats.kiln").toStdString();
        req.classes = 4;
        auto r = createPretrainedProject(req);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        auto info = ops::analyzeModel(r->project.graph);
        QVERIFY(info.ok());
        QCOMPARE(info->parameterCount(true), int64_t{1280 * 4 + 4});
        auto model = exec::ParamStore::create(*info, 1);
        auto report = train::compareWeights(model, r->weightsPath);
        QVERIFY(report.ok());
        QCOMPARE(report->initialised.size(), size_t{2});
        QVERIFY(report->unused.empty() && report->mismatched.empty());
        QCOMPARE(int64_t(report->loaded.size()), r->weightTensors);
    }
};

QTEST_GUILESS_MAIN(TestModelZoo)
#include "tst_model_zoo.moc"
