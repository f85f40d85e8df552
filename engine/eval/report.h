// SPDX-License-Identifier: Apache-2.0
// Evaluation of a model's predictions against true labels: classification reports (confusion
// matrix, per-class figures, ROC and precision-recall curves, calibration, log loss) and
// regression reports, with per-sample records. Definitions follow scikit-learn (named below) so
// that numbers agree with what users compute in Python.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/core/error.h"

namespace kiln::engine::eval {

// Points of a ROC curve for one class against the rest, as sklearn.metrics.roc_curve with
// drop_intermediate=True: thresholds are the distinct scores in decreasing order, tied scores
// form one point, collinear intermediate points are dropped, and a first point (0, 0) with
// threshold +infinity is prepended. `auc` is the trapezoidal area under (fpr, tpr), equal to
// roc_auc_score. Undefined (defined == false, auc NaN) when the class has no positive or no
// negative sample, where scikit-learn raises an error or returns NaN; the rate that cannot be
// computed (tpr without positives, fpr without negatives) is then NaN at every point, as there.
struct RocCurve {
    std::vector<double> fpr, tpr, thresholds;
    double auc = 0;
    bool defined = false;
};

// Points of a precision-recall curve for one class against the rest, as
// sklearn.metrics.precision_recall_curve (drop_intermediate=False): one point per distinct score
// with recall increasing towards the end reversed, i.e. recall decreasing, ending in the point
// (recall 0, precision 1) which has no threshold. `averagePrecision` is
// average_precision_score: sum over points of (R_n - R_{n-1}) * P_n. A class with no positive
// sample has recall 1 everywhere and average precision 0, as scikit-learn gives (defined false).
struct PrCurve {
    std::vector<double> precision, recall, thresholds;  // thresholds: one fewer than points
    double averagePrecision = 0;
    bool defined = false;
};

// Curves for one class, from its scores and 0/1 truths (positive when truth is true).
RocCurve rocCurve(std::span<const double> scores, std::span<const uint8_t> positive);
PrCurve prCurve(std::span<const double> scores, std::span<const uint8_t> positive);

// Per-class precision, recall and F1, with sklearn's zero_division=0: precision is 0 when the
// class was never predicted, recall is 0 when it never occurs, F1 is 0 when both are 0.
struct ClassFigures {
    std::string name;
    double precision = 0, recall = 0, f1 = 0;
    int64_t support = 0;  // samples whose true class this is
};

struct Averages {
    double precision = 0, recall = 0, f1 = 0;
    int64_t support = 0;
};

// Reliability bin i covers confidences [i/n, (i+1)/n), the last one including 1. Confidence is
// the probability of the predicted class (top label); accuracy is the share predicted right.
struct CalibrationBin {
    double lower = 0, upper = 0;
    int64_t count = 0;
    double meanConfidence = 0;  // 0 for an empty bin
    double accuracy = 0;        // 0 for an empty bin
};

// One evaluated sample. Classification: confidence is the probability of the predicted class,
// loss is -log(p of the true class) (clipped as in logLoss). Regression: trueClass/predicted are
// -1, confidence 0, loss the squared error averaged over the outputs.
struct SampleRecord {
    int64_t index = 0;    // position in the evaluated split (0-based, in evaluation order)
    std::string source;   // the file or row the sample came from ("" when unknown)
    int64_t trueClass = -1;
    int64_t predicted = -1;
    double confidence = 0;
    double loss = 0;
    bool correct() const { return trueClass == predicted; }
};

struct ClassificationReport {
    int64_t numClasses = 0;
    int64_t samples = 0;
    std::vector<std::string> classNames;
    double accuracy = 0;              // trace / total
    std::vector<int64_t> confusion;   // [true][predicted], row-major numClasses x numClasses
    std::vector<ClassFigures> perClass;
    Averages macro;                   // unweighted mean over all numClasses classes
    Averages weighted;                // mean weighted by support
    std::vector<RocCurve> roc;        // one per class (one-vs-rest)
    std::vector<PrCurve> pr;          // one per class (one-vs-rest)
    double macroAuc = 0;              // mean of the defined per-class AUCs (NaN when none)
    std::vector<CalibrationBin> calibration;
    double expectedCalibrationError = 0;  // sum over bins of count/N * |accuracy - confidence|
    double logLoss = 0;
    std::vector<SampleRecord> records;    // most confidently wrong first (see sortRecords)

    int64_t count(int64_t trueClass, int64_t predicted) const {
        return confusion[static_cast<size_t>(trueClass * numClasses + predicted)];
    }
};

struct ClassificationOptions {
    std::vector<std::string> classNames;  // numClasses entries, or empty for "0", "1", ...
    int calibrationBins = 10;             // >= 1
    std::vector<std::string> sources;     // per sample, or empty
};

// Clip used for logarithms of probabilities: float64 machine epsilon, as sklearn's log_loss.
constexpr double kProbabilityEpsilon = 2.220446049250313e-16;

// `probabilities` is [samples, numClasses] row-major, rows summing to 1; `labels` holds the true
// class of each sample. The predicted class is the first highest probability (argmax).
// InvalidArgument for sizes that do not fit, a label outside [0, numClasses), a NaN or negative
// probability, or a wrong number of class names; the message names the sample.
Result<ClassificationReport> evaluateClassification(std::span<const double> probabilities,
                                                    std::span<const int64_t> labels, int64_t numClasses,
                                                    const ClassificationOptions& options = {});

// Mean over samples of -log(clip(p_true, eps, 1 - eps)), as sklearn.metrics.log_loss for rows
// that sum to 1.
double logLoss(std::span<const double> probabilities, std::span<const int64_t> labels, int64_t numClasses);

// Regression over `width` outputs per sample ([samples, width] row-major both).
struct RegressionReport {
    int64_t samples = 0;
    int64_t width = 0;
    double mae = 0, mse = 0, rmse = 0;
    // sklearn.metrics.r2_score, multioutput="uniform_average": the mean over outputs of
    // 1 - SS_res / SS_tot; an output whose truths are all equal scores 1 when predicted exactly,
    // else 0 (force_finite=True).
    double r2 = 0;
    std::vector<double> residuals;  // true - predicted, [samples, width]
    std::vector<SampleRecord> records;  // largest error first
};

Result<RegressionReport> evaluateRegression(std::span<const double> predictions, std::span<const double> truths,
                                            int64_t width, const std::vector<std::string>& sources = {});

// Classification: wrong predictions first, by decreasing confidence; then right ones by
// decreasing loss. Regression (all trueClass == -1): by decreasing loss. Ties keep index order.
void sortRecords(std::vector<SampleRecord>& records);

// The input values of evaluated samples of a table, for showing beside their records: one value
// per feature (a column of the file the model reads), as the file holds it (before any
// standardisation). A categorical column is one feature whose value is the index of its category.
struct SampleFeatures {
    std::vector<std::string> names;                    // one per feature, in the model inputs' order
    std::vector<std::vector<std::string>> categories;  // per feature: its categories (empty for numbers)
    std::vector<float> values;                         // [samples, names.size()]; NaN: missing
    int64_t samples = 0;

    size_t count() const { return names.size(); }
    // The value of feature f of sample `index` (the record's index); NaN when out of range.
    float value(int64_t index, size_t f) const;
    // As text: the shortest form that reads back as the same float ("17.99"), the category's
    // name, or "" for a missing value.
    std::string text(int64_t index, size_t f) const;
};

// A feature value as SampleFeatures::text shows it: the name of category `value` when
// `categories` is not empty ("" for an index outside them), else the shortest form that reads
// back as the same float; "" for NaN (missing).
std::string featureText(float value, const std::vector<std::string>& categories);

// Turns raw model outputs into class probabilities: `width` > 1 rows get softmax when
// `fromLogits`, else are used as they are; width 1 (a binary head) becomes [1 - p, p] with
// p = sigmoid(x) when `fromLogits`, else x. Rows are [samples, width] floats.
std::vector<double> toProbabilities(std::span<const float> outputs, int64_t width, bool fromLogits);

}  // namespace kiln::engine::eval
