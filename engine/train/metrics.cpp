// SPDX-License-Identifier: Apache-2.0
// Metric accumulators (Keras formulas), the metric factory and the confusion matrix.
#include "engine/train/metrics.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

namespace kiln::engine::train {

namespace {

constexpr std::array<std::string_view, 14> kMetricNames = {
    "accuracy", "acc", "categorical_accuracy", "sparse_categorical_accuracy",
    "top_k_categorical_accuracy", "sparse_top_k_categorical_accuracy", "binary_accuracy",
    "precision", "recall", "auc", "mse", "mean_squared_error", "mae", "mean_absolute_error",
};

Error configError(const std::string& field, const std::string& message) {
    return Error(ErrorCode::ConfigError, message).with("field", field).with("reason", message);
}

// Index of the first maximum of x[0, n); NaNs never win (comparisons with NaN are false).
int64_t argmax(const float* x, int64_t n) {
    int64_t best = 0;
    float bestValue = x[0];
    for (int64_t j = 1; j < n; ++j) {
        if (x[j] > bestValue || (std::isnan(bestValue) && !std::isnan(x[j]))) {
            best = j;
            bestValue = x[j];
        }
    }
    return best;
}

// The decision threshold in prediction space: the probability itself, or its logit.
float decisionThreshold(double threshold, bool fromLogits) {
    if (!fromLogits) return static_cast<float>(threshold);
    if (threshold <= 0) return -std::numeric_limits<float>::infinity();
    if (threshold >= 1) return std::numeric_limits<float>::infinity();
    return static_cast<float>(std::log(threshold / (1.0 - threshold)));
}

bool positiveLabel(float target) { return target > 0.5f; }

// A class index stored as a float, or -1 when it is not an integer in [0, width).
int64_t classIndex(float target, int64_t width) {
    if (!(target >= 0.0f) || target >= static_cast<float>(width)) return -1;
    const auto idx = static_cast<int64_t>(target);
    return static_cast<float>(idx) == target ? idx : -1;
}

// Accumulates a mean of per-sample values (Keras MeanMetricWrapper with unit weights).
class MeanMetric : public Metric {
public:
    explicit MeanMetric(std::string name) : m_name(std::move(name)) {}
    void reset() override {
        m_total = 0.0;
        m_count = 0;
    }
    double result() const override { return m_count > 0 ? m_total / static_cast<double>(m_count) : 0.0; }
    std::string name() const override { return m_name; }
    size_t numCounts() const override { return 2; }
    void readCounts(double* out) const override {
        out[0] = m_total;
        out[1] = static_cast<double>(m_count);
    }
    void setCounts(std::span<const double> values) override {
        m_total = values[0];
        m_count = static_cast<int64_t>(values[1]);
    }

protected:
    double m_total = 0.0;
    int64_t m_count = 0;

private:
    std::string m_name;
};

class CategoricalAccuracy : public MeanMetric {
public:
    using MeanMetric::MeanMetric;
    void update(const float* predictions, const float* targets, int64_t batch, int64_t width) override {
        if (width <= 0) return;
        for (int64_t r = 0; r < batch; ++r) {
            const int64_t p = argmax(predictions + r * width, width);
            const int64_t t = argmax(targets + r * width, width);
            m_total += p == t ? 1.0 : 0.0;
        }
        m_count += batch;
    }
};

class SparseCategoricalAccuracy : public MeanMetric {
public:
    using MeanMetric::MeanMetric;
    bool sparseTargets() const override { return true; }
    void update(const float* predictions, const float* targets, int64_t batch, int64_t width) override {
        if (width <= 0) return;
        for (int64_t r = 0; r < batch; ++r) {
            // Keras compares the label with the argmax cast to the label's type.
            const int64_t p = argmax(predictions + r * width, width);
            m_total += targets[r] == static_cast<float>(p) ? 1.0 : 0.0;
        }
        m_count += batch;
    }
};

class BinaryAccuracy : public MeanMetric {
public:
    BinaryAccuracy(std::string name, double threshold, bool fromLogits)
        : MeanMetric(std::move(name)), m_threshold(decisionThreshold(threshold, fromLogits)) {}
    void update(const float* predictions, const float* targets, int64_t batch, int64_t width) override {
        if (width <= 0) return;
        for (int64_t r = 0; r < batch; ++r) {
            int64_t hits = 0;
            for (int64_t j = 0; j < width; ++j) {
                const int64_t i = r * width + j;
                hits += (predictions[i] > m_threshold) == positiveLabel(targets[i]) ? 1 : 0;
            }
            m_total += static_cast<double>(hits) / static_cast<double>(width);
        }
        m_count += batch;
    }

private:
    float m_threshold;
};

// "accuracy": Keras picks binary, sparse categorical or categorical accuracy from the shapes.
class Accuracy : public MeanMetric {
public:
    Accuracy(std::string name, const MetricOptions& o)
        : MeanMetric(std::move(name)), m_sparse(o.sparseTargets),
          m_threshold(decisionThreshold(o.threshold, o.fromLogits)) {}
    bool sparseTargets() const override { return m_sparse; }
    void update(const float* predictions, const float* targets, int64_t batch, int64_t width) override {
        if (width <= 0) return;
        for (int64_t r = 0; r < batch; ++r) {
            const float* pr = predictions + r * width;
            bool hit;
            if (width == 1) {
                hit = (pr[0] > m_threshold) == positiveLabel(targets[r]);
            } else if (m_sparse) {
                hit = targets[r] == static_cast<float>(argmax(pr, width));
            } else {
                hit = argmax(pr, width) == argmax(targets + r * width, width);
            }
            m_total += hit ? 1.0 : 0.0;
        }
        m_count += batch;
    }

private:
    bool m_sparse;
    float m_threshold;
};

class TopKAccuracy : public MeanMetric {
public:
    TopKAccuracy(std::string name, int64_t k, bool sparse) : MeanMetric(std::move(name)), m_k(k), m_sparse(sparse) {}
    bool sparseTargets() const override { return m_sparse; }
    void update(const float* predictions, const float* targets, int64_t batch, int64_t width) override {
        if (width <= 0) return;
        for (int64_t r = 0; r < batch; ++r) {
            const float* pr = predictions + r * width;
            const int64_t t = m_sparse ? classIndex(targets[r], width) : argmax(targets + r * width, width);
            bool hit = false;
            if (t >= 0 && !std::isnan(pr[t])) {
                int64_t higher = 0;
                for (int64_t j = 0; j < width; ++j) higher += pr[j] > pr[t] ? 1 : 0;
                hit = higher < m_k;
            }
            m_total += hit ? 1.0 : 0.0;
        }
        m_count += batch;
    }

private:
    int64_t m_k;
    bool m_sparse;
};

class MeanError : public MeanMetric {
public:
    MeanError(std::string name, bool squared) : MeanMetric(std::move(name)), m_squared(squared) {}
    void update(const float* predictions, const float* targets, int64_t batch, int64_t width) override {
        if (width <= 0) return;
        for (int64_t r = 0; r < batch; ++r) {
            double sum = 0.0;
            for (int64_t j = 0; j < width; ++j) {
                const double d = static_cast<double>(predictions[r * width + j]) - targets[r * width + j];
                sum += m_squared ? d * d : std::abs(d);
            }
            m_total += sum / static_cast<double>(width);
        }
        m_count += batch;
    }

private:
    bool m_squared;
};

// Binary precision or recall at one threshold over all elements (keras.metrics.Precision/Recall).
class PrecisionRecall : public Metric {
public:
    PrecisionRecall(std::string name, bool precision, double threshold, bool fromLogits)
        : m_name(std::move(name)), m_precision(precision), m_threshold(decisionThreshold(threshold, fromLogits)) {}
    void reset() override { m_tp = m_fp = m_fn = 0; }
    void update(const float* predictions, const float* targets, int64_t batch, int64_t width) override {
        const int64_t n = batch * width;
        for (int64_t i = 0; i < n; ++i) {
            const bool predicted = predictions[i] > m_threshold;
            const bool actual = positiveLabel(targets[i]);
            m_tp += predicted && actual ? 1 : 0;
            m_fp += predicted && !actual ? 1 : 0;
            m_fn += !predicted && actual ? 1 : 0;
        }
    }
    double result() const override {
        const int64_t denom = m_tp + (m_precision ? m_fp : m_fn);
        return denom > 0 ? static_cast<double>(m_tp) / static_cast<double>(denom) : 0.0;
    }
    std::string name() const override { return m_name; }
    size_t numCounts() const override { return 3; }
    void readCounts(double* out) const override {
        out[0] = static_cast<double>(m_tp);
        out[1] = static_cast<double>(m_fp);
        out[2] = static_cast<double>(m_fn);
    }
    void setCounts(std::span<const double> values) override {
        m_tp = static_cast<int64_t>(values[0]);
        m_fp = static_cast<int64_t>(values[1]);
        m_fn = static_cast<int64_t>(values[2]);
    }

private:
    std::string m_name;
    bool m_precision;
    float m_threshold;
    int64_t m_tp = 0, m_fp = 0, m_fn = 0;
};

// keras.metrics.AUC (curve="ROC", summation_method="interpolation"): thresholds
// {-eps, 1/(n-1), ..., (n-2)/(n-1), 1+eps}. A score p lies above threshold i exactly when its
// bucket ceil(p (n-1)) - 1 (clamped at 0) is >= i, so a per-bucket histogram of positives and
// negatives gives every threshold's confusion counts by suffix sums: memory O(n), not O(samples).
class RocAuc : public Metric {
public:
    RocAuc(std::string name, int64_t numThresholds, bool fromLogits)
        : m_name(std::move(name)), m_fromLogits(fromLogits),
          m_positives(static_cast<size_t>(numThresholds), 0), m_negatives(static_cast<size_t>(numThresholds), 0) {}
    void reset() override {
        std::fill(m_positives.begin(), m_positives.end(), 0);
        std::fill(m_negatives.begin(), m_negatives.end(), 0);
    }
    void update(const float* predictions, const float* targets, int64_t batch, int64_t width) override {
        const int64_t n = batch * width;
        const float scale = static_cast<float>(m_positives.size() - 1);
        for (int64_t i = 0; i < n; ++i) {
            float p = predictions[i];
            if (m_fromLogits) p = 1.0f / (1.0f + std::exp(-p));
            // Keras clips scores to [0, 1]; NaN scores land in the lowest bucket.
            p = std::isnan(p) ? 0.0f : std::clamp(p, 0.0f, 1.0f);
            const auto bucket = static_cast<size_t>(std::max(std::ceil(p * scale) - 1.0f, 0.0f));
            if (positiveLabel(targets[i]))
                ++m_positives[bucket];
            else
                ++m_negatives[bucket];
        }
    }
    double result() const override {
        double totalPos = 0, totalNeg = 0;
        for (size_t b = 0; b < m_positives.size(); ++b) {
            totalPos += static_cast<double>(m_positives[b]);
            totalNeg += static_cast<double>(m_negatives[b]);
        }
        // Walk thresholds from the highest down; tp/fp at threshold i are suffix sums from i.
        // divide_no_nan: with no positives (negatives) the rates are 0, so the area is 0.
        const double posScale = totalPos > 0 ? 1.0 / totalPos : 0.0;
        const double negScale = totalNeg > 0 ? 1.0 / totalNeg : 0.0;
        double tp = 0, fp = 0, area = 0;
        double prevRecall = 0, prevFpr = 0;  // threshold n-1 (1 + eps): nothing above it
        for (size_t i = m_positives.size() - 1; i-- > 0;) {
            tp += static_cast<double>(m_positives[i]);
            fp += static_cast<double>(m_negatives[i]);
            const double recall = tp * posScale;
            const double fpr = fp * negScale;
            area += (fpr - prevFpr) * (recall + prevRecall) * 0.5;
            prevRecall = recall;
            prevFpr = fpr;
        }
        return area;
    }
    std::string name() const override { return m_name; }
    size_t numCounts() const override { return 2 * m_positives.size(); }
    void readCounts(double* out) const override {
        const size_t n = m_positives.size();
        for (size_t b = 0; b < n; ++b) {
            out[b] = static_cast<double>(m_positives[b]);
            out[n + b] = static_cast<double>(m_negatives[b]);
        }
    }
    void setCounts(std::span<const double> values) override {
        const size_t n = m_positives.size();
        for (size_t b = 0; b < n; ++b) {
            m_positives[b] = static_cast<int64_t>(values[b]);
            m_negatives[b] = static_cast<int64_t>(values[n + b]);
        }
    }

private:
    std::string m_name;
    bool m_fromLogits;
    std::vector<int64_t> m_positives;  // per bucket
    std::vector<int64_t> m_negatives;
};

std::string joinedNames() {
    std::string out;
    for (std::string_view n : kMetricNames) {
        if (!out.empty()) out += ", ";
        out += n;
    }
    return out;
}

}  // namespace

Status MetricOptions::validate() const {
    if (k < 1) return configError("metrics.k", "metrics.k must be >= 1");
    if (!(threshold >= 0.0 && threshold <= 1.0))
        return configError("metrics.threshold", "metrics.threshold must be in [0, 1]");
    if (numThresholds < 2) return configError("metrics.num_thresholds", "metrics.num_thresholds must be > 1");
    return okStatus();
}

std::span<const std::string_view> metricNames() { return kMetricNames; }

Result<std::unique_ptr<Metric>> makeMetric(std::string_view name, const MetricOptions& options) {
    KILN_TRY(options.validate());
    std::string n(name);
    std::unique_ptr<Metric> m;
    if (name == "accuracy" || name == "acc")
        m = std::make_unique<Accuracy>(n, options);
    else if (name == "categorical_accuracy")
        m = std::make_unique<CategoricalAccuracy>(n);
    else if (name == "sparse_categorical_accuracy")
        m = std::make_unique<SparseCategoricalAccuracy>(n);
    else if (name == "top_k_categorical_accuracy")
        m = std::make_unique<TopKAccuracy>(n, options.k, false);
    else if (name == "sparse_top_k_categorical_accuracy")
        m = std::make_unique<TopKAccuracy>(n, options.k, true);
    else if (name == "binary_accuracy")
        m = std::make_unique<BinaryAccuracy>(n, options.threshold, options.fromLogits);
    else if (name == "precision")
        m = std::make_unique<PrecisionRecall>(n, true, options.threshold, options.fromLogits);
    else if (name == "recall")
        m = std::make_unique<PrecisionRecall>(n, false, options.threshold, options.fromLogits);
    else if (name == "auc")
        m = std::make_unique<RocAuc>(n, options.numThresholds, options.fromLogits);
    else if (name == "mse" || name == "mean_squared_error")
        m = std::make_unique<MeanError>(n, true);
    else if (name == "mae" || name == "mean_absolute_error")
        m = std::make_unique<MeanError>(n, false);
    else
        return configError("metrics", "Unknown metric \"" + n + "\"; valid metrics: " + joinedNames() + ".")
            .with("metric", n);
    return m;
}

ConfusionMatrix::ConfusionMatrix(int64_t numClasses, bool sparseTargets, double threshold, bool fromLogits)
    : m_numClasses(std::max<int64_t>(numClasses, 1)), m_sparseTargets(sparseTargets),
      m_threshold(decisionThreshold(threshold, fromLogits)),
      m_counts(static_cast<size_t>(m_numClasses * m_numClasses), 0) {}

void ConfusionMatrix::reset() {
    std::fill(m_counts.begin(), m_counts.end(), 0);
    m_total = 0;
    m_skipped = 0;
}

Status ConfusionMatrix::update(const float* predictions, const float* targets, int64_t batch, int64_t width) {
    const bool binary = width == 1 && m_numClasses == 2;
    if (!binary && width != m_numClasses)
        return Error(ErrorCode::ShapeMismatch, "Confusion matrix for " + std::to_string(m_numClasses) +
                                                   " classes got predictions of width " + std::to_string(width) + ".")
            .with("reason", "width");
    for (int64_t r = 0; r < batch; ++r) {
        int64_t predicted, actual;
        if (binary) {
            predicted = predictions[r] > m_threshold ? 1 : 0;
            actual = m_sparseTargets ? classIndex(targets[r], 2) : (positiveLabel(targets[r]) ? 1 : 0);
        } else {
            predicted = argmax(predictions + r * width, width);
            actual = m_sparseTargets ? classIndex(targets[r], width) : argmax(targets + r * width, width);
        }
        if (actual < 0) {
            ++m_skipped;
            continue;
        }
        ++m_counts[static_cast<size_t>(actual * m_numClasses + predicted)];
        ++m_total;
    }
    return okStatus();
}

int64_t ConfusionMatrix::support(int64_t trueClass) const {
    int64_t s = 0;
    for (int64_t p = 0; p < m_numClasses; ++p) s += count(trueClass, p);
    return s;
}

int64_t ConfusionMatrix::predicted(int64_t cls) const {
    int64_t s = 0;
    for (int64_t t = 0; t < m_numClasses; ++t) s += count(t, cls);
    return s;
}

double ConfusionMatrix::precision(int64_t cls) const {
    const int64_t col = predicted(cls);
    return col > 0 ? static_cast<double>(count(cls, cls)) / static_cast<double>(col) : 0.0;
}

double ConfusionMatrix::recall(int64_t cls) const {
    const int64_t row = support(cls);
    return row > 0 ? static_cast<double>(count(cls, cls)) / static_cast<double>(row) : 0.0;
}

double ConfusionMatrix::accuracy() const {
    int64_t trace = 0;
    for (int64_t c = 0; c < m_numClasses; ++c) trace += count(c, c);
    return m_total > 0 ? static_cast<double>(trace) / static_cast<double>(m_total) : 0.0;
}

std::string ConfusionMatrix::toText(const std::vector<std::string>& classNames) const {
    const bool named = static_cast<int64_t>(classNames.size()) == m_numClasses;
    auto label = [&](int64_t c) { return named ? classNames[static_cast<size_t>(c)] : std::to_string(c); };
    const std::string corner = "true \\ pred";
    size_t labelWidth = corner.size();
    size_t cellWidth = 1;
    for (int64_t c = 0; c < m_numClasses; ++c) {
        labelWidth = std::max(labelWidth, label(c).size());
        cellWidth = std::max(cellWidth, label(c).size());
    }
    for (int64_t v : m_counts) cellWidth = std::max(cellWidth, std::to_string(v).size());
    auto pad = [](const std::string& s, size_t w, bool right) {
        const std::string fill(w > s.size() ? w - s.size() : 0, ' ');
        return right ? fill + s : s + fill;
    };

    std::string out = pad(corner, labelWidth, false);
    for (int64_t c = 0; c < m_numClasses; ++c) out += "  " + pad(label(c), cellWidth, true);
    out += '\n';
    for (int64_t t = 0; t < m_numClasses; ++t) {
        out += pad(label(t), labelWidth, false);
        for (int64_t p = 0; p < m_numClasses; ++p) out += "  " + pad(std::to_string(count(t, p)), cellWidth, true);
        out += '\n';
    }
    out += '\n';
    out += pad("class", labelWidth, false) + "  precision     recall    support\n";
    char buf[64];
    for (int64_t c = 0; c < m_numClasses; ++c) {
        std::snprintf(buf, sizeof buf, "  %9.4f  %9.4f  %9lld", precision(c), recall(c),
                      static_cast<long long>(support(c)));
        out += pad(label(c), labelWidth, false) + buf + '\n';
    }
    std::snprintf(buf, sizeof buf, "accuracy %.4f over %lld samples", accuracy(), static_cast<long long>(m_total));
    out += buf;
    if (m_skipped > 0) out += " (" + std::to_string(m_skipped) + " skipped: invalid target)";
    out += '\n';
    return out;
}

}  // namespace kiln::engine::train
