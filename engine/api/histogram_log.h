// SPDX-License-Identifier: Apache-2.0
// The weight and gradient histograms of a run, kept in its folder as `histograms.jsonl`: one JSON
// line per recorded epoch, appended as training goes, so that a finished run shows them again.
#pragma once

#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/train/trainer.h"

namespace kiln::engine::api {

// "histograms.jsonl" inside a run folder.
std::string histogramLogPath(const std::string& runDir);

struct EpochHistograms {
    int epoch = 0;  // 1-based
    std::vector<train::ParamHistogram> params;
};

// One line: {"epoch": N, "params": [{"name", "weights": {...}, "gradients": {...}}]} with each
// histogram as {"min", "max", "num", "sum", "sum_squares", "limits": [...], "counts": [...]}.
std::string histogramLine(int epoch, const std::vector<train::ParamHistogram>& params);
// Appends histogramLine() and a newline to `path` (created when missing); FileWrite naming it.
Status appendHistograms(const std::string& path, int epoch, const std::vector<train::ParamHistogram>& params);
// Every epoch of a log, by epoch; a later line for the same epoch (a resumed run repeating it)
// replaces the earlier one. A torn last line (a crash mid-write) is left out. FileRead or
// ParseError naming the file and line otherwise.
Result<std::vector<EpochHistograms>> readHistograms(const std::string& path);

}  // namespace kiln::engine::api
