// SPDX-License-Identifier: Apache-2.0
// The augmentation preview and the pipeline measurement of the data workspace, over engine/data.
#include "engine/api/data_preview.h"

#include <algorithm>
#include <chrono>

#include <opencv2/core.hpp>

#include "engine/data/byte_reader.h"
#include "engine/data/pipeline.h"
#include "engine/data/sample.h"
#include "engine/data/sources.h"
#include "engine/data/transforms.h"

namespace kiln::engine::api {

DisplayPicture displayPicture(const cv::Mat& picture) {
    DisplayPicture out;
    const int channels = picture.channels();
    if (picture.empty() || picture.dims != 2 || (channels != 1 && channels != 3 && channels != 4)) return out;
    cv::Mat m = picture;
    if (m.depth() != CV_8U) {
        double lo = 0, hi = 0;
        cv::minMaxLoc(m.reshape(1), &lo, &hi);
        const double scale = hi > lo ? 255.0 / (hi - lo) : 1.0;
        m.convertTo(m, CV_MAKETYPE(CV_8U, channels), scale, -lo * scale);
    }
    out.height = m.rows;
    out.width = m.cols;
    out.channels = channels;
    const size_t row = static_cast<size_t>(m.cols) * static_cast<size_t>(channels);
    out.pixels.resize(row * static_cast<size_t>(m.rows));
    for (int y = 0; y < m.rows; ++y) std::copy_n(m.ptr<uint8_t>(y), row, out.pixels.data() + row * static_cast<size_t>(y));
    return out;
}

Result<std::vector<DisplayPicture>> augmentPicture(const std::string& path, const nlohmann::json& transforms,
                                                   uint64_t seed, int passes) {
    KILN_ASSIGN(auto list, data::TransformList::fromJson(transforms));
    KILN_ASSIGN(const std::string bytes, data::readWholeFile(path));
    data::ColumnSpec spec;
    spec.name = "image";
    spec.image = true;
    const std::vector<data::ColumnSpec> specs{spec};
    std::vector<DisplayPicture> pictures;
    for (int pass = 0; pass < passes; ++pass) {
        data::Sample sample;
        sample.index = 0;
        sample.origin = path;
        data::SampleValue v;
        v.kind = data::SampleValue::Kind::Encoded;
        v.encoded = bytes;
        sample.values.push_back(std::move(v));
        KILN_TRY(list.apply(sample, specs, seed, pass));
        KILN_TRY(list.decodeRemaining(sample, specs));
        pictures.push_back(displayPicture(sample.values[0].image));
    }
    return pictures;
}

Result<PipelineRate> measureImageFolderPipeline(const std::string& root, nlohmann::json transforms,
                                                const nlohmann::json& settings, double seconds,
                                                const std::atomic<bool>& stop) {
    using namespace data;
    KILN_ASSIGN(auto source, ImageFolderSource::open(root));
    if (source->size() == 0)
        return Error(ErrorCode::DataError, "The folder " + root + " holds no pictures.")
            .withFile(root)
            .with("problem", "empty");
    // Batches need one picture size: without a resize or crop in the transforms, resize to the
    // size of the first readable picture.
    bool sized = false;
    if (transforms.is_array())
        for (const auto& t : transforms)
            if (t.is_object() && t.contains("type") && t["type"].is_string()) {
                const std::string type = t["type"].get<std::string>();
                if (type == "resize" || type == "center_crop" || type == "random_crop") sized = true;
            }
    if (!sized) {
        int h = 0, w = 0;
        for (int64_t i = 0; i < std::min<int64_t>(16, source->size()) && h == 0; ++i) {
            Sample s;
            if (!source->load(i, s).ok() || s.values.empty()) continue;
            auto m = decodeImage(s.values[0].encoded, s.origin);
            if (m.ok()) {
                h = m->rows;
                w = m->cols;
            }
        }
        if (h == 0)
            return Error(ErrorCode::DataError, "None of the first pictures in " + root + " could be decoded.")
                .withFile(root)
                .with("problem", "undecodable");
        if (!transforms.is_array()) transforms = nlohmann::json::array();
        transforms.push_back({{"type", "resize"}, {"size", {h, w}}});
    }
    KILN_ASSIGN(auto list, TransformList::fromJson(transforms));
    KILN_ASSIGN(auto options, PipelineOptions::fromJson(settings));
    KILN_ASSIGN(auto pipeline, Pipeline::create(source, std::move(list), std::move(options)));
    KILN_TRY(pipeline->startEpoch(0));
    PipelineRate out;
    if (const auto& shapes = pipeline->outputShapes(); !shapes.empty()) out.sampleShape = shapes[0].dims();
    const auto t0 = std::chrono::steady_clock::now();
    Batch batch;
    while (!stop.load()) {
        KILN_ASSIGN(const bool more, pipeline->next(batch));
        if (!more) break;
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() >= seconds) break;
    }
    pipeline->cancel();
    const PipelineStats stats = pipeline->stats();
    out.samples = stats.samples;
    out.batches = stats.batches;
    out.skipped = stats.skipped;
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out.samplesPerSecond = out.seconds > 0 ? static_cast<double>(out.samples) / out.seconds : 0;
    out.waitFraction = stats.waitFraction;
    return out;
}

}  // namespace kiln::engine::api
