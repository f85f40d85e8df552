// SPDX-License-Identifier: Apache-2.0
// Per-sample transforms of the streaming pipeline (decode, resize, crops, flips, rotation,
// brightness/contrast, normalisation, tabular standardisation), configured from JSON. Random
// choices come from Philox keyed by (seed, epoch, sample index, transform position), so a sample
// gets the same augmentation whichever worker thread handles it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/core/error.h"
#include "engine/data/sample.h"
#include "engine/data/split.h"

namespace kiln::engine::data {

class SampleSource;

enum class TransformKind {
    Decode,              // encoded bytes -> pixels (channels 0 = as stored, 1 = grey, 3 = RGB)
    Resize,              // to height x width, or the shorter side to `shorterSide` (aspect kept)
    CenterCrop,          // height x width from the middle (offsets rounded down)
    RandomCrop,          // height x width at a random place, after zero `padding` on every side
    Flip,                // horizontal and/or vertical, each with `probability`
    Rotate,              // by an angle uniform in [minDegrees, maxDegrees] about the centre
    BrightnessContrast,  // x' = c*b*x + (1-c)*b*mean(x), b in 1±brightness, c in 1±contrast
    Normalize,           // x' = (x*scale - mean[ch]) / std[ch], result float
    Standardize,         // numeric column: (x - mean) / std fitted on the training split
};

const char* transformKindName(TransformKind kind);

struct Transform {
    TransformKind kind = TransformKind::Decode;
    std::string column;                        // empty: every image column (Standardize needs a column)
    int channels = 0;                          // Decode
    int height = 0, width = 0;                 // Resize, crops
    int shorterSide = 0;                       // Resize
    int interpolation = 1;                     // Resize, Rotate: cv::INTER_NEAREST 0, LINEAR 1, AREA 3
    int padding = 0;                           // RandomCrop
    bool horizontal = true, vertical = false;  // Flip
    float probability = 0.5f;                  // Flip
    float minDegrees = 0, maxDegrees = 0;      // Rotate
    float fill = 0;                            // Rotate: value of the uncovered corners
    float brightness = 0, contrast = 0;        // BrightnessContrast
    float scale = 1;                           // Normalize
    std::vector<float> mean, stddev;           // Normalize (1 or C values)
    Standardizer standardizer;                 // Standardize, after fit

    bool random() const;
};

// Normalisation presets: "unit" x/255 -> [0,1]; "imagenet" x/255 then ImageNet mean/std;
// "symmetric" x/127.5 - 1 -> [-1,1]; "centered" (x - 127) / 128.
Result<Transform> normalizePreset(const std::string& name);

class TransformList {
public:
    TransformList() = default;
    explicit TransformList(std::vector<Transform> items) : m_items(std::move(items)) {}

    // Reads the "transforms" array of a project's data section. Unknown types or settings and
    // bad values are ConfigError naming the field, e.g. "data.transforms[2].size".
    static Result<TransformList> fromJson(const nlohmann::json& array,
                                          const std::string& field = "data.transforms");
    // Named lists for kiln-data bench and quick starts: "none" (decode only), "unit"
    // (normalize to [0,1]), "imagenet-train" (random crop 224, horizontal flip, ImageNet
    // normalisation), "imagenet-eval" (shorter side 256, centre crop 224, ImageNet normalisation).
    static Result<TransformList> preset(const std::string& name);

    const std::vector<Transform>& items() const { return m_items; }
    std::vector<Transform>& items() { return m_items; }
    bool empty() const { return m_items.empty(); }
    // The number of leading transforms without randomness (what a cache may keep).
    size_t deterministicPrefix() const;
    bool needsFit() const;

    // Fits every Standardize transform on the samples `trainingIndices` of `source` (the column
    // as the source stores it). Fails when the column is missing, not numeric or not finite.
    Status fit(const SampleSource& source, std::span<const int64_t> trainingIndices);

    // Applies transforms [begin, end) to `sample` in place. Encoded pictures are decoded when a
    // transform needs pixels. A picture the transforms cannot handle (smaller than a crop, say)
    // is a bad-sample error naming its file.
    Status apply(Sample& sample, const std::vector<ColumnSpec>& specs, uint64_t seed, int epoch,
                 size_t begin = 0, size_t end = static_cast<size_t>(-1)) const;
    // Decodes whatever is still encoded (the last step before batching), with the options of
    // the column's decode transform.
    Status decodeRemaining(Sample& sample, const std::vector<ColumnSpec>& specs) const;

private:
    static constexpr size_t kNone = static_cast<size_t>(-1);

    Status applyUnchecked(Sample& sample, const std::vector<ColumnSpec>& specs, uint64_t seed, int epoch,
                          size_t begin, size_t end) const;
    DecodeOptions decodeOptionsFor(const std::string& column) const;
    // The transform in [ti, end) that decoding column `spec` may carry out itself: the first one
    // on that column's pixels when it is a centre crop, an unpadded random crop or a resize (decode
    // steps that change nothing are passed over). kNone otherwise.
    size_t fusableWithDecode(size_t ti, size_t end, const ColumnSpec& spec,
                             const DecodeOptions& options) const;

    std::vector<Transform> m_items;
};

}  // namespace kiln::engine::data
