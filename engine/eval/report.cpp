// SPDX-License-Identifier: Apache-2.0
// Classification and regression reports. Sums are taken in double precision in sample order, so
// results are deterministic.
#include "engine/eval/report.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numeric>

namespace kiln::engine::eval {

namespace {

Error invalid(const std::string& message) { return Error(ErrorCode::InvalidArgument, message); }

// sklearn's _binary_clf_curve: false and true positive counts at each distinct score, scores in
// decreasing order.
struct ClfCurve {
    std::vector<double> fps, tps, thresholds;
};

ClfCurve binaryClfCurve(std::span<const double> scores, std::span<const uint8_t> positive) {
    const size_t n = scores.size();
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
    ClfCurve c;
    double tp = 0;
    for (size_t i = 0; i < n; ++i) {
        tp += positive[order[i]] ? 1.0 : 0.0;
        // The last of a run of equal scores closes one point: ties are one threshold.
        if (i + 1 == n || scores[order[i]] != scores[order[i + 1]]) {
            c.tps.push_back(tp);
            c.fps.push_back(static_cast<double>(i + 1) - tp);
            c.thresholds.push_back(scores[order[i]]);
        }
    }
    return c;
}

double trapezoid(const std::vector<double>& x, const std::vector<double>& y) {
    double area = 0;
    for (size_t i = 1; i < x.size(); ++i) area += (x[i] - x[i - 1]) * (y[i] + y[i - 1]) / 2.0;
    return area;
}

double safeDivide(double a, double b) { return b != 0 ? a / b : 0.0; }

}  // namespace

RocCurve rocCurve(std::span<const double> scores, std::span<const uint8_t> positive) {
    RocCurve r;
    r.auc = std::numeric_limits<double>::quiet_NaN();
    if (scores.empty() || scores.size() != positive.size()) return r;
    ClfCurve c = binaryClfCurve(scores, positive);
    // drop_intermediate: keep the ends and every point where the curve bends (a non-zero second
    // difference of fps or tps).
    std::vector<size_t> keep;
    const size_t m = c.fps.size();
    if (m > 2) {
        keep.push_back(0);
        for (size_t i = 1; i + 1 < m; ++i) {
            const double dF = c.fps[i + 1] - 2 * c.fps[i] + c.fps[i - 1];
            const double dT = c.tps[i + 1] - 2 * c.tps[i] + c.tps[i - 1];
            if (dF != 0 || dT != 0) keep.push_back(i);
        }
        keep.push_back(m - 1);
    } else {
        for (size_t i = 0; i < m; ++i) keep.push_back(i);
    }
    const double negatives = c.fps.back(), positives = c.tps.back();
    r.defined = negatives > 0 && positives > 0;
    // Like scikit-learn, an axis without samples to divide by is NaN throughout.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    r.fpr.push_back(negatives > 0 ? 0.0 : nan);
    r.tpr.push_back(positives > 0 ? 0.0 : nan);
    r.thresholds.push_back(std::numeric_limits<double>::infinity());
    for (size_t i : keep) {
        r.fpr.push_back(negatives > 0 ? c.fps[i] / negatives : nan);
        r.tpr.push_back(positives > 0 ? c.tps[i] / positives : nan);
        r.thresholds.push_back(c.thresholds[i]);
    }
    if (r.defined) r.auc = trapezoid(r.fpr, r.tpr);
    return r;
}

PrCurve prCurve(std::span<const double> scores, std::span<const uint8_t> positive) {
    PrCurve r;
    if (scores.empty() || scores.size() != positive.size()) return r;
    ClfCurve c = binaryClfCurve(scores, positive);
    const double positives = c.tps.back();
    r.defined = positives > 0;
    for (size_t k = c.tps.size(); k-- > 0;) {
        r.precision.push_back(safeDivide(c.tps[k], c.tps[k] + c.fps[k]));
        r.recall.push_back(positives > 0 ? c.tps[k] / positives : 1.0);
        r.thresholds.push_back(c.thresholds[k]);
    }
    r.precision.push_back(1.0);
    r.recall.push_back(0.0);
    double ap = 0;
    for (size_t i = 0; i + 1 < r.recall.size(); ++i) ap -= (r.recall[i + 1] - r.recall[i]) * r.precision[i];
    r.averagePrecision = ap == 0 ? 0.0 : ap;  // no -0
    return r;
}

double logLoss(std::span<const double> probabilities, std::span<const int64_t> labels, int64_t numClasses) {
    if (labels.empty()) return 0;
    double sum = 0;
    for (size_t i = 0; i < labels.size(); ++i) {
        const double p = probabilities[i * static_cast<size_t>(numClasses) + static_cast<size_t>(labels[i])];
        sum += -std::log(std::clamp(p, kProbabilityEpsilon, 1.0 - kProbabilityEpsilon));
    }
    return sum / static_cast<double>(labels.size());
}

Result<ClassificationReport> evaluateClassification(std::span<const double> probabilities,
                                                    std::span<const int64_t> labels, int64_t numClasses,
                                                    const ClassificationOptions& options) {
    if (numClasses < 2) return invalid("a classification needs at least 2 classes, got " + std::to_string(numClasses));
    const size_t k = static_cast<size_t>(numClasses);
    const size_t n = labels.size();
    if (probabilities.size() != n * k)
        return invalid("expected " + std::to_string(n * k) + " probabilities (" + std::to_string(n) + " samples x " +
                       std::to_string(k) + " classes), got " + std::to_string(probabilities.size()));
    if (!options.classNames.empty() && options.classNames.size() != k)
        return invalid(std::to_string(options.classNames.size()) + " class names given for " + std::to_string(k) +
                       " classes");
    if (!options.sources.empty() && options.sources.size() != n)
        return invalid(std::to_string(options.sources.size()) + " sample sources given for " + std::to_string(n) +
                       " samples");
    if (options.calibrationBins < 1) return invalid("calibration needs at least 1 bin");
    for (size_t i = 0; i < n; ++i) {
        if (labels[i] < 0 || labels[i] >= numClasses)
            return invalid("sample " + std::to_string(i) + " has label " + std::to_string(labels[i]) +
                           ", outside 0.." + std::to_string(numClasses - 1));
        for (size_t c = 0; c < k; ++c) {
            const double p = probabilities[i * k + c];
            if (!(p >= 0) || !std::isfinite(p))
                return invalid("sample " + std::to_string(i) + " has probability " + std::to_string(p) + " for class " +
                               std::to_string(c));
        }
    }

    ClassificationReport r;
    r.numClasses = numClasses;
    r.samples = static_cast<int64_t>(n);
    r.classNames = options.classNames;
    if (r.classNames.empty())
        for (size_t c = 0; c < k; ++c) r.classNames.push_back(std::to_string(c));

    // Predictions, confusion matrix, per-sample records.
    r.confusion.assign(k * k, 0);
    r.records.resize(n);
    for (size_t i = 0; i < n; ++i) {
        const double* row = probabilities.data() + i * k;
        const size_t pred = static_cast<size_t>(std::max_element(row, row + k) - row);
        const auto truth = static_cast<size_t>(labels[i]);
        ++r.confusion[truth * k + pred];
        SampleRecord& s = r.records[i];
        s.index = static_cast<int64_t>(i);
        if (!options.sources.empty()) s.source = options.sources[i];
        s.trueClass = labels[i];
        s.predicted = static_cast<int64_t>(pred);
        s.confidence = row[pred];
        s.loss = -std::log(std::clamp(row[truth], kProbabilityEpsilon, 1.0 - kProbabilityEpsilon));
    }
    int64_t trace = 0;
    for (size_t c = 0; c < k; ++c) trace += r.confusion[c * k + c];
    r.accuracy = n > 0 ? static_cast<double>(trace) / static_cast<double>(n) : 0.0;

    // Per class, macro and weighted averages.
    for (size_t c = 0; c < k; ++c) {
        int64_t support = 0, predicted = 0;
        for (size_t j = 0; j < k; ++j) {
            support += r.confusion[c * k + j];
            predicted += r.confusion[j * k + c];
        }
        const double tp = static_cast<double>(r.confusion[c * k + c]);
        ClassFigures f;
        f.name = r.classNames[c];
        f.support = support;
        f.precision = safeDivide(tp, static_cast<double>(predicted));
        f.recall = safeDivide(tp, static_cast<double>(support));
        f.f1 = safeDivide(2 * f.precision * f.recall, f.precision + f.recall);
        r.perClass.push_back(f);
        r.macro.precision += f.precision / static_cast<double>(k);
        r.macro.recall += f.recall / static_cast<double>(k);
        r.macro.f1 += f.f1 / static_cast<double>(k);
        r.macro.support += support;
        r.weighted.precision += f.precision * static_cast<double>(support);
        r.weighted.recall += f.recall * static_cast<double>(support);
        r.weighted.f1 += f.f1 * static_cast<double>(support);
        r.weighted.support += support;
    }
    if (r.weighted.support > 0) {
        const auto total = static_cast<double>(r.weighted.support);
        r.weighted.precision /= total;
        r.weighted.recall /= total;
        r.weighted.f1 /= total;
    }

    // One-vs-rest curves.
    std::vector<double> scores(n);
    std::vector<uint8_t> positive(n);
    double aucSum = 0;
    int aucCount = 0;
    for (size_t c = 0; c < k; ++c) {
        for (size_t i = 0; i < n; ++i) {
            scores[i] = probabilities[i * k + c];
            positive[i] = static_cast<size_t>(labels[i]) == c ? 1 : 0;
        }
        r.roc.push_back(rocCurve(scores, positive));
        r.pr.push_back(prCurve(scores, positive));
        if (r.roc.back().defined) {
            aucSum += r.roc.back().auc;
            ++aucCount;
        }
    }
    r.macroAuc = aucCount > 0 ? aucSum / aucCount : std::numeric_limits<double>::quiet_NaN();

    // Reliability bins of the top-label confidence.
    const int bins = options.calibrationBins;
    r.calibration.resize(static_cast<size_t>(bins));
    std::vector<double> confSum(static_cast<size_t>(bins), 0.0), rightSum(static_cast<size_t>(bins), 0.0);
    for (int b = 0; b < bins; ++b) {
        r.calibration[static_cast<size_t>(b)].lower = static_cast<double>(b) / bins;
        r.calibration[static_cast<size_t>(b)].upper = static_cast<double>(b + 1) / bins;
    }
    for (const SampleRecord& s : r.records) {
        const int b = std::clamp(static_cast<int>(std::floor(s.confidence * bins)), 0, bins - 1);
        ++r.calibration[static_cast<size_t>(b)].count;
        confSum[static_cast<size_t>(b)] += s.confidence;
        rightSum[static_cast<size_t>(b)] += s.correct() ? 1.0 : 0.0;
    }
    for (size_t b = 0; b < r.calibration.size(); ++b) {
        CalibrationBin& bin = r.calibration[b];
        if (bin.count == 0) continue;
        bin.meanConfidence = confSum[b] / static_cast<double>(bin.count);
        bin.accuracy = rightSum[b] / static_cast<double>(bin.count);
        r.expectedCalibrationError += static_cast<double>(bin.count) / static_cast<double>(n) *
                                      std::abs(bin.accuracy - bin.meanConfidence);
    }

    r.logLoss = logLoss(probabilities, labels, numClasses);
    sortRecords(r.records);
    return r;
}

Result<RegressionReport> evaluateRegression(std::span<const double> predictions, std::span<const double> truths,
                                            int64_t width, const std::vector<std::string>& sources) {
    if (width < 1) return invalid("a regression needs at least 1 output, got " + std::to_string(width));
    if (predictions.size() != truths.size() || predictions.size() % static_cast<size_t>(width) != 0)
        return invalid(std::to_string(predictions.size()) + " predictions and " + std::to_string(truths.size()) +
                       " true values do not form rows of " + std::to_string(width));
    const size_t w = static_cast<size_t>(width);
    const size_t n = predictions.size() / w;
    if (!sources.empty() && sources.size() != n)
        return invalid(std::to_string(sources.size()) + " sample sources given for " + std::to_string(n) + " samples");
    for (size_t i = 0; i < predictions.size(); ++i)
        if (!std::isfinite(predictions[i]) || !std::isfinite(truths[i]))
            return invalid("sample " + std::to_string(i / w) + " has a value that is not finite");
    RegressionReport r;
    r.samples = static_cast<int64_t>(n);
    r.width = width;
    r.residuals.resize(predictions.size());
    if (n == 0) return r;
    double absSum = 0, sqSum = 0;
    r.records.resize(n);
    for (size_t i = 0; i < n; ++i) {
        double rowSq = 0;
        for (size_t j = 0; j < w; ++j) {
            const double d = truths[i * w + j] - predictions[i * w + j];
            r.residuals[i * w + j] = d;
            absSum += std::abs(d);
            sqSum += d * d;
            rowSq += d * d;
        }
        SampleRecord& s = r.records[i];
        s.index = static_cast<int64_t>(i);
        if (!sources.empty()) s.source = sources[i];
        s.loss = rowSq / static_cast<double>(w);
    }
    const auto count = static_cast<double>(predictions.size());
    r.mae = absSum / count;
    r.mse = sqSum / count;
    r.rmse = std::sqrt(r.mse);
    double r2Sum = 0;
    for (size_t j = 0; j < w; ++j) {
        double mean = 0;
        for (size_t i = 0; i < n; ++i) mean += truths[i * w + j];
        mean /= static_cast<double>(n);
        double ssRes = 0, ssTot = 0;
        for (size_t i = 0; i < n; ++i) {
            const double d = truths[i * w + j] - predictions[i * w + j];
            const double t = truths[i * w + j] - mean;
            ssRes += d * d;
            ssTot += t * t;
        }
        r2Sum += ssTot != 0 ? 1.0 - ssRes / ssTot : (ssRes == 0 ? 1.0 : 0.0);
    }
    r.r2 = r2Sum / static_cast<double>(w);
    sortRecords(r.records);
    return r;
}

void sortRecords(std::vector<SampleRecord>& records) {
    std::stable_sort(records.begin(), records.end(), [](const SampleRecord& a, const SampleRecord& b) {
        const bool aWrong = a.trueClass >= 0 && !a.correct();
        const bool bWrong = b.trueClass >= 0 && !b.correct();
        if (aWrong != bWrong) return aWrong;
        if (aWrong && a.confidence != b.confidence) return a.confidence > b.confidence;
        return a.loss > b.loss;
    });
}

std::vector<double> toProbabilities(std::span<const float> outputs, int64_t width, bool fromLogits) {
    const size_t w = static_cast<size_t>(std::max<int64_t>(width, 1));
    const size_t n = outputs.size() / w;
    std::vector<double> out;
    if (w == 1) {
        out.resize(n * 2);
        for (size_t i = 0; i < n; ++i) {
            const double x = outputs[i];
            const double p = fromLogits ? 1.0 / (1.0 + std::exp(-x)) : std::clamp(x, 0.0, 1.0);
            out[2 * i] = 1.0 - p;
            out[2 * i + 1] = p;
        }
        return out;
    }
    out.resize(n * w);
    for (size_t i = 0; i < n; ++i) {
        const float* row = outputs.data() + i * w;
        double* dst = out.data() + i * w;
        if (fromLogits) {
            const double m = *std::max_element(row, row + w);
            double sum = 0;
            for (size_t j = 0; j < w; ++j) sum += dst[j] = std::exp(static_cast<double>(row[j]) - m);
            for (size_t j = 0; j < w; ++j) dst[j] /= sum;
        } else {
            for (size_t j = 0; j < w; ++j) dst[j] = row[j];
        }
    }
    return out;
}

float SampleFeatures::value(int64_t index, size_t f) const {
    if (index < 0 || index >= samples || f >= names.size()) return std::numeric_limits<float>::quiet_NaN();
    return values[static_cast<size_t>(index) * names.size() + f];
}

std::string SampleFeatures::text(int64_t index, size_t f) const {
    static const std::vector<std::string> none;
    return featureText(value(index, f), f < categories.size() ? categories[f] : none);
}

std::string featureText(float v, const std::vector<std::string>& categories) {
    if (std::isnan(v)) return {};
    if (!categories.empty()) {
        const auto k = static_cast<size_t>(v);
        return v >= 0 && k < categories.size() ? categories[k] : std::string();
    }
    char buffer[32];
    const auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
    return std::string(buffer, end);
}

}  // namespace kiln::engine::eval
