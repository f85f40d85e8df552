// SPDX-License-Identifier: Apache-2.0
// Batch export of explanation overlays: chosen samples of a split (or all of them) explained with
// Grad-CAM or saliency and written as PNG pictures into a folder, with an index CSV. The work of
// kiln-eval --explain for a chosen set of samples, reporting progress and stopping when asked.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/api/evaluation.h"
#include "engine/api/explanation.h"
#include "engine/io/project.h"

namespace kiln::engine::api {

struct OverlayExportOptions {
    ExplainMethod method = ExplainMethod::GradCam;
    std::string layer;               // Grad-CAM's node; empty: the default layer
    std::optional<int64_t> cls;      // the class explained; default the predicted one
    float opacity = 0.5f;
    std::vector<int64_t> samples;    // indices in the split; empty: every sample
    std::string folder;              // made when missing
};

struct OverlayExportResult {
    int64_t written = 0;
    std::string indexFile;  // <folder>/overlays.csv
    bool cancelled = false;
};

// The file name of sample `index`'s overlay: 00042.png (five digits at least, as kiln-eval).
std::string overlayFileName(int64_t index);

// Explains the samples and writes <folder>/<index>.png for each, then <folder>/overlays.csv with
// `index,source,true_class,predicted_class,explained_class,score,file` (CSV quoting; one line per
// written picture, in split order). `progress(done, total)` is called after each picture; when it
// returns false the export stops, the index lists what was written and `cancelled` is set. The
// pass over the split ends after the last chosen sample. Errors name the file, field or node.
Result<OverlayExportResult> exportOverlays(const io::Project& project, const std::string& projectPath,
                                           const EvaluationOptions& options, const OverlayExportOptions& what,
                                           const std::function<bool(int64_t done, int64_t total)>& progress = {});

}  // namespace kiln::engine::api
