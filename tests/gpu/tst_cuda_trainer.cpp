// SPDX-License-Identifier: Apache-2.0
// The Trainer on a CUDA device, as the studio and kiln-train drive it: fp32 training follows the
// CPU run epoch by epoch; callbacks see (and may change) the device's weights; a training state
// saved on the GPU resumes on the CPU; mixed float16 and bfloat16 converge; optimizers without a
// device kernel update on the host; running out of the memory limit is a clean OutOfMemory
// error with the predicted peak and a batch size that fits; the epoch events' gradient histograms
// equal the CPU's. The device tests skip without a GPU;
// the settings check runs in every CUDA build.
#include <QtTest>

#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "cuda_test_models.h"
#include "engine/core/rng.h"
#include "engine/train/config.h"
#include "engine/train/trainer.h"
#ifdef KILN_HAVE_CUDA
#include "engine/backends/cuda/cuda_backend.h"
#include "engine/backends/cuda/cuda_device.h"
#endif

using namespace kiln::engine;
using namespace kiln::engine::train;
using nlohmann::json;

namespace {

const char* kCnn = "[{\"name\": \"x\", \"op\": \"Input\", \"attrs\": {\"shape\": [8, 8, 2]}},\n"
    "  {\"name\": \"c\", \"op\": \"Conv2D\", \"inputs\": [\"x\"], \"attrs\": {\"filters\": 8, \"kernel_size\": 3, \"padding\": \"same\", \"use_bias\": false}},\n"
    "  {\"name\": \"bn\", \"op\": \"BatchNormalization\", \"inputs\": [\"c\"]},\n"
    "  {\"name\": \"r\", \"op\": \"ReLU\", \"inputs\": [\"bn\"]},\n"
    "  {\"name\": \"g\", \"op\": \"GlobalAveragePooling2D\", \"inputs\": [\"r\"]},\n"
    "  {\"name\": \"h\", \"op\": \"Dense\", \"inputs\": [\"g\"], \"attrs\": {\"units\": 16, \"activation\": \"relu\"}},\n"
    "  {\"name\": \"out\", \"op\": \"Dense\", \"inputs\": [\"h\"], \"attrs\": {\"units\": 4}}]";

// 4 classes: the signs of a per-image offset of channel 0 and channel 1 under uniform noise.
DataBundle offsets(int64_t n) {
    std::vector<float> x(static_cast<size_t>(n * 128)), y(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
        const int label = static_cast<int>(i % 4);
        y[static_cast<size_t>(i)] = static_cast<float>(label);
        for (int64_t p = 0; p < 128; p += 2) {
            float* px = &x[static_cast<size_t>(i * 128 + p)];
            px[0] = rng::uniform(3, static_cast<uint64_t>(i), static_cast<uint64_t>(p)) - 0.5f + ((label & 1) ? 0.5f : -0.5f);
            px[1] = rng::uniform(4, static_cast<uint64_t>(i), static_cast<uint64_t>(p)) - 0.5f + ((label & 2) ? 0.5f : -0.5f);
        }
    }
    data::Column xc{"x", Shape{8, 8, 2}, std::move(x)};
    data::Column yc{"label", Shape{}, std::move(y)};
    DataBundle b;
    auto all = data::InMemoryDataset::create(n, {std::move(xc), std::move(yc)});
    if (!all.ok()) qFatal("dataset: %s", all.error().toString().c_str());
    const int64_t nVal = n / 5;
    std::vector<int64_t> tr, va;
    for (int64_t i = 0; i < n; ++i) (i < n - nVal ? tr : va).push_back(i);
    b.train = all->subset(tr).value();
    b.validation = all->subset(va).value();
    return b;
}

TrainingConfig config(const ops::ModelInfo& m, const std::string& extra) {
    auto c = parseTrainingConfig(json::parse("{\"epochs\": 3, \"batch_size\": 32, \"seed\": 5, \"shuffle\": true,\n"
    "        \"optimizer\": {\"type\": \"Adam\", \"learning_rate\": 0.01},\n"
    "        \"loss\": {\"type\": \"SparseCategoricalCrossentropy\", \"from_logits\": true}, \"metrics\": [\"accuracy\"]" +
                                             extra + "}"),
                                 m.graph);
    if (!c.ok()) qFatal("config: %s", c.error().toString().c_str());
    return std::move(c).value();
}

bool haveDevice() {
#ifdef KILN_HAVE_CUDA
    return cuda::deviceCount() > 0;
#else
    return false;
#endif
}

Result<std::unique_ptr<Trainer>> make(const ops::ModelInfo& m, const TrainingConfig& c, ThreadPool& pool, int64_t n = 320) {
#ifdef KILN_HAVE_CUDA
    exec::BackendFactory f;
    if (c.device != "cpu") {
        auto o = cuda::cudaBackendOptions(c.device, c.memoryLimit);
        if (!o.ok()) return o.error();
        f = cuda::cudaBackendFactory(*o);
    }
    return Trainer::create(m, c, offsets(n), pool, f);
#else
    return Trainer::create(m, c, offsets(n), pool);
#endif
}

// Records the weights a callback sees at the end of each epoch.
class Snoop final : public Callback {
public:
    std::string type() const override { return "Snoop"; }
    Status onEpochEnd(TrainControl& c, int, const Logs&) override {
        double s = 0;
        for (const auto& p : c.parameters()->params())
            for (int64_t i = 0; i < p.value.numel(); ++i) s += std::abs(p.value.data<float>()[i]);
        sums.push_back(s);
        return {};
    }
    std::vector<double> sums;
};

// Settings added to the configuration (plain strings: moc misreads some raw strings).
const char* kOnGpu = ", \"device\": \"cuda:0\"";
const char* kOnGpuPrecision = ", \"device\": \"cuda:0\", \"precision\": \"";
const char* kRmsProp = ", \"optimizer\": {\"type\": \"RMSprop\", \"learning_rate\": 0.005}";
const char* kOnGpuLimited = ", \"device\": \"cuda:0\", \"memory_limit\": \"200MiB\"";
const char* kWide = "[{\"name\": \"x\", \"op\": \"Input\", \"attrs\": {\"shape\": [8, 8, 2]}},\n"
    "          {\"name\": \"f\", \"op\": \"Flatten\", \"inputs\": [\"x\"]},\n"
    "          {\"name\": \"a\", \"op\": \"Dense\", \"inputs\": [\"f\"], \"attrs\": {\"units\": 2048, \"activation\": \"relu\"}},\n"
    "          {\"name\": \"b\", \"op\": \"Dense\", \"inputs\": [\"a\"], \"attrs\": {\"units\": 2048, \"activation\": \"relu\"}},\n"
    "          {\"name\": \"out\", \"op\": \"Dense\", \"inputs\": [\"b\"], \"attrs\": {\"units\": 4}}]";

}  // namespace

class TestCudaTrainer : public QObject {
    Q_OBJECT

private slots:

    void fp32FollowsTheCpu() {
        if (!haveDevice()) QSKIP("no CUDA device");
        const auto m = kiln::test::buildModel(kCnn);
        ThreadPool pool(4);
        auto cpu = make(m, config(m, ""), pool);
        QVERIFY2(cpu.ok(), cpu.ok() ? "" : cpu.error().toString().c_str());
        auto gpuConfig = config(m, kOnGpu);
        auto gpu = make(m, gpuConfig, pool);
        QVERIFY2(gpu.ok(), gpu.ok() ? "" : gpu.error().toString().c_str());
        QCOMPARE((*gpu)->backend().device(), std::string("cuda:0"));
        auto snoop = std::make_unique<Snoop>();
        Snoop* seen = snoop.get();
        (*gpu)->addCallback(std::move(snoop));
        uint64_t peak = 0;
        auto a = (*cpu)->fit();
        auto b = (*gpu)->fit([&](const TrainEvent& e) { peak = std::max(peak, e.deviceMemory.peak); });
        QVERIFY2(a.ok(), a.ok() ? "" : a.error().toString().c_str());
        QVERIFY2(b.ok(), b.ok() ? "" : b.error().toString().c_str());
        QVERIFY(peak > 0);  // the events carry the device's memory
        for (size_t e = 0; e < a->history.size(); ++e) {
            const double la = a->history[e].train.loss, lb = b->history[e].train.loss;
            qInfo("epoch %zu: CPU loss %.6f, CUDA loss %.6f, val acc %.3f / %.3f", e + 1, la, lb,
                  a->history[e].validation->metric("accuracy"), b->history[e].validation->metric("accuracy"));
            // TF32 convolutions and a different summation order: close, not identical.
            QVERIFY2(std::abs(la - lb) <= 0.03 * std::abs(la) + 1e-3, qPrintable(QString("epoch %1").arg(e + 1)));
        }
        QVERIFY(b->history.back().train.loss < 0.6 * b->history.front().train.loss);
        QVERIFY(b->history.back().validation->metric("accuracy") > 0.9);
        QCOMPARE(seen->sums.size(), size_t(3));
        QVERIFY(seen->sums[0] != seen->sums[2]);  // the callback saw the weights move
        // After fit() the host holds the trained weights: they evaluate as well as on the device.
        auto again = (*gpu)->evaluate(*(*gpu)->data().validation);
        QVERIFY(again.ok());
        QVERIFY(std::abs(again->loss - b->history.back().validation->loss) < 1e-4);
    }

    void stateSavedOnGpuResumesOnCpu() {
        if (!haveDevice()) QSKIP("no CUDA device");
        const auto m = kiln::test::buildModel(kCnn);
        ThreadPool pool(4);
        QTemporaryDir tmp;
        const std::string dir = tmp.path().toStdString() + "/state";
        auto c = config(m, kOnGpu);
        c.epochs = 1;
        auto gpu = make(m, c, pool);
        QVERIFY(gpu.ok());
        QVERIFY((*gpu)->fit().ok());
        QVERIFY((*gpu)->saveState(dir).ok());
        auto cpuConfig = config(m, "");
        cpuConfig.epochs = 2;
        auto cpu = make(m, cpuConfig, pool);
        QVERIFY(cpu.ok());
        QVERIFY((*cpu)->restoreFrom(dir).ok());
        auto r = (*cpu)->fit();
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QCOMPARE(r->resumedFromStep, int64_t(8));  // 256 samples / 32
        QCOMPARE(r->history.size(), size_t(2));
        // Continued, not restarted: the second epoch starts from the GPU's trained weights.
        QVERIFY(r->history[1].train.loss <= r->history[0].train.loss * 1.05);
        // And back: a CPU state continues on the GPU.
        QVERIFY((*cpu)->saveState(dir).ok());
        auto c3 = c;
        c3.epochs = 3;
        auto gpu2 = make(m, c3, pool);
        QVERIFY(gpu2.ok());
        QVERIFY((*gpu2)->restoreFrom(dir).ok());
        auto r2 = (*gpu2)->fit();
        QVERIFY2(r2.ok(), r2.ok() ? "" : r2.error().toString().c_str());
        QCOMPARE(r2->history.size(), size_t(3));
    }

    void mixedPrecisionConverges_data() {
        QTest::addColumn<QString>("precision");
        QTest::newRow("fp16") << "mixed_float16";
        QTest::newRow("bf16") << "mixed_bfloat16";
    }
    void mixedPrecisionConverges() {
        if (!haveDevice()) QSKIP("no CUDA device");
        QFETCH(QString, precision);
        const auto m = kiln::test::buildModel(kCnn);
        ThreadPool pool(4);
        auto c = config(m, kOnGpuPrecision + precision.toStdString() + "\"");
        c.epochs = 4;
        auto t = make(m, c, pool);
        QVERIFY2(t.ok(), t.ok() ? "" : t.error().toString().c_str());
        auto r = (*t)->fit();
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        qInfo("%s: loss %.4f -> %.4f, skipped %lld", qPrintable(precision), r->history.front().train.loss,
              r->history.back().train.loss, static_cast<long long>(r->skippedSteps));
        QVERIFY(r->history.back().train.loss < 0.6 * r->history.front().train.loss);
        QVERIFY(r->history.back().validation->metric("accuracy") > 0.85);
        QVERIFY(r->skippedSteps <= 3);  // the scale settles within a few steps
    }

    // The epoch events' gradient histograms on the device are the true (unscaled) gradients: one
    // step from the same weights gives the CPU's gradient norms, in float32 and in mixed float16
    // (whose device gradients carry the loss scale until pullGradients divides it out).
    void gradientHistogramsMatchTheCpu_data() {
        QTest::addColumn<QString>("precision");
        QTest::newRow("fp32") << "float32";
        QTest::newRow("fp16") << "mixed_float16";
    }
    void gradientHistogramsMatchTheCpu() {
        if (!haveDevice()) QSKIP("no CUDA device");
        QFETCH(QString, precision);
        const auto m = kiln::test::buildModel(kCnn);
        ThreadPool pool(4);
        auto cpuConfig = config(m, "");
        cpuConfig.epochs = 1;
        cpuConfig.shuffle = false;
        auto gpuConfig = config(m, kOnGpuPrecision + precision.toStdString() + "\"");
        gpuConfig.epochs = 1;
        gpuConfig.shuffle = false;
        // 40 samples: 32 train in one step of batch 32, 8 validate.
        auto cpu = make(m, cpuConfig, pool, 40);
        auto gpu = make(m, gpuConfig, pool, 40);
        QVERIFY2(gpu.ok(), gpu.ok() ? "" : gpu.error().toString().c_str());
        QVERIFY(cpu.ok());
        std::vector<ParamHistogram> a, b;
        QVERIFY((*cpu)->fit([&](const TrainEvent& e) { if (e.kind == TrainEvent::Kind::Epoch) a = e.histograms; }).ok());
        QVERIFY((*gpu)->fit([&](const TrainEvent& e) { if (e.kind == TrainEvent::Kind::Epoch) b = e.histograms; }).ok());
        QCOMPARE(a.size(), b.size());
        QVERIFY(!a.empty());
        const double tol = precision == QLatin1String("float32") ? 0.03 : 0.08;
        for (size_t i = 0; i < a.size(); ++i) {
            QCOMPARE(b[i].name, a[i].name);
            QCOMPARE(b[i].gradients.num, a[i].gradients.num);
            if (a[i].gradients.num == 0) continue;
            const double na = std::sqrt(a[i].gradients.sumSquares), nb = std::sqrt(b[i].gradients.sumSquares);
            qInfo("%s %s: gradient norm CPU %.6g, CUDA %.6g", qPrintable(precision), a[i].name.c_str(), na, nb);
            QVERIFY2(std::abs(na - nb) <= tol * na + 1e-6, a[i].name.c_str());
            const double ma = std::max(std::abs(a[i].gradients.min), std::abs(a[i].gradients.max));
            const double mb = std::max(std::abs(b[i].gradients.min), std::abs(b[i].gradients.max));
            QVERIFY2(std::abs(ma - mb) <= tol * ma + 1e-6, a[i].name.c_str());
        }
    }

    void hostOptimizerFallback() {
        if (!haveDevice()) QSKIP("no CUDA device");
        const auto m = kiln::test::buildModel(kCnn);
        ThreadPool pool(4);
        const std::string opt = kRmsProp;
        auto cpuConfig = config(m, opt);
        auto gpuConfig = config(m, std::string(opt) + kOnGpu);
        auto cpu = make(m, cpuConfig, pool);
        auto gpu = make(m, gpuConfig, pool);
        QVERIFY2(gpu.ok(), gpu.ok() ? "" : gpu.error().toString().c_str());
        bool noted = false;
        for (const auto& line : (*gpu)->backend().describe()) noted = noted || line.find("host") != std::string::npos;
        QVERIFY(noted);
        auto a = (*cpu)->fit();
        auto b = (*gpu)->fit();
        QVERIFY(a.ok() && b.ok());
        const double la = a->history.back().train.loss, lb = b->history.back().train.loss;
        QVERIFY2(std::abs(la - lb) <= 0.05 * std::abs(la) + 2e-3, qPrintable(QString("%1 vs %2").arg(la).arg(lb)));
    }

    void outOfMemoryIsACleanError() {
        if (!haveDevice()) QSKIP("no CUDA device");
        // About 100 MiB of weights, gradients, Adam moments and library workspaces, and activations
        // of 8192 x 2048 floats (64 MiB) per layer: batch 8192 cannot fit under 200 MiB, 64 can.
        const auto m = kiln::test::buildModel(kWide);
        ThreadPool pool(4);
        auto c = config(m, kOnGpuLimited);
        c.batchSize = 8192;
        auto t = make(m, c, pool, 8192);
        QVERIFY(!t.ok());
        const Error& e = t.error();
        qInfo("%s", e.toString().c_str());
        QCOMPARE(e.code, ErrorCode::OutOfMemory);
        bool predicted = false, suggested = false;
        for (const auto& [k, v] : e.params) {
            predicted = predicted || k == "predicted";
            if (k == "suggested_batch") suggested = std::stoll(v) > 0 && std::stoll(v) < 8192;
        }
        QVERIFY(predicted);
        QVERIFY(suggested);
        // The process goes on, and the device is usable at the suggested size.
        auto small = make(m, config(m, kOnGpuLimited), pool, 64);
        QVERIFY2(small.ok(), small.ok() ? "" : small.error().toString().c_str());
    }

    void badMemoryLimitNamesTheField() {
#ifdef KILN_HAVE_CUDA
        auto o = cuda::cudaBackendOptions("cuda:0", "lots");
        QVERIFY(!o.ok());
        QCOMPARE(o.error().code, ErrorCode::ConfigError);
        QVERIFY(o.error().toString().find("training.memory_limit") != std::string::npos);
        auto fine = cuda::cudaBackendOptions("cuda:1", "80%");
        QVERIFY(fine.ok());
        QCOMPARE(fine->device, 1);
        QVERIFY(!cuda::cudaBackendOptions("cpu", "").ok());
#else
        QSKIP("built without CUDA");
#endif
    }
};

QTEST_GUILESS_MAIN(TestCudaTrainer)
#include "tst_cuda_trainer.moc"
