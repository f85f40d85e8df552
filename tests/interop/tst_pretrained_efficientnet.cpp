// SPDX-License-Identifier: Apache-2.0
// The pretrained EfficientNet-Lite0 from tools/fetch_pretrained.sh, imported with kiln-import:
// it classifies two real photos correctly (a cat, a fox squirrel: top 5, ImageNet class names
// from OpenCV's samples) and its logits agree with onnxruntime on the same ONNX file within
// 1e-4. Skips when the cache or the Python environment lacks what it needs.
// kiln-test-timeout: 900
#include <QtTest>

#include <QProcess>
#include <QTemporaryDir>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <fstream>
#include <numeric>

#include <nlohmann/json.hpp>

#include "engine/exec/plan.h"
#include "engine/io/project.h"
#include "engine/io/safetensors.h"
#include "engine/ops/model.h"
#include "tests/app/app_test_util.h"
#include "tests/python_env.h"
#include "tests/test_data.h"

using namespace kiln::engine;

using kiln::test::dataDir;

namespace {

// RGB, resized to 224x224 (area averaging, as when shrinking a photo), then the preprocessing the
// conversion check recorded: (x - 127) / 128. NHWC, as Kiln's Input takes it.
std::vector<float> loadPhoto(const QString& path) {
    cv::Mat bgr = cv::imread(path.toStdString(), cv::IMREAD_COLOR);
    if (bgr.empty()) return {};
    cv::Mat rgb, small;
    cv::cvtColor(bgr, rgb, cv::COLOR_BGR2RGB);
    cv::resize(rgb, small, cv::Size(224, 224), 0, 0, cv::INTER_AREA);
    std::vector<float> out(224 * 224 * 3);
    for (int y = 0; y < 224; ++y)
        for (int x = 0; x < 224; ++x)
            for (int c = 0; c < 3; ++c)
                out[(y * 224 + x) * 3 + c] = (float(small.at<cv::Vec3b>(y, x)[c]) - 127.0f) / 128.0f;
    return out;
}

std::vector<int> top5(const float* logits, int classes) {
    std::vector<int> idx(static_cast<size_t>(classes));
    std::iota(idx.begin(), idx.end(), 0);
    std::partial_sort(idx.begin(), idx.begin() + 5, idx.end(), [&](int a, int b) { return logits[a] > logits[b]; });
    idx.resize(5);
    return idx;
}

}  // namespace

class TestPretrainedEfficientNet : public QObject {
    Q_OBJECT

private slots:
    void classifiesAndMatchesOnnxRuntime() {
        const QString base = dataDir();
        const QString onnxPath = base + "/pretrained/efficientnet-lite0/efficientnet-lite0.onnx";
        const QString info = base + "/pretrained/efficientnet-lite0/efficientnet-lite0.json";
        const QString chelsea = base + "/images/chelsea.png", squirrel = base + "/images/squirrel_cls.jpg";
        const QString classesPath = base + "/imagenet/classification_classes_ILSVRC2012.txt";
        for (const QString& f : {onnxPath, info, chelsea, squirrel, classesPath})
            if (!QFile::exists(f)) QSKIP(qPrintable(f + " is missing; run tools/fetch_pretrained.sh"));
        std::ifstream infoFile(info.toStdString());
        const auto recorded = nlohmann::json::parse(infoFile);
        QCOMPARE(recorded["preprocessing"].get<std::string>(), std::string("tf"));

        QTemporaryDir tmp;
        const QString project = tmp.filePath("efficientnet-lite0.kiln");
        auto run = kiln::test::runProgram("kiln-import", {onnxPath, "-o", project, "--json"}, 600000);
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const auto report = nlohmann::json::parse(run.out.toStdString());
        QCOMPARE(report["summary"]["placeholders"].get<int>(), 0);
        int convs = 0;
        for (const auto& n : report["nodes"])
            if (n["onnx_op"] == "Conv") {
                QCOMPARE(n["kind"].get<std::string>(), std::string("node"));
                ++convs;
            }
        QCOMPARE(convs, 49);  // stem, 16 blocks (expansion, depthwise, projection), head

        auto p = io::loadProject(project.toStdString());
        QVERIFY2(p.ok(), p.ok() ? "" : p.error().toString().c_str());
        auto model = ops::analyzeModel(p->graph);
        QVERIFY2(model.ok(), model.ok() ? "" : model.error().toString().c_str());
        auto weights = io::loadSafetensors(tmp.filePath("efficientnet-lite0.safetensors").toStdString());
        QVERIFY(weights.ok());
        auto params = exec::ParamStore::create(*model, 0);
        for (auto& prm : params.params()) {
            const Tensor* t = weights->find(prm.name);
            QVERIFY2(t, prm.name.c_str());
            prm.value.copyFrom(*t);
        }

        std::vector<float> batch;
        for (const QString& photo : {chelsea, squirrel}) {
            auto x = loadPhoto(photo);
            QVERIFY2(!x.empty(), qPrintable(photo));
            batch.insert(batch.end(), x.begin(), x.end());
        }
        ThreadPool pool(2);
        exec::CompileOptions opts;
        opts.batch = 2;
        opts.training = false;
        auto plan = exec::Plan::compile(*model, params, opts, pool);
        QVERIFY2(plan.ok(), plan.ok() ? "" : plan.error().toString().c_str());
        std::memcpy((*plan)->input(size_t{0}), batch.data(), batch.size() * sizeof(float));
        QVERIFY((*plan)->forward().ok());
        QCOMPARE((*plan)->outputShape(0), Shape({2, 1000}));
        const float* logits = (*plan)->output(0);

        std::vector<std::string> classes;
        std::ifstream cf(classesPath.toStdString());
        for (std::string line; std::getline(cf, line);) classes.push_back(line);
        QCOMPARE(classes.size(), size_t{1000});
        auto names = [&](const std::vector<int>& top) {
            QStringList l;
            for (int k : top) l << QString::fromStdString(classes[size_t(k)]);
            return l.join(" | ");
        };
        const auto cat = top5(logits, 1000), sq = top5(logits + 1000, 1000);
        qInfo("chelsea.png: %s", qPrintable(names(cat)));
        qInfo("squirrel_cls.jpg: %s", qPrintable(names(sq)));
        // ImageNet's domestic cats: tabby, tiger cat, Persian, Siamese, Egyptian cat (281-285).
        QVERIFY2(std::any_of(cat.begin(), cat.end(), [](int k) { return k >= 281 && k <= 285; }), qPrintable(names(cat)));
        QVERIFY2(classes[size_t(cat[0])].find("cat") != std::string::npos, qPrintable(names(cat)));
        QVERIFY2(std::find(sq.begin(), sq.end(), 335) != sq.end(), qPrintable(names(sq)));
        QVERIFY(classes[335].starts_with("fox squirrel"));

        // onnxruntime on the same file and the same pixels (NCHW there).
        const QString python = kiln::test::pythonEnvInterpreter();
        if (python.isEmpty()) QSKIP("the Python environment is not available");
        std::vector<float> nchw(batch.size());
        for (size_t n = 0; n < 2; ++n)
            for (size_t c = 0; c < 3; ++c)
                for (size_t i = 0; i < 224 * 224; ++i) nchw[(n * 3 + c) * 224 * 224 + i] = batch[(n * 224 * 224 + i) * 3 + c];
        const QString inPath = tmp.filePath("x.f32"), outPath = tmp.filePath("y.f32");
        {
            std::ofstream f(inPath.toStdString(), std::ios::binary);
            f.write(reinterpret_cast<const char*>(nchw.data()), std::streamsize(nchw.size() * sizeof(float)));
        }
        QProcess py;
        py.start(python, {QString(KILN_SOURCE_DIR) + "/tests/interop/onnx_run.py", onnxPath, inPath, "2,3,224,224", outPath});
        QVERIFY(py.waitForFinished(600000));
        QVERIFY2(py.exitCode() == 0, py.readAllStandardError().constData());
        std::vector<float> ort(2000);
        std::ifstream of(outPath.toStdString(), std::ios::binary);
        of.read(reinterpret_cast<char*>(ort.data()), std::streamsize(ort.size() * sizeof(float)));
        QVERIFY(of.gcount() == std::streamsize(ort.size() * sizeof(float)));
        double worst = 0, largest = 0;
        for (size_t k = 0; k < ort.size(); ++k) {
            worst = std::max(worst, double(std::fabs(logits[k] - ort[k])));
            largest = std::max(largest, double(std::fabs(ort[k])));
        }
        qInfo("largest |logit| %.3f, largest |Kiln - onnxruntime| %.3g", largest, worst);
        QVERIFY2(worst <= 1e-4, qPrintable(QString::number(worst, 'g', 3)));
    }
};

QTEST_GUILESS_MAIN(TestPretrainedEfficientNet)
#include "tst_pretrained_efficientnet.moc"
