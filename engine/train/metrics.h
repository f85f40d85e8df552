// SPDX-License-Identifier: Apache-2.0
// Streaming training/evaluation metrics with Keras names and semantics, and a confusion matrix.
// Accumulators are fixed-size: update() never allocates, results are deterministic.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/error.h"

namespace kiln::engine::train {

struct MetricOptions {
    int64_t k = 5;                // top_k metrics
    double threshold = 0.5;       // binary metrics; a probability in [0, 1]
    bool fromLogits = false;      // binary metrics: predictions are logits, not probabilities
    bool sparseTargets = false;   // "accuracy": targets are class indices, not one-hot rows
    int64_t numThresholds = 200;  // auc: evenly spaced thresholds, as Keras

    // ConfigError naming the field, e.g. "metrics.k".
    Status validate() const;
};

// A streaming metric. Layouts: predictions are [batch, width] row-major; targets are
// [batch, width] as well, except for metrics where sparseTargets() is true, whose targets are
// [batch] class indices stored as floats. Binary labels are positive when target > 0.5.
class Metric {
public:
    virtual ~Metric() = default;
    virtual void reset() = 0;
    virtual void update(const float* predictions, const float* targets, int64_t batch, int64_t width) = 0;
    // The value over everything since the last reset(); 0 when nothing was accumulated.
    virtual double result() const = 0;
    // The name it was created with (as Keras logs it), e.g. "acc" or "accuracy".
    virtual std::string name() const = 0;
    virtual bool sparseTargets() const { return false; }
    // An error a metric met in update() or result() (plugin metrics): the trainer stops with it.
    virtual Status status() const { return {}; }
    // The accumulators as numbers that add up across shards of the data: data-parallel training
    // sums every replica's counts and sets them on one metric to report the whole batch.
    // numCounts() of them; readCounts writes them to `out` without allocating.
    virtual size_t numCounts() const = 0;
    virtual void readCounts(double* out) const = 0;
    // Replaces the accumulators by `values` (numCounts() of them).
    virtual void setCounts(std::span<const double> values) = 0;
};

// Names accepted by makeMetric: accuracy (acc), categorical_accuracy,
// sparse_categorical_accuracy, top_k_categorical_accuracy, sparse_top_k_categorical_accuracy,
// binary_accuracy, precision, recall, auc, mse (mean_squared_error), mae (mean_absolute_error).
std::span<const std::string_view> metricNames();

// ConfigError (field "metrics") listing the valid names for an unknown one; the options'
// errors for invalid options.
//  - accuracy: width 1 -> binary_accuracy; else sparse_categorical_accuracy when
//    options.sparseTargets, otherwise categorical_accuracy (argmax vs argmax).
//  - top_k: the target is a hit when fewer than k classes score strictly higher (ties at the
//    boundary count as hits, like tf.math.in_top_k).
//  - binary_accuracy, mse, mae: per-sample mean over width, then mean over samples (Keras).
//  - precision, recall, auc: over all elements (flattened); auc is ROC AUC from a histogram over
//    numThresholds thresholds with trapezoidal interpolation, as keras.metrics.AUC.
Result<std::unique_ptr<Metric>> makeMetric(std::string_view name, const MetricOptions& options = {});

// Counts [true class][predicted class]. Predicted class: argmax of a row of width numClasses,
// or, for numClasses == 2 and width 1, prediction > threshold (on logit when fromLogits).
// True class: a class index (sparseTargets), argmax of a one-hot row, or target > 0.5 for
// width-1 binary rows.
class ConfusionMatrix {
public:
    explicit ConfusionMatrix(int64_t numClasses, bool sparseTargets = false, double threshold = 0.5,
                             bool fromLogits = false);

    int64_t numClasses() const { return m_numClasses; }
    void reset();
    // Returns ShapeMismatch when width fits neither layout above. Rows whose target is not a
    // valid class index are counted in skipped(), not in the matrix.
    Status update(const float* predictions, const float* targets, int64_t batch, int64_t width);

    int64_t count(int64_t trueClass, int64_t predictedClass) const {
        return m_counts[static_cast<size_t>(trueClass * m_numClasses + predictedClass)];
    }
    std::span<const int64_t> counts() const { return m_counts; }  // row-major [true][predicted]
    int64_t total() const { return m_total; }
    int64_t skipped() const { return m_skipped; }
    int64_t support(int64_t trueClass) const;   // row sum
    int64_t predicted(int64_t cls) const;       // column sum
    double precision(int64_t cls) const;        // 0 when the class was never predicted
    double recall(int64_t cls) const;           // 0 when the class never occurred
    double accuracy() const;                    // trace / total

    // An aligned text table (rows: true class, columns: predicted class) followed by per-class
    // precision, recall and support. classNames, when given, must have numClasses entries.
    std::string toText(const std::vector<std::string>& classNames = {}) const;

private:
    int64_t m_numClasses;
    bool m_sparseTargets;
    float m_threshold;  // compared with the raw prediction (a logit when fromLogits)
    std::vector<int64_t> m_counts;
    int64_t m_total = 0;
    int64_t m_skipped = 0;
};

}  // namespace kiln::engine::train
