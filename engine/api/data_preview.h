// SPDX-License-Identifier: Apache-2.0
// The data workspace's two runs of the input pipeline: one picture through the transforms several
// times (the augmentation preview), and a short measuring run of the pipeline over an image folder
// (the pipeline panel's rate). Both are safe off the GUI thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/error.h"

namespace cv {
class Mat;
}

namespace kiln::engine::api {

// A picture ready to show: 8 bits per channel, `height` rows of `width * channels` bytes, with 1
// (grey), 3 (RGB) or 4 (RGBA) channels.
struct DisplayPicture {
    int height = 0;
    int width = 0;
    int channels = 0;
    std::vector<uint8_t> pixels;
};

// A decoded picture (HWC, RGB or grey order, as the data pipeline holds it) as a DisplayPicture:
// pictures of another depth than 8 bits are stretched from their smallest to their largest value
// onto 0..255. An empty picture (channels 0) for an empty matrix or another channel count.
DisplayPicture displayPicture(const cv::Mat& picture);

// The encoded picture in the file `path` through `transforms` (a data section's "transforms"
// array, docs/project-format.md) `passes` times, pass i drawing its random choices as epoch i of a
// run with `seed` does, each decoded at the end. Errors: the file cannot be read (FileNotFound,
// FileRead, with its path), a transform is invalid (ConfigError naming "transforms[i]..."), or the
// picture cannot be decoded or transformed (DataError naming the file).
Result<std::vector<DisplayPicture>> augmentPicture(const std::string& path, const nlohmann::json& transforms,
                                                   uint64_t seed, int passes);

// What a measuring run of the input pipeline delivered.
struct PipelineRate {
    int64_t samples = 0;
    int64_t batches = 0;
    int64_t skipped = 0;  // bad samples left out
    double seconds = 0;
    double samplesPerSecond = 0;
    double waitFraction = 0;           // the share of the time the reader waited for batches
    std::vector<int64_t> sampleShape;  // one sample of the first output, e.g. {28, 28, 1}
};

// Runs the input pipeline over the image folder `root` (class subfolders) with `transforms` and
// the data section's pipeline `settings` (batch_size, shuffle_buffer, workers, prefetch, cache) for
// about `seconds`, at most one epoch, and stops early when `stop` becomes true. Batches need one
// picture size: without a resize or crop among the transforms, pictures are resized to the size
// of the first readable one among the first 16. Errors: those of the folder, the transforms, the
// settings and the pipeline; DataError with the parameter "problem" set to "empty" when the folder
// holds no pictures and to "undecodable" when none of the first 16 can be decoded (the folder
// as the file).
Result<PipelineRate> measureImageFolderPipeline(const std::string& root, nlohmann::json transforms,
                                                const nlohmann::json& settings, double seconds,
                                                const std::atomic<bool>& stop);

}  // namespace kiln::engine::api
