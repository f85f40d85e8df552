// SPDX-License-Identifier: Apache-2.0
// The memory assistant against real CPU plans: predicted parameters, gradients, optimizer state
// and activations are within 15 % of what a compiled plan and optimizer actually hold, the
// largest batch for a budget fits and one more sample does not, what 16-bit precision and CUDA
// change in the prediction, and the OOM error's parameters.
#include <QtTest>

#include <cmath>
#include <string>

#include "engine/exec/memory_assistant.h"
#include "engine/exec/param_store.h"
#include "engine/exec/plan.h"
#include "engine/io/project.h"
#include "engine/ops/model.h"
#include "engine/optim/optimizer.h"

using namespace kiln::engine;
using namespace kiln::engine::exec;

namespace {

ops::ModelInfo buildModel(const std::string& nodes) {
    std::string text = R"({"format": "kiln-project", "version": 2, "graph": {"nodes": )" + nodes + "}}";
    auto p = io::parseProject(text, "mem.kiln");
    if (!p.ok()) qFatal("parseProject: %s", p.error().toString().c_str());
    auto m = ops::analyzeModel(p->graph);
    if (!m.ok()) qFatal("analyzeModel: %s", m.error().toString().c_str());
    return std::move(m).value();
}

const char* kCnn = R"([
  {"name": "image", "op": "Input", "attrs": {"shape": [16, 16, 3]}},
  {"name": "conv", "op": "Conv2D", "inputs": ["image"], "attrs": {"filters": 16, "kernel_size": 3, "padding": "same"}},
  {"name": "bn", "op": "BatchNormalization", "inputs": ["conv"]},
  {"name": "relu", "op": "ReLU", "inputs": ["bn"]},
  {"name": "pool", "op": "MaxPooling2D", "inputs": ["relu"]},
  {"name": "conv2", "op": "Conv2D", "inputs": ["pool"], "attrs": {"filters": 32, "kernel_size": 3, "padding": "same", "activation": "relu"}},
  {"name": "drop", "op": "Dropout", "inputs": ["conv2"], "attrs": {"rate": 0.3}},
  {"name": "flat", "op": "Flatten", "inputs": ["drop"]},
  {"name": "logits", "op": "Dense", "inputs": ["flat"], "attrs": {"units": 10}}
])";

const char* kMlp = R"([
  {"name": "x", "op": "Input", "attrs": {"shape": [784]}},
  {"name": "h1", "op": "Dense", "inputs": ["x"], "attrs": {"units": 256, "activation": "relu"}},
  {"name": "h2", "op": "Dense", "inputs": ["h1"], "attrs": {"units": 128, "activation": "relu"}},
  {"name": "logits", "op": "Dense", "inputs": ["h2"], "attrs": {"units": 10}}
])";

MemoryOptions memOptions(int64_t batch, const char* optimizer) {
    MemoryOptions o;
    o.batch = batch;
    o.optimizer.type = optimizer;
    if (std::string(optimizer) == "sgd") o.optimizer.momentum = 0.9;
    exec::LossSpec l;
    l.type = "SparseCategoricalCrossentropy";
    l.output = "logits";
    l.attrs.set("from_logits", true);
    l.targetShape = Shape{};
    o.losses = {l};
    return o;
}

// What a real CPU training setup holds: arena + parameters + gradients + optimizer state.
uint64_t actualBytes(const ops::ModelInfo& m, const MemoryOptions& o) {
    ThreadPool pool(1);
    auto store = exec::ParamStore::create(m, 1);
    exec::CompileOptions co;
    co.batch = o.batch;
    co.losses = o.losses;
    auto plan = exec::Plan::compile(m, store, co, pool);
    if (!plan.ok()) qFatal("compile: %s", plan.error().toString().c_str());
    optim::Optimizer opt(o.optimizer);
    uint64_t params = 0;
    for (auto& p : store.params()) {
        params += p.value.bytes();
        if (p.trainable) {
            params += p.grad.bytes();
            opt.addParameter(p.value.data<float>(), p.grad.data<float>(), p.value.numel());
        }
    }
    return (*plan)->stats().arenaBytes + params + static_cast<uint64_t>(opt.stateSize()) * 4;
}

}  // namespace

class TestMemoryAssistant : public QObject {
    Q_OBJECT

private slots:
    void predictionMatchesPlan_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("batch");
        QTest::addColumn<QString>("optimizer");
        QTest::newRow("cnn-32-sgd") << "cnn" << 32 << "sgd";
        QTest::newRow("cnn-100-adam") << "cnn" << 100 << "adam";
        QTest::newRow("mlp-128-adam") << "mlp" << 128 << "adam";
        QTest::newRow("mlp-7-sgd") << "mlp" << 7 << "sgd";
    }
    void predictionMatchesPlan() {
        QFETCH(QString, model);
        QFETCH(int, batch);
        QFETCH(QString, optimizer);
        auto m = buildModel(model == "cnn" ? kCnn : kMlp);
        auto o = memOptions(batch, optimizer == "sgd" ? "sgd" : "adam");
        auto e = estimateMemory(m, o);
        QVERIFY(e.ok());
        const double actual = double(actualBytes(m, o));
        const double predicted = double(e->total());
        QVERIFY2(std::abs(predicted - actual) <= 0.15 * actual,
                 qPrintable(QStringLiteral("predicted %1, actual %2").arg(predicted).arg(actual)));
        QVERIFY(e->gradients > 0 && e->optimizerState > 0 && e->activations > 0);
        QCOMPARE(e->optimizerState, optimizer == "sgd" ? e->gradients : 2 * e->gradients);
    }

    // Kiln keeps values and gradients in fp32 at every precision; 16 bits only stage the inputs and
    // weights of Dense/Conv2D inside the CUDA kernel workspace, and the prediction says exactly that.
    void halfPrecisionKeepsFp32Activations() {
        auto m = buildModel(kCnn);
        auto o = memOptions(64, "adam");
        auto fp32 = estimateMemory(m, o);
        o.precision = Precision::Bf16;
        auto bf16 = estimateMemory(m, o);
        QVERIFY(fp32.ok() && bf16.ok());
        QCOMPARE(bf16->activations, fp32->activations);
        QCOMPARE(bf16->lowPrecisionCopy, uint64_t{0});  // the CPU has no 16-bit path
        QCOMPARE(bf16->total(), fp32->total());

        // CUDA, an MLP whose first layer stages a large input in 16 bits: the staging is the only
        // difference, and it is what the kernel workspace grows by.
        auto mlp = buildModel(kMlp);
        auto c = memOptions(512, "adam");
        c.cuda = true;
        auto c32 = estimateMemory(mlp, c);
        c.precision = Precision::Fp16;
        auto c16 = estimateMemory(mlp, c);
        QVERIFY(c32.ok() && c16.ok());
        QCOMPARE(c16->activations, c32->activations);
        QCOMPARE(c32->lowPrecisionCopy, uint64_t{0});
        // 512x784 inputs and 784x256 weights in 16 bits, 256-byte aligned, in 2 MiB device blocks.
        QVERIFY(c16->lowPrecisionCopy > 0);
        QVERIFY(c16->lowPrecisionCopy + c16->workspace - (uint64_t{32} << 20) >=
                uint64_t{2} * (512 * 784 + 784 * 256));
        QCOMPARE(c16->total(), c32->total() + c16->lowPrecisionCopy);
        QVERIFY(c32->workspace >= (32u << 20));          // cuBLASLt
        QCOMPARE(c32->convWorkspaceLimit, uint64_t{0});  // no convolution
        // Device blocks come in the allocator's size classes.
        QCOMPARE(c32->parameters % 512, uint64_t{0});
        QCOMPARE(c32->activations % (2u << 20), uint64_t{0});

        // A CNN on CUDA: the cuDNN workspace is a separate, bounded figure outside total().
        auto cc = memOptions(64, "adam");
        cc.cuda = true;
        auto cnn = estimateMemory(m, cc);
        QVERIFY(cnn.ok());
        QCOMPARE(cnn->convWorkspaceLimit, uint64_t{256} << 20);
        QCOMPARE(cnn->totalWithConvWorkspace(), cnn->total() + (uint64_t{256} << 20));
    }

    // On CUDA the largest batch leaves room for the cuDNN workspace limit.
    void largestBatchOnCudaCountsConvWorkspace() {
        auto m = buildModel(kCnn);
        auto o = memOptions(1, "sgd");
        o.cuda = true;
        const uint64_t budget = 400ull << 20;
        auto b = largestBatch(m, o, budget);
        QVERIFY2(b.ok(), b.ok() ? "" : b.error().toString().c_str());
        o.batch = *b;
        auto e = estimateMemory(m, o);
        QVERIFY(e.ok());
        QVERIFY(e->totalWithConvWorkspace() <= budget);
        QVERIFY(e->total() + (200ull << 20) <= budget);
        o.batch = *b + 64;  // 2 MiB rounding makes single samples invisible; a few dozen are not
        QVERIFY(estimateMemory(m, o)->totalWithConvWorkspace() > budget);
    }

    void largestBatchFits() {
        auto m = buildModel(kCnn);
        auto o = memOptions(1, "sgd");
        const uint64_t budget = 24ull << 20;
        auto b = largestBatch(m, o, budget);
        QVERIFY(b.ok());
        QVERIFY(*b > 8);
        o.batch = *b;
        QVERIFY(estimateMemory(m, o)->total() <= budget);
        o.batch = *b + 1;
        QVERIFY(estimateMemory(m, o)->total() > budget);
        // And the real plan at that batch is within the budget's tolerance.
        o.batch = *b;
        QVERIFY(double(actualBytes(m, o)) <= 1.15 * double(budget));
    }

    void tooSmallBudgetIsOutOfMemory() {
        auto m = buildModel(kMlp);
        auto b = largestBatch(m, memOptions(1, "adam"), 100000);
        QVERIFY(!b.ok());
        QCOMPARE(b.error().code, ErrorCode::OutOfMemory);
        QCOMPARE(b.error().param("cap"), std::string("100000"));
    }

    void outOfMemoryErrorParams() {
        MemoryEstimate e;
        e.batch = 256;
        e.activations = 3ull << 30;
        Error err = outOfMemoryError(1ull << 30, 70ull << 30, 72ull << 30, "cuda:0", &e, 128);
        QCOMPARE(err.code, ErrorCode::OutOfMemory);
        QCOMPARE(err.param("requested"), std::to_string(1ull << 30));
        QCOMPARE(err.param("suggested_batch"), std::string("128"));
        QCOMPARE(err.param("predicted"), std::to_string(3ull << 30));
        QVERIFY(err.message.find("batch size 128 would fit") != std::string::npos);
        QCOMPARE(formatBytes(1536ull << 20), std::string("1.50 GiB"));
    }

    void precisionNames() {
        QVERIFY(parsePrecision("BF16").ok());
        QCOMPARE(*parsePrecision("mixed_float16"), Precision::Fp16);
        QVERIFY(!parsePrecision("fp8").ok());
    }
};

QTEST_APPLESS_MAIN(TestMemoryAssistant)
#include "tst_memory_assistant.moc"
