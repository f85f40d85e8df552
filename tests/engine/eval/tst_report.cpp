// kiln-test-libs: kiln_eval
// SPDX-License-Identifier: Apache-2.0
// Evaluation reports against values worked out by hand: curves with and without tied scores,
// per-class figures and their averages, zero division, calibration bins, log loss, the order of
// per-sample records, regression figures, and the errors for inputs that do not fit.
#include <QtTest>

#include <cmath>
#include <limits>
#include <vector>

#include "engine/eval/report.h"
#include "engine/eval/report_json.h"

using namespace kiln::engine;
using namespace kiln::engine::eval;

namespace {

void compare(const std::vector<double>& got, const std::vector<double>& want, const char* what) {
    QVERIFY2(got.size() == want.size(), what);
    for (size_t i = 0; i < got.size(); ++i)
        QVERIFY2(std::abs(got[i] - want[i]) < 1e-12 || (std::isinf(got[i]) && std::isinf(want[i])),
                 qPrintable(QStringLiteral("%1[%2]: got %3, want %4").arg(what).arg(i).arg(got[i]).arg(want[i])));
}

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

class TestReport : public QObject {
    Q_OBJECT

private slots:
    void rocDistinctScores() {
        // Scores 0.1 0.4 0.35 0.8 with truths 0 0 1 1: the points of every distinct threshold.
        std::vector<double> s = {0.1, 0.4, 0.35, 0.8};
        std::vector<uint8_t> y = {0, 0, 1, 1};
        RocCurve r = rocCurve(s, y);
        QVERIFY(r.defined);
        compare(r.fpr, {0, 0, 0.5, 0.5, 1}, "fpr");
        compare(r.tpr, {0, 0.5, 0.5, 1, 1}, "tpr");
        compare(r.thresholds, {kInf, 0.8, 0.4, 0.35, 0.1}, "thresholds");
        QCOMPARE(r.auc, 0.75);
        PrCurve p = prCurve(s, y);
        compare(p.precision, {0.5, 2.0 / 3.0, 0.5, 1, 1}, "precision");
        compare(p.recall, {1, 1, 0.5, 0.5, 0}, "recall");
        compare(p.thresholds, {0.1, 0.35, 0.4, 0.8}, "pr thresholds");
        // AP = sum (R_n - R_{n-1}) P_n over the points from the high-threshold end.
        QVERIFY(std::abs(p.averagePrecision - (0.5 * 1.0 + 0.5 * (2.0 / 3.0))) < 1e-12);
    }

    void tiedScoresAreOnePoint() {
        // Three samples share 0.5: one threshold; AUC counts a tied pair as half a win (3/4).
        std::vector<double> s = {0.5, 0.5, 0.5, 0.9};
        std::vector<uint8_t> y = {1, 0, 0, 1};
        RocCurve r = rocCurve(s, y);
        compare(r.fpr, {0, 0, 1}, "fpr");
        compare(r.tpr, {0, 0.5, 1}, "tpr");
        QCOMPARE(r.auc, 0.75);
        PrCurve p = prCurve(s, y);
        compare(p.precision, {0.5, 1, 1}, "precision");
        compare(p.recall, {1, 0.5, 0}, "recall");
        QCOMPARE(p.averagePrecision, 0.75);
    }

    void collinearPointsAreDropped() {
        // Truths 1 1 1 0 in score order: the middle points of the vertical run are dropped.
        std::vector<double> s = {0.9, 0.8, 0.7, 0.1};
        std::vector<uint8_t> y = {1, 1, 1, 0};
        RocCurve r = rocCurve(s, y);
        compare(r.fpr, {0, 0, 0, 1}, "fpr");
        compare(r.tpr, {0, 1.0 / 3.0, 1, 1}, "tpr");
        QCOMPARE(r.auc, 1.0);
    }

    void oneSidedClassesAreUndefined() {
        std::vector<double> s = {0.2, 0.7};
        std::vector<uint8_t> none = {0, 0};
        RocCurve r = rocCurve(s, none);
        QVERIFY(!r.defined);
        QVERIFY(std::isnan(r.auc));
        QVERIFY(std::isnan(r.tpr.front()) && std::isnan(r.tpr.back()));
        compare(r.fpr, {0, 0.5, 1}, "fpr without positives");
        PrCurve p = prCurve(s, none);
        QVERIFY(!p.defined);
        compare(p.recall, {1, 1, 0}, "recall without positives");
        QCOMPARE(p.averagePrecision, 0.0);
        std::vector<uint8_t> all = {1, 1};
        QVERIFY(!rocCurve(s, all).defined);
        QVERIFY(prCurve(s, all).defined);
    }

    void classificationFigures() {
        const std::vector<double> p = {0.7, 0.2, 0.1,   // 0 -> 0
                                       0.1, 0.6, 0.3,   // 1 -> 1
                                       0.2, 0.3, 0.5,   // 1 -> 2
                                       0.8, 0.1, 0.1,   // 2 -> 0
                                       0.1, 0.1, 0.8};  // 2 -> 2
        const std::vector<int64_t> y = {0, 1, 1, 2, 2};
        ClassificationOptions o;
        o.classNames = {"a", "b", "c"};
        o.calibrationBins = 2;
        o.sources = {"s0", "s1", "s2", "s3", "s4"};
        auto r = evaluateClassification(p, y, 3, o);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        QCOMPARE(r->confusion, (std::vector<int64_t>{1, 0, 0, 0, 1, 1, 1, 0, 1}));
        QCOMPARE(r->accuracy, 0.6);
        const double third = 1.0 / 3.0;
        QCOMPARE(r->perClass[0].precision, 0.5);
        QCOMPARE(r->perClass[0].recall, 1.0);
        QVERIFY(std::abs(r->perClass[0].f1 - 2 * third * 1.0 / 1.0) < 1e-12);  // 2*0.5*1/1.5
        QCOMPARE(r->perClass[1].precision, 1.0);
        QCOMPARE(r->perClass[1].recall, 0.5);
        QCOMPARE(r->perClass[2].f1, 0.5);
        QCOMPARE(r->perClass[2].support, int64_t(2));
        QVERIFY(std::abs(r->macro.precision - 2 * third) < 1e-12);
        QVERIFY(std::abs(r->macro.f1 - (2 * third + 2 * third + 0.5) / 3) < 1e-12);
        QVERIFY(std::abs(r->weighted.precision - 0.7) < 1e-12);
        QVERIFY(std::abs(r->weighted.recall - 0.6) < 1e-12);
        QVERIFY(std::abs(r->weighted.f1 - 0.6) < 1e-12);
        QCOMPARE(r->weighted.support, int64_t(5));
        const double ll = -(std::log(0.7) + std::log(0.6) + std::log(0.3) + std::log(0.1) + std::log(0.8)) / 5;
        QVERIFY(std::abs(r->logLoss - ll) < 1e-12);
        // Calibration: every confidence (0.7 0.6 0.5 0.8 0.8) falls in [0.5, 1].
        QCOMPARE(r->calibration.size(), size_t(2));
        QCOMPARE(r->calibration[0].count, int64_t(0));
        QCOMPARE(r->calibration[1].count, int64_t(5));
        QVERIFY(std::abs(r->calibration[1].meanConfidence - 0.68) < 1e-12);
        QVERIFY(std::abs(r->calibration[1].accuracy - 0.6) < 1e-12);
        QVERIFY(std::abs(r->expectedCalibrationError - 0.08) < 1e-12);
        // Most confidently wrong first (0.8, then 0.5), then right ones by decreasing loss.
        std::vector<int64_t> order;
        for (const auto& s : r->records) order.push_back(s.index);
        QCOMPARE(order, (std::vector<int64_t>{3, 2, 1, 0, 4}));
        QCOMPARE(r->records[0].source, std::string("s3"));
        QCOMPARE(r->records[0].predicted, int64_t(0));
        QVERIFY(std::abs(r->records[0].loss + std::log(0.1)) < 1e-12);
        // Class a against the rest: scores .7 .1 .2 .8 .1, one positive ranked second: AUC 3/4.
        QCOMPARE(r->roc[0].auc, 0.75);

        const auto j = reportJson(*r);
        QCOMPARE(j["per_class"][1]["class"].get<std::string>(), std::string("b"));
        QCOMPARE(j["confusion_matrix"][2][0].get<int>(), 1);
        QVERIFY(j["roc"][0]["thresholds"][0].is_null());  // +infinity
        QCOMPARE(j["samples_most_confidently_wrong"][0]["true"].get<std::string>(), std::string("c"));
        const std::string csv = recordsCsv(r->records, r->classNames);
        QVERIFY(csv.rfind("index,source,true,predicted,confidence,loss,correct\n3,s3,c,a,0.80000000000000004,", 0) == 0);

        // Table data: the features follow each record, in the sample's own row (by index), as
        // their shortest decimal form, category names, and empty / null when missing.
        SampleFeatures features;
        features.names = {"width, cm", "colour"};
        features.categories = {{}, {"blue", "red"}};
        features.samples = 5;
        const float nan = std::numeric_limits<float>::quiet_NaN();
        features.values = {0.5f, 0, 1.25f, 1, 17.99f, 0, nan, 1, -3e-7f, nan};
        QCOMPARE(features.text(3, 0), std::string());
        QCOMPARE(features.text(2, 0), std::string("17.99"));
        QCOMPARE(features.text(3, 1), std::string("red"));
        QCOMPARE(features.text(4, 0), std::string("-3e-07"));
        QVERIFY(std::isnan(features.value(5, 0)));  // no such sample
        const std::string withFeatures = recordsCsv(r->records, r->classNames, &features);
        QVERIFY(withFeatures.rfind("index,source,true,predicted,confidence,loss,correct,\"width, cm\",colour\n3,s3,c,a,", 0) == 0);
        QVERIFY(withFeatures.find(",0,,red\n2,") != std::string::npos);  // sample 3 (wrong), then sample 2
        QVERIFY(withFeatures.find(",17.99,blue\n") != std::string::npos);
        QVERIFY(withFeatures.find(",-3e-07,\n") != std::string::npos);
        const auto withJson = reportJson(*r, 20, &features);
        QCOMPARE(withJson["feature_names"], nlohmann::json({"width, cm", "colour"}));
        const auto& first = withJson["samples_most_confidently_wrong"][0];  // sample 3
        QVERIFY(first["features"][0].is_null());
        QCOMPARE(first["features"][1].get<std::string>(), std::string("red"));
        QCOMPARE(withJson["samples_most_confidently_wrong"][1]["features"][0].get<double>(), 17.99);  // sample 2
        QVERIFY(!reportJson(*r).contains("feature_names"));
        QVERIFY(!reportJson(*r)["samples_most_confidently_wrong"][0].contains("features"));
    }

    void zeroDivisionAndAbsentClasses() {
        // Class 2 never occurs and is never predicted: precision, recall and F1 are 0, its AUC is
        // undefined and left out of the macro AUC; the macro averages still divide by 3.
        const std::vector<double> p = {0.9, 0.1, 0.0, 0.2, 0.8, 0.0, 0.6, 0.4, 0.0};
        const std::vector<int64_t> y = {0, 1, 1};
        auto r = evaluateClassification(p, y, 3);
        QVERIFY(r.ok());
        QCOMPARE(r->perClass[2].precision, 0.0);
        QCOMPARE(r->perClass[2].recall, 0.0);
        QCOMPARE(r->perClass[2].f1, 0.0);
        QVERIFY(!r->roc[2].defined);
        QVERIFY(std::abs(r->macroAuc - (r->roc[0].auc + r->roc[1].auc) / 2) < 1e-12);
        // class 0: P 1/2, R 1; class 1: P 1, R 1/2; class 2: 0.
        QVERIFY(std::abs(r->macro.precision - 0.5) < 1e-12);
        QCOMPARE(r->classNames, (std::vector<std::string>{"0", "1", "2"}));
        QVERIFY(reportJson(*r)["roc"][2]["auc"].is_null());
    }

    void badInputsNameTheSample() {
        const std::vector<double> p = {0.5, 0.5, 0.5, 0.5};
        auto r = evaluateClassification(p, std::vector<int64_t>{0, 2}, 2);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::InvalidArgument);
        QVERIFY(r.error().message.find("sample 1") != std::string::npos);
        QVERIFY(!evaluateClassification(p, std::vector<int64_t>{0}, 2).ok());
        const std::vector<double> nan = {std::nan(""), 1.0};
        QVERIFY(!evaluateClassification(nan, std::vector<int64_t>{0}, 2).ok());
        ClassificationOptions o;
        o.classNames = {"only one"};
        QVERIFY(!evaluateClassification(p, std::vector<int64_t>{0, 1}, 2, o).ok());
        QVERIFY(!evaluateRegression(std::vector<double>{1, 2, 3}, std::vector<double>{1, 2}, 1).ok());
    }

    void regressionFigures() {
        // The example of scikit-learn's documentation: MAE 0.5, MSE 0.375, R2 0.9486...
        const std::vector<double> pred = {2.5, 0.0, 2, 8};
        const std::vector<double> truth = {3, -0.5, 2, 7};
        auto r = evaluateRegression(pred, truth, 1);
        QVERIFY(r.ok());
        QCOMPARE(r->mae, 0.5);
        QCOMPARE(r->mse, 0.375);
        QVERIFY(std::abs(r->rmse - std::sqrt(0.375)) < 1e-15);
        // SS_res = 1.5, mean 2.875, SS_tot = 29.1875.
        QVERIFY(std::abs(r->r2 - (1 - 1.5 / 29.1875)) < 1e-12);
        compare(r->residuals, {0.5, -0.5, 0, -1}, "residuals");
        QCOMPARE(r->records.front().index, int64_t(3));  // the largest error
        QCOMPARE(r->records.front().loss, 1.0);
        // A constant truth predicted exactly scores R2 1, otherwise 0 (sklearn's force_finite).
        QCOMPARE(evaluateRegression(std::vector<double>{1, 1}, std::vector<double>{1, 1}, 1)->r2, 1.0);
        QCOMPARE(evaluateRegression(std::vector<double>{1, 2}, std::vector<double>{1, 1}, 1)->r2, 0.0);
    }

    void probabilitiesFromOutputs() {
        const std::vector<float> logits = {0.0f, static_cast<float>(std::log(3.0))};
        auto p = toProbabilities(logits, 2, true);
        QVERIFY(std::abs(p[0] - 0.25) < 1e-7 && std::abs(p[1] - 0.75) < 1e-7);
        auto b = toProbabilities(std::vector<float>{0.0f, 0.25f}, 1, false);
        compare(b, {1, 0, 0.75, 0.25}, "binary");
        auto s = toProbabilities(std::vector<float>{0.0f}, 1, true);
        compare(s, {0.5, 0.5}, "sigmoid");
    }
};

QTEST_APPLESS_MAIN(TestReport)
#include "tst_report.moc"
