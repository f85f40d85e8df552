// SPDX-License-Identifier: Apache-2.0
// Data parallel on CPU threads: two replicas at batch B/2 reach the same weights as one replica at
// batch B (an MLP, and a CNN with synchronised BatchNorm), bucketing does not change results, and
// the in-process reducer sums correctly.
#include <QtTest>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "engine/core/rng.h"
#include "engine/io/project.h"
#include "engine/ops/model.h"
#include "engine/train/data_parallel.h"

using namespace kiln::engine;
using namespace kiln::engine::train;

namespace {

ops::ModelInfo buildModel(const std::string& nodes) {
    std::string text = R"({"format": "kiln-project", "version": 2, "graph": {"nodes": )" + nodes + "}}";
    auto p = io::parseProject(text, "dp.kiln");
    if (!p.ok()) qFatal("parseProject: %s", p.error().toString().c_str());
    auto m = ops::analyzeModel(p->graph);
    if (!m.ok()) qFatal("analyzeModel: %s", m.error().toString().c_str());
    return std::move(m).value();
}

const char* kMlp = R"([
  {"name": "x", "op": "Input", "attrs": {"shape": [12]}},
  {"name": "h1", "op": "Dense", "inputs": ["x"], "attrs": {"units": 32, "activation": "relu"}},
  {"name": "h2", "op": "Dense", "inputs": ["h1"], "attrs": {"units": 16, "activation": "tanh"}},
  {"name": "logits", "op": "Dense", "inputs": ["h2"], "attrs": {"units": 4}}
])";

const char* kCnn = R"([
  {"name": "image", "op": "Input", "attrs": {"shape": [8, 8, 3]}},
  {"name": "conv", "op": "Conv2D", "inputs": ["image"], "attrs": {"filters": 6, "kernel_size": 3, "padding": "same", "use_bias": false}},
  {"name": "bn", "op": "BatchNormalization", "inputs": ["conv"]},
  {"name": "relu", "op": "ReLU", "inputs": ["bn"]},
  {"name": "pool", "op": "MaxPooling2D", "inputs": ["relu"]},
  {"name": "conv2", "op": "Conv2D", "inputs": ["pool"], "attrs": {"filters": 8, "kernel_size": 3, "padding": "same"}},
  {"name": "bn2", "op": "BatchNormalization", "inputs": ["conv2"]},
  {"name": "relu2", "op": "ReLU", "inputs": ["bn2"]},
  {"name": "gap", "op": "GlobalAveragePooling2D", "inputs": ["relu2"]},
  {"name": "logits", "op": "Dense", "inputs": ["gap"], "attrs": {"units": 5}}
])";

DataParallelOptions options(int64_t batch, int64_t classes, bool syncBn, int64_t bucketFloats = 1 << 20) {
    DataParallelOptions o;
    o.globalBatch = batch;
    o.syncBatchNorm = syncBn;
    o.bucketFloats = bucketFloats;
    o.seed = 11;
    exec::LossSpec l;
    l.type = "SparseCategoricalCrossentropy";
    l.output = "logits";
    l.attrs.set("from_logits", true);
    l.targetShape = Shape{};
    o.losses = {l};
    o.optimizer.type = "sgd";
    o.optimizer.learningRate = 0.05;
    o.optimizer.momentum = 0.9;
    (void)classes;
    return o;
}

// Deterministic batches: inputs uniform in [-1, 1), labels in [0, classes).
struct Batches {
    std::vector<std::vector<float>> x, y;
};
Batches makeBatches(int steps, int64_t batch, int64_t rowFloats, int classes) {
    Batches b;
    for (int s = 0; s < steps; ++s) {
        std::vector<float> x(static_cast<size_t>(batch * rowFloats)), y(static_cast<size_t>(batch));
        for (size_t i = 0; i < x.size(); ++i)
            x[i] = 2.0f * rng::uniform(5, static_cast<uint64_t>(s), i) - 1.0f;
        for (size_t i = 0; i < y.size(); ++i)
            y[i] = static_cast<float>(rng::bits(6, static_cast<uint64_t>(s), i) %
                                      static_cast<uint32_t>(classes));
        b.x.push_back(std::move(x));
        b.y.push_back(std::move(y));
    }
    return b;
}

// Trains `replicas` in-process replicas on the batches; returns every parameter, concatenated.
std::vector<float> trainReplicas(const ops::ModelInfo& m, const DataParallelOptions& o, int replicas,
                                 const Batches& b, std::vector<double>* losses = nullptr) {
    auto dp = DataParallel::createLocal(m, o, replicas);
    if (!dp.ok()) qFatal("createLocal: %s", dp.error().toString().c_str());
    for (size_t s = 0; s < b.x.size(); ++s) {
        const float* in[] = {b.x[s].data()};
        const float* tg[] = {b.y[s].data()};
        auto st = (*dp)->loadGlobalBatch(in, tg);
        if (!st.ok()) qFatal("load: %s", st.error().toString().c_str());
        st = (*dp)->step(0.05, s);
        if (!st.ok()) qFatal("step: %s", st.error().toString().c_str());
        if (losses) losses->push_back((*dp)->lastLoss());
    }
    // Every replica must hold the same weights.
    std::vector<float> all;
    for (const auto& p : (*dp)->params(0).params())
        all.insert(all.end(), p.value.data<float>(), p.value.data<float>() + p.value.numel());
    for (int r = 1; r < replicas; ++r) {
        size_t at = 0;
        for (const auto& p : (*dp)->params(r).params())
            for (int64_t i = 0; i < p.value.numel(); ++i)
                if (p.value.data<float>()[i] != all[at++])
                    qFatal("replica %d drifted from replica 0 at %s", r, p.name.c_str());
    }
    return all;
}

double maxRelDiff(const std::vector<float>& a, const std::vector<float>& b) {
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i)
        worst = std::max(worst, std::abs(double(a[i]) - b[i]) / std::max(1e-3, std::abs(double(a[i]))));
    return worst;
}

}  // namespace

class TestDataParallel : public QObject {
    Q_OBJECT

private slots:
    void shardRanges() {
        QVERIFY((shardRange(10, 0, 3) == std::pair<int64_t, int64_t>{0, 3}));
        QVERIFY((shardRange(10, 1, 3) == std::pair<int64_t, int64_t>{3, 6}));
        QVERIFY((shardRange(10, 2, 3) == std::pair<int64_t, int64_t>{6, 10}));
        QVERIFY((shardRange(4, 0, 1) == std::pair<int64_t, int64_t>{0, 4}));
    }

    void inProcessReducerSums() {
        InProcessGroup g(3);
        std::vector<std::vector<float>> f(3);
        std::vector<std::vector<double>> d(3);
        std::vector<std::thread> ts;
        for (int r = 0; r < 3; ++r) {
            f[r] = {float(r), float(10 * r), 1.0f, -1.0f, 0.5f};
            d[r] = {double(r) * 0.25, 2.0};
            ts.emplace_back([&, r] {
                for (int rep = 0; rep < 3; ++rep) {  // repeated operations reuse the shared buffer
                    QVERIFY(g.reducer(r).allReduceSum(f[r].data(), 5).ok());
                    QVERIFY(g.reducer(r).allReduceSum(d[r].data(), 2).ok());
                }
            });
        }
        for (auto& t : ts) t.join();
        for (int r = 0; r < 3; ++r) {
            QCOMPARE(f[r], (std::vector<float>{27.0f, 270.0f, 27.0f, -27.0f, 13.5f}));
            QCOMPARE(d[r], (std::vector<double>{0.75 * 9, 54.0}));
        }
    }

    void mlpTwoReplicasMatchOne() {
        auto m = buildModel(kMlp);
        auto b = makeBatches(6, 16, 12, 4);
        std::vector<double> l1, l2;
        auto one = trainReplicas(m, options(16, 4, false), 1, b, &l1);
        auto two = trainReplicas(m, options(16, 4, false), 2, b, &l2);
        QCOMPARE(one.size(), two.size());
        QVERIFY2(maxRelDiff(one, two) < 1e-4, qPrintable(QString::number(maxRelDiff(one, two))));
        for (size_t s = 0; s < l1.size(); ++s) QVERIFY(std::abs(l1[s] - l2[s]) < 1e-4);
        // The weights moved: the comparison is not between two untouched initialisations.
        auto untouched = trainReplicas(m, options(16, 4, false), 1, makeBatches(0, 16, 12, 4));
        QVERIFY(maxRelDiff(untouched, one) > 1e-2);
    }

    void smallBucketsChangeNothing() {
        auto m = buildModel(kMlp);
        auto b = makeBatches(3, 8, 12, 4);
        auto big = trainReplicas(m, options(8, 4, false), 2, b);
        auto small = trainReplicas(m, options(8, 4, false, 50), 2, b);  // tensors split across buckets
        QCOMPARE(big, small);
        auto dp = DataParallel::createLocal(m, options(8, 4, false, 50), 2);
        QVERIFY(dp.ok());
        QVERIFY((*dp)->bucketCount() > 10);
    }

    void cnnWithSyncBatchNormMatchesOne() {
        auto m = buildModel(kCnn);
        auto b = makeBatches(5, 12, 8 * 8 * 3, 5);
        auto one = trainReplicas(m, options(12, 5, false), 1, b);
        auto two = trainReplicas(m, options(12, 5, true), 2, b);
        auto three = trainReplicas(m, options(12, 5, true), 3, b);
        QVERIFY2(maxRelDiff(one, two) < 2e-3, qPrintable(QString::number(maxRelDiff(one, two))));
        QVERIFY2(maxRelDiff(one, three) < 2e-3, qPrintable(QString::number(maxRelDiff(one, three))));
        // Without synchronisation each replica normalises with its own half-batch statistics:
        // the weights (moving statistics included) differ clearly.
        auto unsynced = trainReplicas(m, options(12, 5, false), 2, b);
        QVERIFY2(maxRelDiff(one, unsynced) > 1e-2, qPrintable(QString::number(maxRelDiff(one, unsynced))));
    }

    void badBatchIsAConfigError() {
        auto m = buildModel(kMlp);
        auto dp = DataParallel::createLocal(m, options(9, 4, false), 2);
        QVERIFY(!dp.ok());
        QCOMPARE(dp.error().code, ErrorCode::ConfigError);
        QCOMPARE(QString::fromStdString(dp.error().param("field")), QStringLiteral("batch_size"));
    }
};

QTEST_APPLESS_MAIN(TestDataParallel)
#include "tst_data_parallel.moc"
