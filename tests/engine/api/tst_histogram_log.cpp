// SPDX-License-Identifier: Apache-2.0
// histograms.jsonl: lines written per epoch read back equal, a repeated epoch (a resumed run)
// keeps its later line, a torn last line is left out and a damaged line is named by number.
#include <QtTest>

#include <fstream>
#include <string>
#include <vector>

#include "engine/api/histogram_log.h"
#include "engine/io/tfevents.h"

using namespace kiln::engine;
using namespace kiln::engine::api;

namespace {

// The engine's histogram of `values` (what the trainer records), as the api's.
Histogram histogramOf(const std::vector<float>& values, int buckets) {
    const io::Histogram h = io::Histogram::of(values, buckets);
    return Histogram{h.min, h.max, h.num, h.sum, h.sumSquares, h.bucketLimit, h.bucket};
}

std::vector<ParamHistogram> sample(float shift) {
    ParamHistogram k;
    k.name = "dense/kernel";
    const std::vector<float> w = {0.5f + shift, -0.25f, 1.5f, 0.0f, 0.75f};
    const std::vector<float> g = {0.01f, -0.02f, 0.03f, 0.0f, 0.005f};
    k.weights = histogramOf(w, 4);
    k.gradients = histogramOf(g, 4);
    ParamHistogram frozen;
    frozen.name = "bn/moving_mean";
    frozen.weights = histogramOf({1.0f, 2.0f}, 4);
    return {k, frozen};
}

}  // namespace

class TestHistogramLog : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void roundTripAndRepeatedEpoch() {
        const std::string path = histogramLogPath(m_dir.filePath(QStringLiteral("run1")).toStdString());
        QVERIFY(QDir().mkpath(m_dir.filePath(QStringLiteral("run1"))));
        QVERIFY(appendHistograms(path, 1, sample(0)).ok());
        QVERIFY(appendHistograms(path, 2, sample(1)).ok());
        QVERIFY(appendHistograms(path, 2, sample(2)).ok());  // resumed: epoch 2 again
        auto r = readHistograms(path);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QCOMPARE(r->size(), size_t{2});
        QCOMPARE((*r)[0].epoch, 1);
        QCOMPARE((*r)[1].epoch, 2);
        const auto expected = sample(2);
        const auto& got = (*r)[1].params;
        QCOMPARE(got.size(), size_t{2});
        QCOMPARE(got[0].name, std::string("dense/kernel"));
        QCOMPARE(got[0].weights.max, expected[0].weights.max);
        QCOMPARE(got[0].weights.bucket, expected[0].weights.bucket);
        QCOMPARE(got[0].weights.bucketLimit, expected[0].weights.bucketLimit);
        QCOMPARE(got[0].gradients.sum, expected[0].gradients.sum);
        QCOMPARE(got[0].gradients.sumSquares, expected[0].gradients.sumSquares);
        QCOMPARE(got[1].gradients.num, 0.0);  // no gradient recorded for a frozen parameter
        QCOMPARE(got[1].weights.num, 2.0);
    }

    void tornLastLineIsLeftOut() {
        const std::string path = m_dir.filePath(QStringLiteral("torn.jsonl")).toStdString();
        QVERIFY(appendHistograms(path, 1, sample(0)).ok());
        {
            std::ofstream out(path, std::ios::app | std::ios::binary);
            out << histogramLine(2, sample(1)).substr(0, 40);
        }
        auto r = readHistograms(path);
        QVERIFY(r.ok());
        QCOMPARE(r->size(), size_t{1});
    }

    void damagedLineIsNamed() {
        const std::string path = m_dir.filePath(QStringLiteral("bad.jsonl")).toStdString();
        QVERIFY(appendHistograms(path, 1, sample(0)).ok());
        {
            std::ofstream out(path, std::ios::app | std::ios::binary);
            out << R"({"epoch": 2, "params": [{"name": "a", "weights": {"min": 0}}]})" << '\n';
        }
        auto r = readHistograms(path);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::ParseError);
        QCOMPARE(r.error().line, 2);
        QCOMPARE(r.error().file, path);
    }

    void missingFile() {
        auto r = readHistograms(m_dir.filePath(QStringLiteral("none/histograms.jsonl")).toStdString());
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::FileNotFound);
    }
};

QTEST_GUILESS_MAIN(TestHistogramLog)
#include "tst_histogram_log.moc"
