// SPDX-License-Identifier: Apache-2.0
// The Explainer: Grad-CAM finds the region a hand-made brightness detector looks at, saliency
// equals finite differences of the class score through BatchNorm, pooling and Dropout in
// inference mode, bilinear resizing follows the half-pixel rule, and bad layers and classes give
// errors that name them.
#include <QtTest/QtTest>

#include <cmath>
#include <random>

#include "engine/api/explanation.h"
#include "engine/exec/param_store.h"
#include "engine/exec/plan.h"
#include "engine/io/project.h"

using namespace kiln::engine;

namespace {

ops::ModelInfo buildModel(const std::string& nodes) {
    const std::string text = R"({"format": "kiln-project", "version": 2, "graph": {"nodes": )" + nodes + "}}";
    auto p = io::parseProject(text, "test.kiln");
    if (!p.ok()) qFatal("parseProject: %s", p.error().toString().c_str());
    auto m = ops::analyzeModel(p->graph);
    if (!m.ok()) qFatal("analyzeModel: %s", m.error().toString().c_str());
    return std::move(m).value();
}

void setParam(exec::ParamStore& ps, const std::string& name, std::vector<float> values) {
    exec::Parameter* p = ps.find(name);
    if (!p || p->value.numel() != int64_t(values.size())) qFatal("parameter %s", name.c_str());
    std::copy(values.begin(), values.end(), p->value.data<float>());
}

// Every parameter of `ps` as the api's weight values.
api::WeightValues weightsOf(const exec::ParamStore& ps) {
    api::WeightValues w;
    for (const auto& p : ps.params()) w.values[p.name].assign(p.value.data<float>(), p.value.data<float>() + p.value.numel());
    return w;
}

// Brightness detector: a 1x1 convolution copying the picture, ReLU, global average, and a Dense
// layer whose class 0 likes brightness and class 1 dislikes it.
const char* kDetector = R"([
  {"name": "image", "op": "Input", "attrs": {"shape": [8, 8, 1]}},
  {"name": "conv", "op": "Conv2D", "inputs": ["image"], "attrs": {"filters": 1, "kernel_size": 1}},
  {"name": "relu", "op": "ReLU", "inputs": ["conv"]},
  {"name": "gap", "op": "GlobalAveragePooling2D", "inputs": ["relu"]},
  {"name": "logits", "op": "Dense", "inputs": ["gap"], "attrs": {"units": 2}}
])";

const char* kNet = R"([
  {"name": "image", "op": "Input", "attrs": {"shape": [6, 6, 2]}},
  {"name": "c1", "op": "Conv2D", "inputs": ["image"], "attrs": {"filters": 3, "kernel_size": 3, "padding": "same"}},
  {"name": "bn", "op": "BatchNormalization", "inputs": ["c1"]},
  {"name": "act", "op": "Tanh", "inputs": ["bn"]},
  {"name": "pool", "op": "AveragePooling2D", "inputs": ["act"]},
  {"name": "drop", "op": "Dropout", "inputs": ["pool"], "attrs": {"rate": 0.5}},
  {"name": "flat", "op": "Flatten", "inputs": ["drop"]},
  {"name": "logits", "op": "Dense", "inputs": ["flat"], "attrs": {"units": 3}},
  {"name": "probs", "op": "Softmax", "inputs": ["logits"]}
])";

}  // namespace

class TestExplanation : public QObject {
    Q_OBJECT

private slots:
    void gradCamFindsTheBrightSquare() {
        ops::ModelInfo m = buildModel(kDetector);
        exec::ParamStore ps = exec::ParamStore::create(m, 1);
        setParam(ps, "conv/kernel", {1.0f});
        setParam(ps, "conv/bias", {0.0f});
        setParam(ps, "logits/kernel", {1.0f, -1.0f});
        setParam(ps, "logits/bias", {0.0f, 0.0f});
        ThreadPool pool(1);
        auto e = api::Explainer::create(std::move(m), weightsOf(ps), pool);
        QVERIFY(e.ok());
        QCOMPARE((*e)->numClasses(), int64_t(2));
        // A dark picture with a bright 2x2 square at rows 5-6, columns 1-2.
        std::vector<float> image(64, 0.1f);
        for (int y = 5; y < 7; ++y)
            for (int x = 1; x < 3; ++x) image[size_t(y * 8 + x)] = 0.9f;
        auto cam = (*e)->explain(image.data(), api::ExplainMethod::GradCam);
        QVERIFY2(cam.ok(), cam.ok() ? "" : cam.error().toString().c_str());
        QCOMPARE(cam->predictedClass, int64_t(0));
        QCOMPARE(cam->explainedClass, int64_t(0));
        QCOMPARE(cam->height, int64_t(8));
        // Class 0's map is the picture's brightness scaled to a maximum of 1: 1 on the square.
        for (int p = 0; p < 64; ++p) QVERIFY(std::abs(cam->values[size_t(p)] - image[size_t(p)] / 0.9f) < 1e-5f);
        // Class 1 dislikes brightness: its weights are negative and ReLU leaves nothing.
        auto other = (*e)->explain(image.data(), api::ExplainMethod::GradCam, "conv", 1);
        QVERIFY(other.ok());
        QCOMPARE(other->explainedClass, int64_t(1));
        QCOMPARE(other->scale, 0.0f);
        QVERIFY(std::all_of(other->values.begin(), other->values.end(), [](float v) { return v == 0.0f; }));
        QVERIFY(std::abs(other->score + cam->score) < 1e-6f);
    }

    void saliencyIsTheInputGradient() {
        ops::ModelInfo m = buildModel(kNet);
        exec::ParamStore ps = exec::ParamStore::create(m, 3);
        std::mt19937 rng(5);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        setParam(ps, "bn/moving_mean", {0.2f, -0.3f, 0.1f});
        setParam(ps, "bn/moving_variance", {0.5f, 2.0f, 1.5f});
        setParam(ps, "bn/gamma", {1.5f, 0.7f, -1.1f});
        // A copy of the model and weights for the finite differences.
        ops::ModelInfo m2 = m;
        exec::ParamStore ps2 = exec::ParamStore::create(m2, 3);
        for (size_t k = 0; k < ps.params().size(); ++k) {
            const auto& src = ps.params()[k].value;
            std::copy(src.data<float>(), src.data<float>() + src.numel(), ps2.params()[k].value.data<float>());
        }
        ThreadPool pool(2);
        auto e = api::Explainer::create(std::move(m), weightsOf(ps), pool);
        QVERIFY(e.ok());
        std::vector<float> image(6 * 6 * 2);
        for (auto& v : image) v = u(rng);
        const int64_t cls = 2;
        auto sal = (*e)->explain(image.data(), api::ExplainMethod::Saliency, {}, cls);
        QVERIFY2(sal.ok(), sal.ok() ? "" : sal.error().toString().c_str());
        QVERIFY(sal->scale > 0);

        exec::CompileOptions o;
        o.batch = 1;
        o.training = false;
        // The logits, kept readable by a probe with no seed (forward only).
        o.probe = exec::GradientProbe{{}, {"logits"}};
        auto probePlan = exec::Plan::compile(m2, ps2, o, pool);
        QVERIFY(probePlan.ok());
        auto score = [&](const std::vector<float>& x) {
            std::copy(x.begin(), x.end(), (*probePlan)->input(size_t{0}));
            if (!(*probePlan)->forward().ok()) qFatal("forward");
            return double((*probePlan)->value("logits")[cls]);
        };
        const double h = 1e-2;
        double worst = 0;
        for (int p = 0; p < 36; ++p) {
            double best = 0;
            for (int c = 0; c < 2; ++c) {
                std::vector<float> a = image, b = image;
                a[size_t(p * 2 + c)] += float(h);
                b[size_t(p * 2 + c)] -= float(h);
                best = std::max(best, std::abs(score(a) - score(b)) / (2 * h));
            }
            worst = std::max(worst, std::abs(best - double(sal->values[size_t(p)]) * sal->scale));
        }
        QVERIFY2(worst < 2e-3 * sal->scale, qPrintable(QString::number(worst)));
        // The scores are the logits before the Softmax.
        QCOMPARE(sal->scores.size(), size_t(3));
        QVERIFY(std::abs(sal->score - float(score(image))) < 1e-5f);
    }

    void resizeUsesHalfPixelCentres() {
        // 2x2 -> 4x4: source coordinates -0.25 (clamped to 0), 0.25, 0.75, 1.25 (upper clamped).
        const auto out = api::resizeBilinear({0, 1, 2, 3}, 2, 2, 4, 4);
        const float row0[4] = {0.0f, 0.25f, 0.75f, 1.0f};
        for (int x = 0; x < 4; ++x) QCOMPARE(out[size_t(x)], row0[x]);
        QCOMPARE(out[size_t(1 * 4 + 0)], 0.5f);  // y 0.25 between rows 0 and 2
        QCOMPARE(out[size_t(3 * 4 + 3)], 3.0f);
        const auto flat = api::resizeBilinear({4.0f}, 1, 1, 3, 5);
        QVERIFY(std::all_of(flat.begin(), flat.end(), [](float v) { return v == 4.0f; }));
    }

    void overlayKeepsColdPixels() {
        api::Heatmap heat;
        heat.values = {0.0f, 1.0f};
        const std::vector<uint8_t> picture{10, 20, 30, 10, 20, 30};
        const auto out = api::overlayRgb(picture, heat, 0.5f);
        QCOMPARE(out[0], uint8_t(10));
        QCOMPARE(out[2], uint8_t(30));
        // The hot pixel is half red: (10 + 255) / 2, 20 / 2, 30 / 2.
        QCOMPARE(out[3], uint8_t(133));
        QCOMPARE(out[4], uint8_t(10));
        QCOMPARE(out[5], uint8_t(15));
        const auto grey = api::pictureRgb(std::vector<float>{-1.0f, 1.0f}.data(), 1, 2, 1);
        QCOMPARE(grey, (std::vector<uint8_t>{0, 0, 0, 255, 255, 255}));
    }

    void badRequestsNameWhatIsWrong() {
        ThreadPool pool(1);
        ops::ModelInfo m = buildModel(kNet);
        exec::ParamStore ps = exec::ParamStore::create(m, 3);
        QCOMPARE(*api::defaultGradCamLayer(m), std::string("c1"));
        QCOMPARE(api::gradCamLayers(m), (std::vector<std::string>{"c1", "bn", "act", "pool", "drop"}));
        auto e = api::Explainer::create(std::move(m), weightsOf(ps), pool);
        QVERIFY(e.ok());
        std::vector<float> image(72, 0.5f);
        auto r = (*e)->explain(image.data(), api::ExplainMethod::GradCam, "nope");
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::ConfigError);
        QCOMPARE(r.error().node, std::string("nope"));
        r = (*e)->explain(image.data(), api::ExplainMethod::GradCam, "flat");
        QVERIFY(!r.ok());
        QCOMPARE(r.error().node, std::string("flat"));
        QVERIFY(QString::fromStdString(r.error().message).contains("[batch, height, width, channels]"));
        r = (*e)->explain(image.data(), api::ExplainMethod::GradCam, "pool", 3);
        QVERIFY(!r.ok());
        QVERIFY(QString::fromStdString(r.error().message).contains("class 3 is out of range"));
        // Grad-CAM at another layer works, at that layer's resolution.
        r = (*e)->explain(image.data(), api::ExplainMethod::GradCam, "pool", 1);
        QVERIFY(r.ok());
        QCOMPARE(r->layerHeight, int64_t(3));
        QCOMPARE(r->values.size(), size_t(36));

        ops::ModelInfo mlp = buildModel(R"([
          {"name": "x", "op": "Input", "attrs": {"shape": [4, 4, 1]}},
          {"name": "flat", "op": "Flatten", "inputs": ["x"]},
          {"name": "y", "op": "Dense", "inputs": ["flat"], "attrs": {"units": 2}}])");
        auto none = api::defaultGradCamLayer(mlp);
        QVERIFY(!none.ok());
        QCOMPARE(none.error().code, ErrorCode::Unsupported);
        ops::ModelInfo vec = buildModel(R"([
          {"name": "x", "op": "Input", "attrs": {"shape": [4]}},
          {"name": "y", "op": "Dense", "inputs": ["x"], "attrs": {"units": 2}}])");
        exec::ParamStore vps = exec::ParamStore::create(vec, 1);
        auto notPicture = api::Explainer::create(std::move(vec), weightsOf(vps), pool);
        QVERIFY(!notPicture.ok());
        QCOMPARE(notPicture.error().node, std::string("x"));

        // Weight values for a parameter the model lacks, or of the wrong size, name the tensor.
        api::WeightValues unknown{3, {{"c9/kernel", {1.0f}}}};
        auto noSuch = api::Explainer::create(buildModel(kNet), unknown, pool);
        QVERIFY(!noSuch.ok());
        QCOMPARE(noSuch.error().code, ErrorCode::WeightsMismatch);
        QVERIFY(noSuch.error().params == (std::vector<std::pair<std::string, std::string>>{
                                             {"tensor", "c9/kernel"}, {"reason", "no such parameter"}}));
        api::WeightValues shortBias{3, {{"c1/bias", {1.0f, 2.0f}}}};
        auto wrongSize = api::Explainer::create(buildModel(kNet), shortBias, pool);
        QVERIFY(!wrongSize.ok());
        QCOMPARE(wrongSize.error().code, ErrorCode::WeightsMismatch);
        QVERIFY(QString::fromStdString(wrongSize.error().message).contains("holds 3 values, 2 were given"));
    }

    void seedOnlyWeightsAreTheInitialisers() {
        // No values: the weights are those ParamStore::create gives for the seed, so the scores
        // equal those of an Explainer given every initial value explicitly.
        ThreadPool pool(1);
        ops::ModelInfo m = buildModel(kNet);
        exec::ParamStore ps = exec::ParamStore::create(m, 5);
        auto explicitValues = api::Explainer::create(m, weightsOf(ps), pool);
        auto seedOnly = api::Explainer::create(std::move(m), api::WeightValues{5, {}}, pool);
        QVERIFY(explicitValues.ok() && seedOnly.ok());
        std::vector<float> image(72);
        for (size_t i = 0; i < image.size(); ++i) image[i] = std::sin(float(i));
        auto a = (*explicitValues)->explain(image.data(), api::ExplainMethod::Saliency);
        auto b = (*seedOnly)->explain(image.data(), api::ExplainMethod::Saliency);
        QVERIFY(a.ok() && b.ok());
        QCOMPARE(a->scores, b->scores);
        QCOMPARE(a->values, b->values);
    }

    void probesNeedAnInferencePlan() {
        ThreadPool pool(1);
        ops::ModelInfo m = buildModel(kNet);
        exec::ParamStore ps = exec::ParamStore::create(m, 3);
        exec::CompileOptions o;
        o.batch = 1;
        o.training = true;
        o.probe = exec::GradientProbe{{"logits"}, {}};
        QVERIFY(!exec::Plan::compile(m, ps, o, pool).ok());
        o.training = false;
        o.probe = exec::GradientProbe{{"logits", "probs"}, {}};
        auto twice = exec::Plan::compile(m, ps, o, pool);
        QVERIFY(!twice.ok());
        QVERIFY(QString::fromStdString(twice.error().message).contains("upstream of another seed"));
        o.probe = exec::GradientProbe{{"logits"}, {"missing"}};
        auto missing = exec::Plan::compile(m, ps, o, pool);
        QVERIFY(!missing.ok());
        QCOMPARE(missing.error().node, std::string("missing"));
        // No parameter gradient is written by a probe.
        o.probe = exec::GradientProbe{{"logits"}, {}};
        auto plan = exec::Plan::compile(m, ps, o, pool);
        QVERIFY(plan.ok());
        ps.zeroGrads();
        std::fill((*plan)->input(size_t{0}), (*plan)->input(size_t{0}) + 72, 0.3f);
        QVERIFY((*plan)->forward().ok());
        float* seed = (*plan)->seedGradient("logits");
        QVERIFY(seed);
        std::fill(seed, seed + 3, 1.0f);
        QVERIFY((*plan)->backward().ok());
        for (const auto& p : ps.params()) {
            const float* g = p.grad.data<float>();
            QVERIFY(std::all_of(g, g + p.grad.numel(), [](float v) { return v == 0.0f; }));
        }
        const float* dx = (*plan)->inputGradient(0);
        QVERIFY(dx);
        QVERIFY(std::any_of(dx, dx + 72, [](float v) { return v != 0.0f; }));
    }
};

QTEST_GUILESS_MAIN(TestExplanation)
#include "tst_explanation.moc"
