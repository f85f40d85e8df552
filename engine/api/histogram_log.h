// SPDX-License-Identifier: Apache-2.0
// The weight and gradient histograms of a run, kept in its folder as `histograms.jsonl`: one JSON
// line per recorded epoch, appended as training goes, so that a finished run shows them again.
#pragma once

#include <string>
#include <vector>

#include "engine/core/error.h"

namespace kiln::engine::api {

// The distribution of a parameter's values (or of its gradient) over equal-width buckets:
// bucket[i] values fell between bucketLimit[i - 1] and bucketLimit[i] (TensorBoard's layout).
struct Histogram {
    double min = 0, max = 0, num = 0, sum = 0, sumSquares = 0;
    std::vector<double> bucketLimit;
    std::vector<double> bucket;
};

// One parameter's weights and gradient at an epoch's end. gradients.num == 0 for parameters that
// do not train (frozen nodes, BatchNorm moving statistics).
struct ParamHistogram {
    std::string name;  // "dense/kernel"
    Histogram weights;
    Histogram gradients;
};

// "histograms.jsonl" inside a run folder.
std::string histogramLogPath(const std::string& runDir);

struct EpochHistograms {
    int epoch = 0;  // 1-based
    std::vector<ParamHistogram> params;
};

// One line: {"epoch": N, "params": [{"name", "weights": {...}, "gradients": {...}}]} with each
// histogram as {"min", "max", "num", "sum", "sum_squares", "limits": [...], "counts": [...]}.
std::string histogramLine(int epoch, const std::vector<ParamHistogram>& params);
// Appends histogramLine() and a newline to `path` (created when missing); FileWrite naming it.
Status appendHistograms(const std::string& path, int epoch, const std::vector<ParamHistogram>& params);
// Every epoch of a log, by epoch; a later line for the same epoch (a resumed run repeating it)
// replaces the earlier one. A torn last line (a crash mid-write) is left out. FileRead or
// ParseError naming the file and line otherwise.
Result<std::vector<EpochHistograms>> readHistograms(const std::string& path);

}  // namespace kiln::engine::api
