// SPDX-License-Identifier: Apache-2.0
// Mixed precision on the GPU: an MLP and a small CNN trained in fp32, fp16 (dynamic loss scaling,
// fp32 master weights) and bf16 all converge, to final losses close to each other; the fp16
// scaler skips a step whose gradients are not finite.
#include <QtTest>

#include "cuda_test_models.h"
#ifdef KILN_HAVE_CUDA
#include "engine/backends/cuda/cuda_device.h"
#include "engine/backends/cuda/cuda_plan.h"
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
}  // namespace

class TestCudaMixedPrecision : public QObject {
    Q_OBJECT

#ifdef KILN_HAVE_CUDA
    // Trains 150 Adam steps on a fixed learnable task (labels from the sign pattern of the input);
    // returns {first loss, mean of the last 10 losses}.
    std::pair<double, double> train(const char* nodes, train::Precision precision) {
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
        double first = 0, tail = 0;
        for (int s = 0; s < 150; ++s) {
            auto x = makeData(static_cast<size_t>(64 * width), static_cast<uint64_t>(s % 20));
            std::vector<float> y(64);
            for (size_t i = 0; i < 64; ++i)
                y[i] = static_cast<float>((x[i * width] > 0 ? 1 : 0) + (x[i * width + 1] > 0 ? 2 : 0));
            if (!(*plan)->setInput(0, x.data()).ok() || !(*plan)->setTarget(0, y.data()).ok())
                qFatal("upload");
            if (precision == train::Precision::Fp16) {
                auto applied = cuda::scaledTrainStep(**plan, **opt, scaler, 3e-3, static_cast<uint64_t>(s));
                if (!applied.ok()) qFatal("%s", applied.error().toString().c_str());
            } else {
                if (!(*plan)->trainStep(static_cast<uint64_t>(s)).ok() || !(*opt)->step(3e-3).ok())
                    qFatal("step");
            }
            auto l = (*plan)->losses();
            if (!l.ok()) qFatal("%s", l.error().toString().c_str());
            if (s == 0) first = (*l)[0];
            if (s >= 140) tail += (*l)[0] / 10.0;
        }
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
        auto fp32 = train(nodes, train::Precision::Fp32);
        auto fp16 = train(nodes, train::Precision::Fp16);
        auto bf16 = train(nodes, train::Precision::Bf16);
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
        o.precision = train::Precision::Fp16;
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
