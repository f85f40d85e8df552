// SPDX-License-Identifier: Apache-2.0
// Batch export of explanation overlays through forEachSample and one Explainer.
#include "engine/api/overlay_export.h"

#include <algorithm>
#include <filesystem>

namespace kiln::engine::api {

namespace fs = std::filesystem;

namespace {

std::string csvField(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

}  // namespace

std::string overlayFileName(int64_t index) {
    std::string digits = std::to_string(index);
    if (digits.size() < 5) digits.insert(0, 5 - digits.size(), '0');
    return digits + ".png";
}

Result<OverlayExportResult> exportOverlays(const io::Project& project, const std::string& projectPath,
                                           const EvaluationOptions& options, const OverlayExportOptions& what,
                                           const std::function<bool(int64_t, int64_t)>& progress) {
    if (what.folder.empty()) return Error(ErrorCode::InvalidArgument, "no folder for the overlays given").with("field", "folder");
    std::error_code ec;
    fs::create_directories(what.folder, ec);
    if (ec || !fs::is_directory(what.folder, ec))
        return Error(ErrorCode::FileWrite, "cannot create the overlay folder")
            .withFile(what.folder)
            .with("path", what.folder)
            .with("reason", ec ? ec.message() : "not a folder");
    std::vector<int64_t> chosen = what.samples;
    std::sort(chosen.begin(), chosen.end());
    chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
    if (!chosen.empty() && chosen.front() < 0)
        return Error(ErrorCode::InvalidArgument, "sample " + std::to_string(chosen.front()) + " does not exist")
            .with("field", "samples");

    ThreadPool pool(options.threads);
    KILN_ASSIGN(auto explainer, Explainer::create(project, options.weights, pool));
    const Shape& shape = explainer->inputShape();
    OverlayExportResult out;
    out.indexFile = (fs::path(what.folder) / "overlays.csv").string();
    std::string csv = "index,source,true_class,predicted_class,explained_class,score,file\n";
    const int64_t total = chosen.empty() ? -1 : static_cast<int64_t>(chosen.size());
    size_t next = 0;  // the next chosen sample
    Status st = forEachSample(project, projectPath, options, [&](const SampleInput& s) -> Result<bool> {
        if (!chosen.empty()) {
            if (s.index < chosen[next]) return true;
        }
        KILN_ASSIGN(auto heat, explainer->explain(s.data.data(), what.method, what.layer, what.cls));
        const auto picture = pictureRgb(s.data.data(), shape[1], shape[2], shape[3]);
        const std::string name = overlayFileName(s.index);
        KILN_TRY(writePng((fs::path(what.folder) / name).string(), overlayRgb(picture, heat, what.opacity), shape[1], shape[2]));
        csv += std::to_string(s.index) + "," + csvField(s.source) + "," + std::to_string(s.label) + "," +
               std::to_string(heat.predictedClass) + "," + std::to_string(heat.explainedClass) + "," +
               std::to_string(heat.score) + "," + name + "\n";
        ++out.written;
        if (progress && !progress(out.written, total)) {
            out.cancelled = true;
            return false;
        }
        if (chosen.empty()) return true;
        return ++next < chosen.size();
    });
    if (!st.ok()) return st.error();
    if (!out.cancelled && !chosen.empty() && next < chosen.size())
        return Error(ErrorCode::InvalidArgument, "sample " + std::to_string(chosen[next]) + " is beyond the end of the split")
            .with("field", "samples");
    KILN_TRY(io::writeFileAtomic(out.indexFile, csv));
    return out;
}

}  // namespace kiln::engine::api
