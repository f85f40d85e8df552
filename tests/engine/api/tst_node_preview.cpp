// SPDX-License-Identifier: Apache-2.0
// Node previews on an image-folder project: the sample is the first validation picture as the
// model sees it (normalised), a convolution's output equals a direct computation from its weights,
// the model output equals a plain inference plan's, trained weights replace the initial ones and
// problems (no data, unknown node, broken graph) come back as errors.
#include <QtTest>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <opencv2/imgcodecs.hpp>

#include "engine/api/node_preview.h"
#include "engine/exec/param_store.h"
#include "engine/exec/plan.h"
#include "engine/io/project.h"
#include "engine/train/weights.h"

using namespace kiln::engine;
namespace fs = std::filesystem;

namespace {

void writePictures(const fs::path& dir, int level, int n) {
    fs::create_directories(dir);
    for (int i = 0; i < n; ++i) {
        cv::Mat m(6, 6, CV_8UC1);
        for (int p = 0; p < 36; ++p) m.data[p] = static_cast<unsigned char>(level + (p * 7 + i * 13) % 41 - 20);
        cv::imwrite((dir / (std::to_string(i) + ".png")).string(), m);
    }
}

io::Project project(const std::string& data) {
    const std::string text = R"({"format": "kiln-project", "version": 2, "name": "preview",
      "graph": {"nodes": [
        {"name": "image", "op": "Input", "attrs": {"shape": [6, 6, 1]}},
        {"name": "conv", "op": "Conv2D", "inputs": ["image"], "attrs": {"filters": 4, "kernel_size": [3, 3], "padding": "same"}},
        {"name": "flat", "op": "Flatten", "inputs": ["conv"]},
        {"name": "logits", "op": "Dense", "inputs": ["flat"], "attrs": {"units": 2}}]},
      "data": )" + data + R"(,
      "training": {"epochs": 1, "batch_size": 4, "seed": 5, "optimizer": {"type": "adam", "learning_rate": 0.01},
        "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}}})";
    auto p = io::parseProject(text, "preview.kiln");
    if (!p.ok()) qFatal("parseProject: %s", p.error().toString().c_str());
    return std::move(p).value();
}

const char* kFolderData = R"({"format": "folder", "path": "pics", "transforms": [{"type": "normalize", "preset": "symmetric"}]})";

}  // namespace

class TestNodePreview : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    std::string m_path;

private slots:
    void initTestCase() {
        const fs::path root = m_tmp.path().toStdString();
        writePictures(root / "pics" / "train" / "dark", 50, 4);
        writePictures(root / "pics" / "train" / "light", 200, 4);
        writePictures(root / "pics" / "val" / "dark", 60, 2);
        writePictures(root / "pics" / "val" / "light", 190, 2);
        m_path = (root / "preview.kiln").string();
    }

    void sampleIsTheFirstValidationPicture() {
        auto s = api::loadPreviewSample(project(kFolderData), m_path);
        QVERIFY2(s.ok(), s.ok() ? "" : s.error().toString().c_str());
        QCOMPARE(s->split, std::string("validation"));
        QCOMPARE(s->inputNames, std::vector<std::string>{"image"});
        QCOMPARE(s->inputs.size(), size_t{1});
        QCOMPARE(s->inputs[0].size(), size_t{36});
        QVERIFY(s->source.find("0.png") != std::string::npos);
        // The "symmetric" preset maps 0..255 to -1..1: pixel p of picture 0 of "dark" (level 60).
        const cv::Mat m = cv::imread(s->source, cv::IMREAD_GRAYSCALE);
        QVERIFY(!m.empty());
        for (int p = 0; p < 36; ++p)
            QVERIFY(std::abs(s->inputs[0][static_cast<size_t>(p)] - (m.data[p] / 127.5f - 1.0f)) < 1e-5f);
    }

    void convolutionAndOutputMatchTheEngine() {
        const io::Project proj = project(kFolderData);
        auto s = api::loadPreviewSample(proj, m_path);
        QVERIFY(s.ok());
        ThreadPool pool(1);
        auto pv = api::NodePreviewer::create(proj, std::string(), pool);
        QVERIFY2(pv.ok(), pv.ok() ? "" : pv.error().toString().c_str());
        QVERIFY((*pv)->weights().file.empty());

        auto conv = (*pv)->run("conv", *s);
        QVERIFY2(conv.ok(), conv.ok() ? "" : conv.error().toString().c_str());
        QCOMPARE(conv->shape, (Shape{1, 6, 6, 4}));
        QCOMPARE(conv->values.size(), size_t{144});
        // Direct "same" 3x3 convolution with the initial weights (seed 5, as training starts).
        auto model = ops::analyzeModel(proj.graph);
        QVERIFY(model.ok());
        exec::ParamStore params = exec::ParamStore::create(*model, 5);
        const float* k = params.find("conv/kernel")->value.data<float>();  // [3, 3, 1, 4]
        const float* b = params.find("conv/bias")->value.data<float>();
        const std::vector<float>& x = s->inputs[0];
        double sum = 0;
        for (int y = 0; y < 6; ++y)
            for (int xx = 0; xx < 6; ++xx)
                for (int f = 0; f < 4; ++f) {
                    double acc = b[f];
                    for (int dy = -1; dy <= 1; ++dy)
                        for (int dx = -1; dx <= 1; ++dx) {
                            const int iy = y + dy, ix = xx + dx;
                            if (iy < 0 || iy >= 6 || ix < 0 || ix >= 6) continue;
                            acc += x[static_cast<size_t>(iy * 6 + ix)] * k[((dy + 1) * 3 + (dx + 1)) * 4 + f];
                        }
                    const float got = conv->values[static_cast<size_t>((y * 6 + xx) * 4 + f)];
                    QVERIFY2(std::abs(got - acc) < 1e-4, qPrintable(QStringLiteral("%1 vs %2").arg(got).arg(acc)));
                    sum += acc;
                }
        QVERIFY(std::abs(conv->stats.mean - sum / 144.0) < 1e-4);
        QCOMPARE(conv->stats.count, int64_t{144});

        // The model's output equals an inference plan's.
        auto logits = (*pv)->run("logits", *s);
        QVERIFY(logits.ok());
        QCOMPARE(logits->shape, (Shape{1, 2}));
        exec::CompileOptions o;
        o.batch = 1;
        o.training = false;
        auto plan = exec::Plan::compile(*model, params, o, pool);
        QVERIFY(plan.ok());
        std::copy(x.begin(), x.end(), (*plan)->input(size_t{0}));
        QVERIFY((*plan)->forward().ok());
        for (int c = 0; c < 2; ++c) QVERIFY(std::abs(logits->values[static_cast<size_t>(c)] - (*plan)->output(0)[c]) < 1e-5f);

        // The Input node's value is the sample itself.
        auto image = (*pv)->run("image", *s);
        QVERIFY2(image.ok(), image.ok() ? "" : image.error().toString().c_str());
        QCOMPARE(image->values, x);
    }

    void trainedWeightsAreUsed() {
        const io::Project proj = project(kFolderData);
        auto model = ops::analyzeModel(proj.graph);
        QVERIFY(model.ok());
        exec::ParamStore params = exec::ParamStore::create(*model, 5);
        for (auto& p : params.params())
            for (int64_t i = 0; i < p.value.numel(); ++i) p.value.data<float>()[i] = 0.5f;
        const std::string file = (fs::path(m_tmp.path().toStdString()) / "trained.safetensors").string();
        QVERIFY(train::saveWeights(params, file).ok());
        auto s = api::loadPreviewSample(proj, m_path);
        QVERIFY(s.ok());
        ThreadPool pool(1);
        auto pv = api::NodePreviewer::create(proj, file, pool);
        QVERIFY2(pv.ok(), pv.ok() ? "" : pv.error().toString().c_str());
        QCOMPARE((*pv)->weights().loaded, int64_t{4});
        QCOMPARE((*pv)->weights().initialised, int64_t{0});
        auto conv = (*pv)->run("conv", *s);
        QVERIFY(conv.ok());
        // Every weight 0.5: the top-left output is 0.5 + 0.5 * (its 2x2 neighbourhood's sum).
        const auto& x = s->inputs[0];
        const double expected = 0.5 + 0.5 * (x[0] + x[1] + x[6] + x[7]);
        QVERIFY(std::abs(conv->values[0] - expected) < 1e-5);
        QCOMPARE(conv->values[0], conv->values[3]);  // every filter alike
    }

    void problemsAreErrors() {
        // No data section.
        io::Project noData = project(kFolderData);
        noData.data = nlohmann::json::object();
        auto s = api::loadPreviewSample(noData, m_path);
        QVERIFY(!s.ok());
        QCOMPARE(s.error().param("field"), std::string("data"));
        // Data that is not there.
        auto missing = api::loadPreviewSample(project(R"({"format": "folder", "path": "nowhere"})"), m_path);
        QVERIFY(!missing.ok());
        // An unknown node.
        const io::Project proj = project(kFolderData);
        auto sample = api::loadPreviewSample(proj, m_path);
        QVERIFY(sample.ok());
        ThreadPool pool(1);
        auto pv = api::NodePreviewer::create(proj, std::string(), pool);
        QVERIFY(pv.ok());
        auto none = (*pv)->run("nope", *sample);
        QVERIFY(!none.ok());
        QCOMPARE(none.error().node, std::string("nope"));
        // A graph that does not analyse: the node is named.
        io::Project broken = project(kFolderData);
        broken.graph.nodes[1].inputs = {"ghost"};
        auto bad = api::NodePreviewer::create(broken, std::string(), pool);
        QVERIFY(!bad.ok());
        QVERIFY(!bad.error().node.empty());
        // A sample of another shape.
        api::PreviewSample wrong = *sample;
        wrong.inputs[0].resize(10);
        QVERIFY(!(*pv)->run("conv", wrong).ok());
    }
};

QTEST_GUILESS_MAIN(TestNodePreview)
#include "tst_node_preview.moc"
