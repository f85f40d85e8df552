// SPDX-License-Identifier: Apache-2.0
// Mixed precision on the GPU: an MLP and a small CNN trained in fp32, fp16 (dynamic loss scaling,
// fp32 master weights) and bf16 all converge, to final losses close to each other; fp32 CUDA
// training follows the CPU plan and optimizer step by step; the fp16 scaler skips a step whose
// gradients are not finite.
#include <QtTest>

#include "cuda_test_models.h"
#include "engine/optim/optimizer.h"
#ifdef KILN_HAVE_CUDA
#include "engine/backends/cuda/cuda_device.h"
#include "engine/backends/cuda/cuda_plan.h"
#include "engine/backends/cuda/dnn.h"
#endif

using namespace kiln::engine;
using namespace kiln::test;

namespace {
const char* kMlp = R"([{"name": "x", "op": "Input", "attrs": {"shape": [16]}},
  {"name": "h", "op": "Dense", "inputs": ["x"], "attrs": {"units": 64, "activation": "relu"}},
  {"name": "h2", "op": "Dense", "inputs": ["h"], "attrs": {"units": 64, "activation": "gelu"}},
  {"name": "out", "op": "Dense", "inputs": ["h2"], "attrs": {"units": 4}}])";
const char* kCnn = R"([{"name": "x", "op": "Input", "attrs": {"shape": [8, 8, 2]}},
  {"name": "c", "op": "Conv2D", "inputs": ["x"], "attrs": {"filters": 8, "kernel_size": 3, "padding": "same", "use_bias": false}},
  {"name": "bn", "op": "BatchNormalization", "inputs": ["c"]},
  {"name": "r", "op": "ReLU", "inputs": ["bn"]},
  {"name": "g", "op": "GlobalAveragePooling2D", "inputs": ["r"]},
  {"name": "out", "op": "Dense", "inputs": ["g"], "attrs": {"units": 4}}])";

// One batch of a fixed learnable task with 4 classes (two bits), batch 64, varying with `step`.
// MLP: the bits are the signs of the first two features. CNN: the bits are the signs of a
// per-image offset of channel 0 and channel 1 (±0.5 under uniform noise of ±0.5), which a
// convolution followed by global average pooling can see; a label read off a single pixel
// would not survive the pooling.
void makeBatch(bool cnn, int64_t width, int step, std::vector<float>& x, std::vector<float>& y) {
    const uint64_t stream = static_cast<uint64_t>(step % 20);
    x = makeData(static_cast<size_t>(64 * width), stream);
    y.assign(64, 0.0f);
    if (!cnn) {
        for (size_t i = 0; i < 64; ++i)
            y[i] = static_cast<float>((x[i * width] > 0 ? 1 : 0) + (x[i * width + 1] > 0 ? 2 : 0));
        return;
    }
    const auto bits = makeData(64, 100 + stream, 4);
    for (size_t i = 0; i < 64; ++i) {
        const int label = static_cast<int>(bits[i]);
        y[i] = static_cast<float>(label);
        for (int64_t p = 0; p < width; p += 2) {
            float* px = &x[i * static_cast<size_t>(width) + static_cast<size_t>(p)];
            px[0] = 0.5f * px[0] + ((label & 1) ? 0.5f : -0.5f);
            px[1] = 0.5f * px[1] + ((label & 2) ? 0.5f : -0.5f);
        }
    }
}
}  // namespace

class TestCudaMixedPrecision : public QObject {
    Q_OBJECT

#ifdef KILN_HAVE_CUDA
    // Trains 150 Adam steps on a fixed learnable task; returns {first loss, mean of the last 10
    // losses}.
    std::pair<double, double> train(const char* nodes, Precision precision) {
        auto m = buildModel(nodes);
        auto store = exec::ParamStore::create(m, 1);
        auto ctx = cuda::DeviceContext::create(0);
        if (!ctx.ok()) qFatal("%s", ctx.error().toString().c_str());
        cuda::CudaPlanOptions o;
        o.batch = 64;
        o.losses = {lossSpec("SparseCategoricalCrossentropy", "out", Shape{})};
        o.precision = precision;
        ThreadPool pool(1);
        auto plan = cuda::CudaPlan::compile(m, store, o, **ctx, pool);
        if (!plan.ok()) qFatal("%s", plan.error().toString().c_str());
        optim::OptimizerConfig oc;
        oc.type = "adam";
        oc.learningRate = 3e-3;
        auto opt = cuda::CudaOptimizer::create(oc, **plan);
        if (!opt.ok()) qFatal("%s", opt.error().toString().c_str());
        optim::LossScalerConfig sc;
        sc.growthInterval = 50;
        optim::LossScaler scaler(sc);
        const int64_t width = m.nodes[static_cast<size_t>(m.inputs[0])].output.numelFrom(1);
        const bool cnn = nodes == kCnn;
        double first = 0, tail = 0;
        std::vector<float> x, y;
        for (int s = 0; s < 150; ++s) {
            makeBatch(cnn, width, s, x, y);
            if (!(*plan)->setInput(0, x.data()).ok() || !(*plan)->setTarget(0, y.data()).ok())
                qFatal("upload");
            if (precision == Precision::Fp16) {
                auto applied = cuda::scaledTrainStep(**plan, **opt, scaler, 3e-3, static_cast<uint64_t>(s));
                if (!applied.ok()) qFatal("%s", applied.error().toString().c_str());
            } else {
                auto st = (*plan)->trainStep(static_cast<uint64_t>(s));
                if (!st.ok()) qFatal("%s", st.error().toString().c_str());
                st = (*opt)->step(3e-3);
                if (!st.ok()) qFatal("%s", st.error().toString().c_str());
            }
            auto l = (*plan)->losses();
            if (!l.ok()) qFatal("%s", l.error().toString().c_str());
            if (s == 0) first = (*l)[0];
            if (s >= 140) tail += (*l)[0] / 10.0;
        }
        for (const auto& note : cuda::convolutionNotes()) qInfo("%s", note.c_str());
        return {first, tail};
    }
#endif

private slots:
    void converges_data() {
        QTest::addColumn<QString>("model");
        QTest::newRow("mlp") << "mlp";
        QTest::newRow("cnn") << "cnn";
    }
    void converges() {
#ifdef KILN_HAVE_CUDA
        if (cuda::deviceCount() == 0) QSKIP("no CUDA device");
        QFETCH(QString, model);
        const char* nodes = model == "mlp" ? kMlp : kCnn;
        auto fp32 = train(nodes, Precision::Fp32);
        auto fp16 = train(nodes, Precision::Fp16);
        auto bf16 = train(nodes, Precision::Bf16);
        QVERIFY2(fp32.second < 0.6 * fp32.first,
                 qPrintable(QStringLiteral("fp32 %1 -> %2").arg(fp32.first).arg(fp32.second)));
        QVERIFY2(fp16.second < 0.6 * fp16.first,
                 qPrintable(QStringLiteral("fp16 %1 -> %2").arg(fp16.first).arg(fp16.second)));
        QVERIFY2(bf16.second < 0.6 * bf16.first,
                 qPrintable(QStringLiteral("bf16 %1 -> %2").arg(bf16.first).arg(bf16.second)));
        QVERIFY(std::abs(fp16.second - fp32.second) < 0.15 * fp32.first);
        QVERIFY(std::abs(bf16.second - fp32.second) < 0.15 * fp32.first);
#else
        QSKIP("built without CUDA");
#endif
    }

    // fp32 CUDA training (no TF32) against the CPU plan and optimizer from the same weights on the
    // same batches: the losses agree step by step, and after the first update the weights, BatchNorm
    // moving statistics included, agree too. A failure names the step or the parameter where the
    // two part, which a convergence check alone cannot.
    void matchesCpuStepByStep_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("optimizer");
        QTest::newRow("mlp-sgd") << "mlp"
                                 << "sgd";
        QTest::newRow("mlp-adam") << "mlp"
                                  << "adam";
        QTest::newRow("cnn-sgd") << "cnn"
                                 << "sgd";
        QTest::newRow("cnn-adam") << "cnn"
                                  << "adam";
    }
    void matchesCpuStepByStep() {
#ifdef KILN_HAVE_CUDA
        if (cuda::deviceCount() == 0) QSKIP("no CUDA device");
        QFETCH(QString, model);
        QFETCH(QString, optimizer);
        const bool cnn = model == "cnn";
        auto m = buildModel(cnn ? kCnn : kMlp);
        const std::vector<exec::LossSpec> losses{lossSpec("SparseCategoricalCrossentropy", "out", Shape{})};
        ThreadPool pool(1);
        auto cpuStore = exec::ParamStore::create(m, 1);
        auto gpuStore = exec::ParamStore::create(m, 1);
        exec::CompileOptions co;
        co.batch = 64;
        co.losses = losses;
        auto cpu = exec::Plan::compile(m, cpuStore, co, pool);
        QVERIFY2(cpu.ok(), cpu.ok() ? "" : cpu.error().toString().c_str());
        auto ctx = cuda::DeviceContext::create(0);
        QVERIFY2(ctx.ok(), ctx.ok() ? "" : ctx.error().toString().c_str());
        cuda::CudaPlanOptions go;
        go.batch = 64;
        go.losses = losses;
        go.tf32 = false;
        auto gpu = cuda::CudaPlan::compile(m, gpuStore, go, **ctx, pool);
        QVERIFY2(gpu.ok(), gpu.ok() ? "" : gpu.error().toString().c_str());
        optim::OptimizerConfig oc;
        oc.type = optimizer.toStdString();
        const double lr = optimizer == "sgd" ? 0.05 : 3e-3;
        oc.learningRate = lr;
        if (optimizer == "sgd") oc.momentum = 0.9;
        optim::Optimizer cpuOpt(oc);
        for (auto& p : cpuStore.params())
            if (p.trainable)
                cpuOpt.addParameter(p.value.data<float>(), p.grad.data<float>(), p.value.numel(),
                                    p.lrMultiplier, p.decay);
        auto gpuOpt = cuda::CudaOptimizer::create(oc, **gpu);
        QVERIFY2(gpuOpt.ok(), gpuOpt.ok() ? "" : gpuOpt.error().toString().c_str());
        const int64_t width = m.nodes[static_cast<size_t>(m.inputs[0])].output.numelFrom(1);
        std::vector<float> x, y;
        double firstLoss = 0, tailLoss = 0;
        for (int s = 0; s < 30; ++s) {
            makeBatch(cnn, width, s, x, y);
            std::memcpy((*cpu)->input(size_t{0}), x.data(), x.size() * 4);
            std::memcpy((*cpu)->target(0), y.data(), y.size() * 4);
            QVERIFY((*gpu)->setInput(0, x.data()).ok());
            QVERIFY((*gpu)->setTarget(0, y.data()).ok());
            QVERIFY((*cpu)->trainStep(static_cast<uint64_t>(s)).ok());
            auto st = (*gpu)->trainStep(static_cast<uint64_t>(s));
            QVERIFY2(st.ok(), st.ok() ? "" : st.error().toString().c_str());
            auto gl = (*gpu)->losses();
            QVERIFY2(gl.ok(), gl.ok() ? "" : gl.error().toString().c_str());
            const double c = (*cpu)->loss(0), g = (*gl)[0];
            // Rounding differences compound through the updates; a wrong kernel or a stale
            // parameter shows at once and far beyond these bounds.
            const double tol = (s < 5 ? 1e-4 : 2e-3) * std::max(1.0, std::abs(c));
            QVERIFY2(std::abs(c - g) <= tol,
                     qPrintable(QStringLiteral("step %1: CPU loss %2, CUDA loss %3").arg(s).arg(c).arg(g)));
            if (s == 0) firstLoss = c;
            if (s >= 25) tailLoss += c / 5.0;
            cpuOpt.step(lr, pool);
            st = (*gpuOpt)->step(lr);
            QVERIFY2(st.ok(), st.ok() ? "" : st.error().toString().c_str());
            if (s == 0) {
                QVERIFY((*gpu)->downloadParams().ok());
                for (size_t i = 0; i < cpuStore.params().size(); ++i) {
                    const auto& a = cpuStore.params()[i];
                    const auto& b = gpuStore.params()[i];
                    // Adam moves every weight by about lr whatever the gradient's size, so a gradient
                    // that is zero up to rounding may move either way: bound by a fraction of lr.
                    const double d =
                        relDiff(a.value.data<float>(), b.value.data<float>(), size_t(a.value.numel()));
                    const double bound = optimizer == "sgd" ? 1e-4 : 0.5 * lr;
                    QVERIFY2(d < bound, qPrintable(QStringLiteral("after the first update, %1 differs by %2")
                                                       .arg(QString::fromStdString(a.name))
                                                       .arg(d)));
                }
            }
        }
        // And the run learns (both sides, since they agree): the last 5 losses average well below
        // the first.
        QVERIFY2(tailLoss < 0.8 * firstLoss,
                 qPrintable(QStringLiteral("loss %1 -> %2 in 30 steps").arg(firstLoss).arg(tailLoss)));
#else
        QSKIP("built without CUDA");
#endif
    }

    // A step whose gradients are not finite (a NaN in the batch) leaves the weights untouched and
    // halves the loss scale; the next clean step trains again.
    void nonFiniteStepIsSkipped() {
#ifdef KILN_HAVE_CUDA
        if (cuda::deviceCount() == 0) QSKIP("no CUDA device");
        auto m = buildModel(kMlp);
        auto store = exec::ParamStore::create(m, 1);
        auto ctx = cuda::DeviceContext::create(0);
        QVERIFY(ctx.ok());
        cuda::CudaPlanOptions o;
        o.batch = 8;
        o.losses = {lossSpec("SparseCategoricalCrossentropy", "out", Shape{})};
        o.precision = Precision::Fp16;
        ThreadPool pool(1);
        auto plan = cuda::CudaPlan::compile(m, store, o, **ctx, pool);
        QVERIFY(plan.ok());
        optim::OptimizerConfig oc;
        oc.type = "sgd";
        auto opt = cuda::CudaOptimizer::create(oc, **plan);
        QVERIFY(opt.ok());
        optim::LossScaler scaler;
        auto x = makeData(8 * 16, 1);
        auto y = makeData(8, 2, 4);
        QVERIFY((*plan)->setTarget(0, y.data()).ok());
        x[5] = std::nanf("");
        QVERIFY((*plan)->setInput(0, x.data()).ok());
        auto before = store.params()[0].value.clone();
        auto applied = cuda::scaledTrainStep(**plan, **opt, scaler, 0.1, 0);
        QVERIFY(applied.ok());
        QVERIFY(!*applied);
        QCOMPARE(scaler.scale(), 32768.0f);
        QCOMPARE(scaler.skippedSteps(), int64_t{1});
        QVERIFY((*plan)->downloadParams().ok());
        QCOMPARE(std::memcmp(before.raw(), store.params()[0].value.raw(), before.bytes()), 0);
        x[5] = 0.5f;
        QVERIFY((*plan)->setInput(0, x.data()).ok());
        applied = cuda::scaledTrainStep(**plan, **opt, scaler, 0.1, 1);
        QVERIFY(applied.ok() && *applied);
        QVERIFY((*plan)->downloadParams().ok());
        QVERIFY(std::memcmp(before.raw(), store.params()[0].value.raw(), before.bytes()) != 0);
#else
        QSKIP("built without CUDA");
#endif
    }
};

QTEST_APPLESS_MAIN(TestCudaMixedPrecision)
#include "tst_cuda_mixed_precision.moc"
