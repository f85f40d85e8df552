// kiln-test-libs: kiln_core
// SPDX-License-Identifier: Apache-2.0
// Streaming metrics on hand-made batches (accumulated across two batches), AUC against an exact
// pairwise computation, the factory's errors, and the confusion matrix.
#include <QtTest>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>
#include <random>
#include <vector>

// kiln_train links engine libraries still being written, so the metrics source (which needs only
// kiln_core) is compiled into this test directly. When the test links kiln_train instead, drop
// this include and change the kiln-test-libs line.
#include "engine/train/metrics.cpp"

// Counts heap allocations so tests can prove the hot paths allocate nothing.
namespace {
std::atomic<int64_t> g_allocations{0};
}  // namespace
void* operator new(std::size_t size) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

using namespace kiln::engine;
using namespace kiln::engine::train;

namespace {

std::unique_ptr<Metric> make(std::string_view name, const MetricOptions& o = {}) {
    auto r = makeMetric(name, o);
    if (!r.ok()) qFatal("makeMetric(%s): %s", std::string(name).c_str(), r.error().message.c_str());
    return std::move(r).value();
}

bool near(double a, double b, double tol = 1e-9) { return std::abs(a - b) <= tol; }

// Exact ROC AUC: probability that a random positive outscores a random negative, ties half.
double exactAuc(const std::vector<float>& scores, const std::vector<float>& labels) {
    double wins = 0, pairs = 0;
    for (size_t i = 0; i < scores.size(); ++i) {
        if (labels[i] <= 0.5f) continue;
        for (size_t j = 0; j < scores.size(); ++j) {
            if (labels[j] > 0.5f) continue;
            pairs += 1;
            wins += scores[i] > scores[j] ? 1.0 : scores[i] == scores[j] ? 0.5 : 0.0;
        }
    }
    return wins / pairs;
}

}  // namespace

class TestMetrics : public QObject {
    Q_OBJECT

private slots:
    void categoricalAccuracy() {
        auto m = make("categorical_accuracy");
        QVERIFY(!m->sparseTargets());
        // Batch 1: row 0 right (class 1), row 1 wrong (predicts 0, truth 2).
        const float p1[] = {0.1f, 0.7f, 0.2f, 0.5f, 0.2f, 0.3f};
        const float t1[] = {0, 1, 0, 0, 0, 1};
        m->update(p1, t1, 2, 3);
        QVERIFY(near(m->result(), 0.5));
        // Batch 2: one row, right.
        const float p2[] = {0.0f, 0.1f, 0.9f};
        const float t2[] = {0, 0, 1};
        m->update(p2, t2, 1, 3);
        QVERIFY(near(m->result(), 2.0 / 3.0));
        QCOMPARE(QString::fromStdString(m->name()), QStringLiteral("categorical_accuracy"));
        m->reset();
        QCOMPARE(m->result(), 0.0);
    }

    void accuracyResolvesLikeKeras() {
        // One-hot targets: argmax vs argmax.
        auto a = make("accuracy");
        const float p[] = {0.1f, 0.7f, 0.2f, 0.5f, 0.2f, 0.3f};
        const float onehot[] = {0, 1, 0, 1, 0, 0};
        a->update(p, onehot, 2, 3);
        QVERIFY(near(a->result(), 1.0));
        // Sparse targets: class indices.
        MetricOptions so;
        so.sparseTargets = true;
        auto s = make("acc", so);
        QVERIFY(s->sparseTargets());
        QCOMPARE(QString::fromStdString(s->name()), QStringLiteral("acc"));
        const float idx1[] = {1, 2};
        s->update(p, idx1, 2, 3);
        const float idx2[] = {0};
        s->update(p + 3, idx2, 1, 3);
        QVERIFY(near(s->result(), 2.0 / 3.0));
        // Width 1: binary accuracy at 0.5.
        auto b = make("accuracy");
        const float pb[] = {0.9f, 0.2f, 0.6f, 0.4f};
        const float tb[] = {1, 0, 0, 0};
        b->update(pb, tb, 2, 1);
        b->update(pb + 2, tb + 2, 2, 1);
        QVERIFY(near(b->result(), 0.75));
    }

    void sparseCategoricalAccuracy() {
        auto m = make("sparse_categorical_accuracy");
        QVERIFY(m->sparseTargets());
        const float p1[] = {0.1f, 0.6f, 0.3f, 0.8f, 0.1f, 0.1f};
        const float t1[] = {1, 2};
        m->update(p1, t1, 2, 3);
        const float p2[] = {0.2f, 0.2f, 0.6f, 0.3f, 0.3f, 0.4f};
        const float t2[] = {2, 1};
        m->update(p2, t2, 2, 3);
        QVERIFY(near(m->result(), 0.5));
    }

    void topK() {
        MetricOptions o;
        o.k = 2;
        auto m = make("sparse_top_k_categorical_accuracy", o);
        QVERIFY(m->sparseTargets());
        const float p1[] = {0.1f, 0.4f, 0.3f, 0.2f,   // top-2 = {1, 2}
                            0.4f, 0.1f, 0.2f, 0.3f};  // top-2 = {0, 3}
        const float t1[] = {2, 2};
        m->update(p1, t1, 2, 4);
        QVERIFY(near(m->result(), 0.5));
        // Ties straddling the boundary count as in the top k (tf.math.in_top_k).
        const float p2[] = {0.5f, 0.2f, 0.2f, 0.1f};
        const float t2[] = {2};
        m->update(p2, t2, 1, 4);
        QVERIFY(near(m->result(), 2.0 / 3.0));
        // Invalid index: never a hit.
        const float t3[] = {7};
        m->update(p2, t3, 1, 4);
        QVERIFY(near(m->result(), 0.5));

        auto d = make("top_k_categorical_accuracy");  // default k = 5 covers all 4 classes
        const float oh[] = {0, 0, 0, 1};
        d->update(p2, oh, 1, 4);
        QVERIFY(near(d->result(), 1.0));
        auto d2 = make("top_k_categorical_accuracy", o);
        d2->update(p2, oh, 1, 4);
        d2->update(p1, oh, 1, 4);
        QVERIFY(near(d2->result(), 0.0));
    }

    void binaryAccuracy() {
        auto m = make("binary_accuracy");
        // Per-sample mean over width 2, then mean over samples.
        const float p1[] = {0.7f, 0.2f, 0.4f, 0.6f};
        const float t1[] = {1, 0, 1, 1};
        m->update(p1, t1, 2, 2);
        QVERIFY(near(m->result(), 0.75));
        const float p2[] = {0.5f, 0.51f};  // 0.5 is not > 0.5
        const float t2[] = {0, 1};
        m->update(p2, t2, 1, 2);
        QVERIFY(near(m->result(), (1.0 + 0.5 + 1.0) / 3.0));

        MetricOptions lo;
        lo.fromLogits = true;
        auto l = make("binary_accuracy", lo);
        const float logits[] = {2.0f, -0.5f, 0.1f, -3.0f};
        const float tl[] = {1, 1, 0, 0};
        l->update(logits, tl, 4, 1);
        QVERIFY(near(l->result(), 0.5));

        MetricOptions to;
        to.threshold = 0.8;
        to.fromLogits = true;  // logit(0.8) = 1.386
        auto t = make("binary_accuracy", to);
        const float tl2[] = {1, 0, 0, 0};
        t->update(logits, tl2, 4, 1);
        QVERIFY(near(t->result(), 1.0));
    }

    void precisionRecall() {
        // Keras documentation examples: both 2/3.
        auto p = make("precision");
        auto r = make("recall");
        const float y[] = {0, 1, 1, 1};
        const float s[] = {1, 0, 1, 1};
        p->update(s, y, 2, 1);
        r->update(s, y, 2, 1);
        p->update(s + 2, y + 2, 1, 2);
        r->update(s + 2, y + 2, 1, 2);
        QVERIFY(near(p->result(), 2.0 / 3.0));
        QVERIFY(near(r->result(), 2.0 / 3.0));

        auto q = make("precision");
        QCOMPARE(q->result(), 0.0);  // divide_no_nan
        const float none[] = {0.1f, 0.2f};
        const float lab[] = {1, 0};
        q->update(none, lab, 2, 1);
        QCOMPARE(q->result(), 0.0);

        MetricOptions o;
        o.threshold = 0.3;
        auto p3 = make("precision", o);
        const float sc[] = {0.35f, 0.25f, 0.9f, 0.31f};
        const float lb[] = {1, 1, 1, 0};
        p3->update(sc, lb, 4, 1);
        QVERIFY(near(p3->result(), 2.0 / 3.0));
        auto r3 = make("recall", o);
        r3->update(sc, lb, 4, 1);
        QVERIFY(near(r3->result(), 2.0 / 3.0));
    }

    void aucKerasExample() {
        // keras.metrics.AUC(num_thresholds=3) on [0,0,1,1] vs [0,0.5,0.3,0.9] gives 0.75.
        MetricOptions o;
        o.numThresholds = 3;
        auto m = make("auc", o);
        const float y[] = {0, 0, 1, 1};
        const float s[] = {0, 0.5f, 0.3f, 0.9f};
        m->update(s, y, 2, 1);
        m->update(s + 2, y + 2, 2, 1);
        QVERIFY(near(m->result(), 0.75, 1e-12));
    }

    void aucMatchesExactPairwise() {
        std::mt19937 rng(1234);
        std::normal_distribution<float> noise(0.0f, 1.0f);
        std::bernoulli_distribution coin(0.4);
        const size_t n = 3000;
        std::vector<float> labels(n), probs(n), logits(n);
        for (size_t i = 0; i < n; ++i) {
            labels[i] = coin(rng) ? 1.0f : 0.0f;
            logits[i] = noise(rng) + (labels[i] > 0 ? 1.0f : 0.0f);
            probs[i] = 1.0f / (1.0f + std::exp(-logits[i]));
        }
        const double exact = exactAuc(probs, labels);
        QVERIFY(exact > 0.6 && exact < 0.9);

        auto m = make("auc");
        m->update(probs.data(), labels.data(), 1000, 1);
        m->update(probs.data() + 1000, labels.data() + 1000, 1000, 2);
        QVERIFY2(std::abs(m->result() - exact) < 1e-2, qPrintable(QString::number(m->result()) + " vs " +
                                                                   QString::number(exact)));

        MetricOptions lo;
        lo.fromLogits = true;
        auto l = make("auc", lo);
        l->update(logits.data(), labels.data(), static_cast<int64_t>(n), 1);
        QVERIFY(std::abs(l->result() - exact) < 1e-2);
        QVERIFY(std::abs(l->result() - m->result()) < 1e-6);

        // Perfect and inverted rankings.
        auto p = make("auc");
        const float ys[] = {0, 0, 1, 1};
        const float good[] = {0.1f, 0.2f, 0.8f, 0.9f};
        p->update(good, ys, 4, 1);
        QVERIFY(near(p->result(), 1.0, 1e-12));
        p->reset();
        const float bad[] = {0.9f, 0.8f, 0.2f, 0.1f};
        p->update(bad, ys, 4, 1);
        QVERIFY(near(p->result(), 0.0, 1e-12));
    }

    void meanErrors() {
        auto mse = make("mse");
        auto mae = make("mean_absolute_error");
        const float p1[] = {1, 2, 3, 4};
        const float t1[] = {1, 0, 3, 5};  // per-sample squared: (0+4)/2, (0+1)/2; abs: 1, 0.5
        mse->update(p1, t1, 2, 2);
        mae->update(p1, t1, 2, 2);
        const float p2[] = {0.5f, -1.0f};
        const float t2[] = {0.0f, 1.0f};  // squared (0.25+4)/2; abs 1.25
        mse->update(p2, t2, 1, 2);
        mae->update(p2, t2, 1, 2);
        QVERIFY(near(mse->result(), (2.0 + 0.5 + 2.125) / 3.0));
        QVERIFY(near(mae->result(), (1.0 + 0.5 + 1.25) / 3.0));
        QCOMPARE(QString::fromStdString(mae->name()), QStringLiteral("mean_absolute_error"));
    }

    void factoryErrors() {
        auto r = makeMetric("f1_score");
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::ConfigError);
        QCOMPARE(QString::fromStdString(r.error().param("field")), QStringLiteral("metrics"));
        QVERIFY(r.error().message.find("f1_score") != std::string::npos);
        for (std::string_view n : metricNames()) {
            QVERIFY(r.error().message.find(std::string(n)) != std::string::npos);
            QVERIFY(makeMetric(n).ok());
        }
        MetricOptions o;
        o.k = 0;
        auto k = makeMetric("top_k_categorical_accuracy", o);
        QVERIFY(!k.ok());
        QCOMPARE(QString::fromStdString(k.error().param("field")), QStringLiteral("metrics.k"));
        o = {};
        o.threshold = 1.5;
        QVERIFY(!makeMetric("precision", o).ok());
        o = {};
        o.numThresholds = 1;
        QVERIFY(!makeMetric("auc", o).ok());
    }

    void updateDoesNotAllocate() {
        std::vector<float> pred(64 * 4), onehot(64 * 4, 0.0f), sparse(64);
        for (size_t i = 0; i < pred.size(); ++i) pred[i] = static_cast<float>((i * 37) % 11) / 11.0f;
        for (size_t r = 0; r < 64; ++r) {
            onehot[r * 4 + r % 4] = 1.0f;
            sparse[r] = static_cast<float>(r % 4);
        }
        ConfusionMatrix cm(4);
        for (std::string_view n : metricNames()) {
            auto m = make(n);
            const float* targets = m->sparseTargets() ? sparse.data() : onehot.data();
            const int64_t before = g_allocations.load();
            m->update(pred.data(), targets, 64, 4);
            (void)m->result();
            m->reset();
            QVERIFY(cm.update(pred.data(), onehot.data(), 64, 4).ok());
            const bool none = g_allocations.load() == before;
            QVERIFY2(none, std::string(n).c_str());
        }
    }

    void confusionMatrix() {
        ConfusionMatrix cm(3);
        // Truth / prediction pairs: (0,0) (0,1) (1,1) | (2,2) (2,0) (1,1)
        const float p1[] = {0.8f, 0.1f, 0.1f, 0.3f, 0.6f, 0.1f, 0.2f, 0.7f, 0.1f};
        const float t1[] = {1, 0, 0, 1, 0, 0, 0, 1, 0};
        QVERIFY(cm.update(p1, t1, 3, 3).ok());
        const float p2[] = {0.1f, 0.1f, 0.8f, 0.5f, 0.2f, 0.3f, 0.0f, 1.0f, 0.0f};
        const float t2[] = {0, 0, 1, 0, 0, 1, 0, 1, 0};
        QVERIFY(cm.update(p2, t2, 3, 3).ok());
        QCOMPARE(cm.total(), int64_t(6));
        QCOMPARE(cm.count(0, 0), int64_t(1));
        QCOMPARE(cm.count(0, 1), int64_t(1));
        QCOMPARE(cm.count(1, 1), int64_t(2));
        QCOMPARE(cm.count(2, 2), int64_t(1));
        QCOMPARE(cm.count(2, 0), int64_t(1));
        QCOMPARE(cm.counts().size(), size_t(9));
        QVERIFY(near(cm.precision(0), 0.5));
        QVERIFY(near(cm.recall(0), 0.5));
        QVERIFY(near(cm.precision(1), 2.0 / 3.0));
        QVERIFY(near(cm.recall(1), 1.0));
        QVERIFY(near(cm.precision(2), 1.0));
        QVERIFY(near(cm.recall(2), 0.5));
        QVERIFY(near(cm.accuracy(), 4.0 / 6.0));
        const std::string text = cm.toText({"cat", "dog", "bird"});
        QVERIFY(text.find("bird") != std::string::npos);
        QVERIFY(text.find("0.6667") != std::string::npos);
        QVERIFY(!cm.update(p1, t1, 1, 4).ok());  // wrong width

        ConfusionMatrix sparse(3, true);
        const float idx[] = {0, 1, 5};  // 5 is not a class
        QVERIFY(sparse.update(p1, idx, 3, 3).ok());
        QCOMPARE(sparse.total(), int64_t(2));
        QCOMPARE(sparse.skipped(), int64_t(1));
        QCOMPARE(sparse.count(1, 1), int64_t(1));
        QVERIFY(sparse.toText().find("skipped") != std::string::npos);

        ConfusionMatrix binary(2, false, 0.5, true);  // logits
        const float lg[] = {1.0f, -1.0f, 0.5f, -2.0f};
        const float lb[] = {1, 1, 0, 0};
        QVERIFY(binary.update(lg, lb, 4, 1).ok());
        QCOMPARE(binary.count(1, 1), int64_t(1));
        QCOMPARE(binary.count(1, 0), int64_t(1));
        QCOMPARE(binary.count(0, 1), int64_t(1));
        QCOMPARE(binary.count(0, 0), int64_t(1));
        binary.reset();
        QCOMPARE(binary.total(), int64_t(0));
    }
};

QTEST_APPLESS_MAIN(TestMetrics)
#include "tst_metrics.moc"
