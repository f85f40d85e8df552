// SPDX-License-Identifier: Apache-2.0
// The per-sample transforms (OpenCV) and their JSON form.
#include "engine/data/transforms.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <nlohmann/json.hpp>
#include <opencv2/imgproc.hpp>

#include "engine/core/rng.h"
#include "engine/data/jpeg_decoder.h"
#include "engine/data/sources.h"

namespace kiln::engine::data {

using nlohmann::json;

const char* transformKindName(TransformKind kind) {
    switch (kind) {
    case TransformKind::Decode:
        return "decode";
    case TransformKind::Resize:
        return "resize";
    case TransformKind::CenterCrop:
        return "center_crop";
    case TransformKind::RandomCrop:
        return "random_crop";
    case TransformKind::Flip:
        return "flip";
    case TransformKind::Rotate:
        return "rotate";
    case TransformKind::BrightnessContrast:
        return "brightness_contrast";
    case TransformKind::Normalize:
        return "normalize";
    case TransformKind::Standardize:
        return "standardize";
    }
    return "?";
}

bool Transform::random() const {
    switch (kind) {
    case TransformKind::RandomCrop:
        return true;
    case TransformKind::Flip:
        return probability > 0.0f && probability < 1.0f;
    case TransformKind::Rotate:
        return minDegrees != maxDegrees;
    case TransformKind::BrightnessContrast:
        return brightness > 0.0f || contrast > 0.0f;
    default:
        return false;
    }
}

Result<Transform> normalizePreset(const std::string& name) {
    Transform t;
    t.kind = TransformKind::Normalize;
    if (name == "unit") {
        t.scale = 1.0f / 255.0f;
        t.mean = {0.0f};
        t.stddev = {1.0f};
    } else if (name == "imagenet") {
        t.scale = 1.0f / 255.0f;
        t.mean = {0.485f, 0.456f, 0.406f};
        t.stddev = {0.229f, 0.224f, 0.225f};
    } else if (name == "symmetric") {
        t.scale = 1.0f / 127.5f;
        t.mean = {1.0f};
        t.stddev = {1.0f};
    } else if (name == "centered") {
        t.scale = 1.0f;
        t.mean = {127.0f};
        t.stddev = {128.0f};
    } else {
        return Error(ErrorCode::ConfigError,
                     "Unknown normalisation preset \"" + name + "\" (unit, imagenet, symmetric, centered).")
            .with("field", "preset")
            .with("reason", "unknown preset");
    }
    return t;
}

// ---------------------------------------------------------------------------------------------
// JSON

namespace {

Error configError(const std::string& field, const std::string& message) {
    return Error(ErrorCode::ConfigError, field + ": " + message).with("field", field).with("reason", message);
}

Status readSize(const json& j, const std::string& field, int* h, int* w) {
    if (j.is_number_integer() && j.get<int64_t>() > 0) {
        *h = *w = static_cast<int>(j.get<int64_t>());
        return okStatus();
    }
    if (j.is_array() && j.size() == 2 && j[0].is_number_integer() && j[1].is_number_integer() &&
        j[0].get<int64_t>() > 0 && j[1].get<int64_t>() > 0) {
        *h = static_cast<int>(j[0].get<int64_t>());
        *w = static_cast<int>(j[1].get<int64_t>());
        return okStatus();
    }
    return configError(field, "expected a positive size or [height, width]");
}

Result<float> readFloat(const json& j, const std::string& field, float lo, float hi) {
    if (!j.is_number()) return configError(field, "expected a number");
    const double v = j.get<double>();
    if (!(v >= lo && v <= hi))
        return configError(field, "must lie in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return static_cast<float>(v);
}

Result<std::vector<float>> readFloats(const json& j, const std::string& field) {
    std::vector<float> out;
    if (j.is_number()) return std::vector<float>{j.get<float>()};
    if (!j.is_array() || j.empty()) return configError(field, "expected a number or a list of numbers");
    for (const auto& v : j) {
        if (!v.is_number()) return configError(field, "expected a list of numbers");
        out.push_back(v.get<float>());
    }
    return out;
}

Result<int> readInterpolation(const json& j, const std::string& field) {
    const std::string s = j.is_string() ? j.get<std::string>() : std::string();
    if (s == "nearest") return static_cast<int>(cv::INTER_NEAREST);
    if (s == "bilinear") return static_cast<int>(cv::INTER_LINEAR);
    if (s == "area") return static_cast<int>(cv::INTER_AREA);
    if (s == "bicubic") return static_cast<int>(cv::INTER_CUBIC);
    return configError(field, "expected nearest, bilinear, bicubic or area");
}

}  // namespace

Result<TransformList> TransformList::fromJson(const json& array, const std::string& field) {
    if (!array.is_array()) return configError(field, "expected a list of transforms");
    std::vector<Transform> items;
    for (size_t i = 0; i < array.size(); ++i) {
        const std::string at = field + "[" + std::to_string(i) + "]";
        const json& j = array[i];
        if (!j.is_object() || !j.contains("type") || !j["type"].is_string())
            return configError(at, "each transform is an object with a \"type\"");
        const std::string type = j["type"].get<std::string>();
        Transform t;
        std::set<std::string> allowed{"type", "column"};
        if (type == "decode") {
            t.kind = TransformKind::Decode;
            allowed.insert("channels");
            if (j.contains("channels")) {
                const json& c = j["channels"];
                if (!c.is_number_integer() || (c.get<int>() != 0 && c.get<int>() != 1 && c.get<int>() != 3))
                    return configError(at + ".channels", "expected 0 (as stored), 1 or 3");
                t.channels = c.get<int>();
            }
        } else if (type == "resize") {
            t.kind = TransformKind::Resize;
            allowed.insert({"size", "shorter_side", "interpolation"});
            if (j.contains("size") == j.contains("shorter_side"))
                return configError(at, "resize needs either \"size\" or \"shorter_side\"");
            if (j.contains("size")) KILN_TRY(readSize(j["size"], at + ".size", &t.height, &t.width));
            if (j.contains("shorter_side")) {
                if (!j["shorter_side"].is_number_integer() || j["shorter_side"].get<int64_t>() <= 0)
                    return configError(at + ".shorter_side", "expected a positive whole number");
                t.shorterSide = j["shorter_side"].get<int>();
            }
            if (j.contains("interpolation")) {
                KILN_ASSIGN(t.interpolation, readInterpolation(j["interpolation"], at + ".interpolation"));
            }
        } else if (type == "center_crop" || type == "random_crop") {
            t.kind = type == "center_crop" ? TransformKind::CenterCrop : TransformKind::RandomCrop;
            allowed.insert("size");
            if (t.kind == TransformKind::RandomCrop) allowed.insert("padding");
            if (!j.contains("size")) return configError(at + ".size", "a crop needs a size");
            KILN_TRY(readSize(j["size"], at + ".size", &t.height, &t.width));
            if (j.contains("padding")) {
                if (!j["padding"].is_number_integer() || j["padding"].get<int64_t>() < 0)
                    return configError(at + ".padding", "expected a whole number >= 0");
                t.padding = j["padding"].get<int>();
            }
        } else if (type == "flip") {
            t.kind = TransformKind::Flip;
            allowed.insert({"horizontal", "vertical", "probability"});
            if (j.contains("horizontal")) {
                if (!j["horizontal"].is_boolean())
                    return configError(at + ".horizontal", "expected true or false");
                t.horizontal = j["horizontal"].get<bool>();
            }
            if (j.contains("vertical")) {
                if (!j["vertical"].is_boolean())
                    return configError(at + ".vertical", "expected true or false");
                t.vertical = j["vertical"].get<bool>();
            }
            if (j.contains("probability")) {
                KILN_ASSIGN(t.probability, readFloat(j["probability"], at + ".probability", 0, 1));
            }
        } else if (type == "rotate") {
            t.kind = TransformKind::Rotate;
            allowed.insert({"degrees", "range", "fill", "interpolation"});
            if (j.contains("degrees") == j.contains("range"))
                return configError(at, "rotate needs either \"degrees\" or \"range\"");
            if (j.contains("degrees")) {
                KILN_ASSIGN(float d, readFloat(j["degrees"], at + ".degrees", 0, 180));
                t.minDegrees = -d;
                t.maxDegrees = d;
            } else {
                KILN_ASSIGN(auto r, readFloats(j["range"], at + ".range"));
                if (r.size() != 2 || r[0] > r[1])
                    return configError(at + ".range", "expected [low, high] degrees");
                t.minDegrees = r[0];
                t.maxDegrees = r[1];
            }
            if (j.contains("fill")) {
                KILN_ASSIGN(t.fill, readFloat(j["fill"], at + ".fill", -1e9f, 1e9f));
            }
            if (j.contains("interpolation")) {
                KILN_ASSIGN(t.interpolation, readInterpolation(j["interpolation"], at + ".interpolation"));
            }
        } else if (type == "brightness_contrast") {
            t.kind = TransformKind::BrightnessContrast;
            allowed.insert({"brightness", "contrast"});
            if (j.contains("brightness")) {
                KILN_ASSIGN(t.brightness, readFloat(j["brightness"], at + ".brightness", 0, 1));
            }
            if (j.contains("contrast")) {
                KILN_ASSIGN(t.contrast, readFloat(j["contrast"], at + ".contrast", 0, 1));
            }
        } else if (type == "normalize") {
            allowed.insert({"preset", "scale", "mean", "std"});
            if (j.contains("preset")) {
                if (!j["preset"].is_string()) return configError(at + ".preset", "expected a preset name");
                auto p = normalizePreset(j["preset"].get<std::string>());
                if (!p.ok())
                    return configError(at + ".preset", p.error().param("reason") + " \"" +
                                                           j["preset"].get<std::string>() +
                                                           "\" (unit, imagenet, symmetric, centered)");
                t = p.value();
                if (j.contains("scale") || j.contains("mean") || j.contains("std"))
                    return configError(at, "give either a preset or scale/mean/std");
            } else {
                t.kind = TransformKind::Normalize;
                t.scale = 1.0f / 255.0f;
                t.mean = {0.0f};
                t.stddev = {1.0f};
                if (j.contains("scale")) {
                    KILN_ASSIGN(t.scale, readFloat(j["scale"], at + ".scale", -1e9f, 1e9f));
                }
                if (j.contains("mean")) {
                    KILN_ASSIGN(t.mean, readFloats(j["mean"], at + ".mean"));
                }
                if (j.contains("std")) {
                    KILN_ASSIGN(t.stddev, readFloats(j["std"], at + ".std"));
                }
                for (float s : t.stddev)
                    if (!(s > 0)) return configError(at + ".std", "every standard deviation must be > 0");
            }
        } else if (type == "standardize") {
            t.kind = TransformKind::Standardize;
            if (!j.contains("column") || !j["column"].is_string() || j["column"].get<std::string>().empty())
                return configError(at + ".column", "standardize needs the numeric column to standardise");
        } else {
            return configError(
                at + ".type",
                "unknown transform \"" + type +
                    "\" (decode, resize, center_crop, random_crop, flip, rotate, brightness_contrast, "
                    "normalize, standardize)");
        }
        for (const auto& [key, value] : j.items())
            if (!allowed.count(key)) return configError(at + "." + key, "is not a known setting of " + type);
        if (j.contains("column")) {
            if (!j["column"].is_string()) return configError(at + ".column", "expected a column name");
            t.column = j["column"].get<std::string>();
        }
        items.push_back(std::move(t));
    }
    return TransformList(std::move(items));
}

Result<TransformList> TransformList::preset(const std::string& name) {
    const char* text = nullptr;
    if (name == "none")
        text = R"([{"type": "decode"}])";
    else if (name == "unit")
        text = R"([{"type": "normalize", "preset": "unit"}])";
    else if (name == "imagenet-train")
        text = R"([{"type": "decode", "channels": 3}, {"type": "random_crop", "size": 224},
                   {"type": "flip", "horizontal": true}, {"type": "normalize", "preset": "imagenet"}])";
    else if (name == "imagenet-eval")
        text = R"([{"type": "decode", "channels": 3}, {"type": "resize", "shorter_side": 256},
                   {"type": "center_crop", "size": 224}, {"type": "normalize", "preset": "imagenet"}])";
    if (text == nullptr)
        return Error(ErrorCode::ConfigError,
                     "Unknown transform preset \"" + name + "\" (none, unit, imagenet-train, imagenet-eval).")
            .with("field", "transforms")
            .with("reason", "unknown preset");
    return fromJson(json::parse(text), "preset " + name);
}

size_t TransformList::deterministicPrefix() const {
    size_t n = 0;
    while (n < m_items.size() && !m_items[n].random()) ++n;
    return n;
}

bool TransformList::needsFit() const {
    return std::any_of(m_items.begin(), m_items.end(),
                       [](const Transform& t) { return t.kind == TransformKind::Standardize; });
}

Status TransformList::fit(const SampleSource& source, std::span<const int64_t> trainingIndices) {
    const auto specs = source.columnSpecs();
    for (Transform& t : m_items) {
        if (t.kind != TransformKind::Standardize) continue;
        size_t col = specs.size();
        for (size_t c = 0; c < specs.size(); ++c)
            if (specs[c].name == t.column) col = c;
        if (col == specs.size())
            return Error(ErrorCode::ConfigError, "standardize: the data has no column \"" + t.column + "\".")
                .with("field", "column")
                .with("reason", "unknown column");
        if (specs[col].image)
            return Error(ErrorCode::ConfigError,
                         "standardize: \"" + t.column + "\" holds pictures; use normalize.")
                .with("field", "column")
                .with("reason", "not numeric");
        if (trainingIndices.empty())
            return Error(ErrorCode::DataError, "standardize: the training split is empty.")
                .with("reason", "empty training split");
        const auto n = static_cast<size_t>(specs[col].shape.numel());
        std::vector<double> sum(n, 0.0), sumSq(n, 0.0);
        Sample s;
        for (int64_t i : trainingIndices) {
            KILN_TRY(source.load(i, s));
            const auto& v = s.values[col].values;
            for (size_t k = 0; k < n; ++k) {
                if (!std::isfinite(v[k]))
                    return Error(ErrorCode::DataError, "standardize: sample " + std::to_string(i) + " of \"" +
                                                           t.column + "\" is not a finite number.")
                        .withFile(s.origin)
                        .with("reason", "not finite");
                sum[k] += v[k];
                sumSq[k] += static_cast<double>(v[k]) * v[k];
            }
        }
        std::vector<float> mean(n), sd(n);
        const auto count = static_cast<double>(trainingIndices.size());
        for (size_t k = 0; k < n; ++k) {
            const double m = sum[k] / count;
            const double var = std::max(0.0, sumSq[k] / count - m * m);
            mean[k] = static_cast<float>(m);
            sd[k] = var > 1e-12 ? static_cast<float>(std::sqrt(var)) : 1.0f;
        }
        t.standardizer = Standardizer(t.column, std::move(mean), std::move(sd));
    }
    return okStatus();
}

// ---------------------------------------------------------------------------------------------
// Application

DecodeOptions TransformList::decodeOptionsFor(const std::string& column) const {
    DecodeOptions o;
    for (const Transform& t : m_items)
        if (t.kind == TransformKind::Decode && (t.column.empty() || t.column == column)) {
            o.channels = t.channels;
            break;
        }
    return o;
}

namespace {

Status ensureDecoded(SampleValue& v, const std::string& origin, const DecodeOptions& options) {
    if (v.kind != SampleValue::Kind::Encoded) return okStatus();
    KILN_ASSIGN(v.image, decodeImage(v.encoded, origin, options));
    v.kind = SampleValue::Kind::Image;
    std::string().swap(v.encoded);
    return okStatus();
}

// Changes the number of channels of a decoded image (an explicit decode after a source that
// hands out pixels, such as IDX).
void convertChannels(cv::Mat& img, int channels) {
    if (channels == 1 && img.channels() == 3) {
        cv::Mat g;
        cv::cvtColor(img, g, cv::COLOR_RGB2GRAY);
        img = g;
    } else if (channels == 3 && img.channels() == 1) {
        cv::Mat c;
        cv::cvtColor(img, c, cv::COLOR_GRAY2RGB);
        img = c;
    }
}

// The windows of the crops and the size a resize produces, for a rows x cols picture. The fused
// JPEG decode below computes them from the file's header with the same functions (and, for a
// random crop, the same two draws: u0 places the row, u1 the column), so both paths agree.
cv::Rect centerWindow(int rows, int cols, const Transform& t) {
    return cv::Rect((cols - t.width) / 2, (rows - t.height) / 2, t.width, t.height);
}

cv::Rect randomWindow(int rows, int cols, const Transform& t, float u0, float u1) {
    const int rangeY = rows - t.height + 1, rangeX = cols - t.width + 1;
    const int top = std::min(rangeY - 1, static_cast<int>(u0 * static_cast<float>(rangeY)));
    const int left = std::min(rangeX - 1, static_cast<int>(u1 * static_cast<float>(rangeX)));
    return cv::Rect(left, top, t.width, t.height);
}

cv::Size resizeTarget(int rows, int cols, const Transform& t) {
    if (t.shorterSide <= 0) return cv::Size(t.width, t.height);
    const double s = static_cast<double>(t.shorterSide) / std::min(rows, cols);
    const int h = rows <= cols ? t.shorterSide : static_cast<int>(std::lround(rows * s));
    const int w = cols <= rows ? t.shorterSide : static_cast<int>(std::lround(cols * s));
    return cv::Size(w, h);
}

// Decodes a JPEG and runs transform `t` (a crop, or a resize) in one step: only the crop's region
// is decoded, or the picture is decoded reduced in the DCT domain by the largest of 1/8, 1/4, 1/2
// that still leaves at least the resize's output size, then resized. True with `out` holding t's
// result; false when the bytes are no JPEG the direct decoder takes or the picture is smaller than
// the crop (then nothing is decoded and the caller decodes the usual way).
bool decodeJpegFused(const std::string& bytes, const DecodeOptions& options, const Transform& t, float u0,
                     float u1, cv::Mat& out) {
    JpegRegionDecoder jpeg;
    if (!jpeg.open(bytes)) return false;
    const int rows = jpeg.height(), cols = jpeg.width();
    if (t.kind == TransformKind::Resize) {
        const cv::Size target = resizeTarget(rows, cols, t);
        int denom = 8;
        while (denom > 1 &&
               (jpeg.scaledSize(denom).width < target.width || jpeg.scaledSize(denom).height < target.height))
            denom /= 2;
        if (denom == 1 || !jpeg.decodeScaled(denom, out)) return false;
        convertChannels(out, options.channels);
        if (out.size() != target) {
            cv::Mat resized;
            cv::resize(out, resized, target, 0, 0, t.interpolation);
            out = resized;
        }
        return true;
    }
    if (rows < t.height || cols < t.width) return false;
    const cv::Rect window = t.kind == TransformKind::CenterCrop ? centerWindow(rows, cols, t)
                                                                : randomWindow(rows, cols, t, u0, u1);
    if (!jpeg.decodeRegion(window, out)) return false;
    convertChannels(out, options.channels);
    return true;
}

Error tooSmall(const std::string& origin, const cv::Mat& img, const Transform& t) {
    return badSampleError(origin, "the picture is " + std::to_string(img.cols) + "x" +
                                      std::to_string(img.rows) + " pixels, smaller than the " +
                                      std::to_string(t.width) + "x" + std::to_string(t.height) + " crop");
}

}  // namespace

size_t TransformList::fusableWithDecode(size_t ti, size_t end, const ColumnSpec& spec,
                                        const DecodeOptions& options) const {
    for (size_t k = ti; k < end; ++k) {
        const Transform& t = m_items[k];
        if (t.kind == TransformKind::Standardize) {
            if (spec.name == t.column) return kNone;
            continue;
        }
        if (!(t.column.empty() ? spec.image : spec.name == t.column)) continue;
        switch (t.kind) {
        case TransformKind::Decode:
            // A decode step that asks for the channels the picture gets anyway changes nothing.
            if (t.channels == 0 || t.channels == options.channels) continue;
            return kNone;
        case TransformKind::CenterCrop:
        case TransformKind::Resize:
            return k;
        case TransformKind::RandomCrop:
            return t.padding == 0 ? k : kNone;
        default:
            return kNone;
        }
    }
    return kNone;
}

Status TransformList::apply(Sample& sample, const std::vector<ColumnSpec>& specs, uint64_t seed, int epoch,
                            size_t begin, size_t end) const {
    // OpenCV reports impossible requests (a picture too large for memory, say) by exception; here
    // they become a bad sample naming the file, so no worker thread ever dies of one.
    try {
        return applyUnchecked(sample, specs, seed, epoch, begin, end);
    } catch (const cv::Exception& e) {
        return badSampleError(sample.origin,
                              std::string("the picture cannot be transformed (") + e.what() + ")");
    } catch (const std::bad_alloc&) {
        return Error(ErrorCode::OutOfMemory, "Out of memory while transforming " + sample.origin + ".")
            .withFile(sample.origin);
    }
}

Status TransformList::applyUnchecked(Sample& sample, const std::vector<ColumnSpec>& specs, uint64_t seed,
                                     int epoch, size_t begin, size_t end) const {
    end = std::min(end, m_items.size());
    const uint64_t epochSeed = rng::mix(seed, static_cast<uint64_t>(epoch));
    // Per column, the transform the decoder already carried out (see decodeJpegFused).
    std::vector<size_t> fused(specs.size(), kNone);
    for (size_t ti = begin; ti < end; ++ti) {
        const Transform& t = m_items[ti];
        const uint64_t stream = rng::mix(static_cast<uint64_t>(sample.index), ti);
        auto u = [&](uint64_t k) { return rng::uniform(epochSeed, stream, k); };
        for (size_t c = 0; c < specs.size() && c < sample.values.size(); ++c) {
            const ColumnSpec& spec = specs[c];
            SampleValue& v = sample.values[c];
            if (t.kind == TransformKind::Standardize) {
                if (spec.name != t.column) continue;
                if (t.standardizer.size() != static_cast<int64_t>(v.values.size()))
                    return Error(ErrorCode::Internal,
                                 "standardize \"" + t.column + "\" was not fitted on data of this shape.");
                t.standardizer.apply(std::span<float>(v.values));
                continue;
            }
            const bool target = t.column.empty() ? spec.image : spec.name == t.column;
            if (!target || fused[c] == ti) continue;
            if (v.kind == SampleValue::Kind::Numbers)
                return Error(ErrorCode::ConfigError, std::string(transformKindName(t.kind)) +
                                                         " needs pictures; column \"" + spec.name +
                                                         "\" holds numbers.")
                    .with("field", "column")
                    .with("reason", "not a picture");
            if (v.kind == SampleValue::Kind::Encoded) {
                // When the first transform on these pixels is a crop or a resize, a JPEG is decoded
                // only as far as that transform needs, and the transform is then done.
                const DecodeOptions options = decodeOptionsFor(spec.name);
                const size_t k = fusableWithDecode(ti, end, spec, options);
                if (k != kNone) {
                    const uint64_t kStream = rng::mix(static_cast<uint64_t>(sample.index), k);
                    cv::Mat out;
                    if (decodeJpegFused(v.encoded, options, m_items[k], rng::uniform(epochSeed, kStream, 0),
                                        rng::uniform(epochSeed, kStream, 1), out)) {
                        v.image = out;
                        v.kind = SampleValue::Kind::Image;
                        std::string().swap(v.encoded);
                        fused[c] = k;
                        if (k == ti) continue;
                    }
                }
                KILN_TRY(ensureDecoded(v, sample.origin, options));
            }
            cv::Mat& img = v.image;
            switch (t.kind) {
            case TransformKind::Decode:
                if (t.channels != 0) convertChannels(img, t.channels);
                break;
            case TransformKind::Resize: {
                const cv::Size target = resizeTarget(img.rows, img.cols, t);
                if (target != img.size()) {
                    cv::Mat out;
                    cv::resize(img, out, target, 0, 0, t.interpolation);
                    img = out;
                }
                break;
            }
            case TransformKind::CenterCrop: {
                if (img.rows < t.height || img.cols < t.width) return tooSmall(sample.origin, img, t);
                img = img(centerWindow(img.rows, img.cols, t)).clone();
                break;
            }
            case TransformKind::RandomCrop: {
                cv::Mat src = img;
                if (t.padding > 0) {
                    cv::copyMakeBorder(img, src, t.padding, t.padding, t.padding, t.padding,
                                       cv::BORDER_CONSTANT, cv::Scalar::all(0));
                }
                if (src.rows < t.height || src.cols < t.width) return tooSmall(sample.origin, src, t);
                img = src(randomWindow(src.rows, src.cols, t, u(0), u(1))).clone();
                break;
            }
            case TransformKind::Flip: {
                const bool h = t.horizontal && u(0) < t.probability;
                const bool vflip = t.vertical && u(1) < t.probability;
                if (h || vflip) {
                    cv::Mat out;
                    cv::flip(img, out, h && vflip ? -1 : h ? 1 : 0);
                    img = out;
                }
                break;
            }
            case TransformKind::Rotate: {
                const float angle = t.minDegrees + (t.maxDegrees - t.minDegrees) * u(0);
                if (angle == 0.0f) break;
                const cv::Point2f centre(static_cast<float>(img.cols - 1) * 0.5f,
                                         static_cast<float>(img.rows - 1) * 0.5f);
                const cv::Mat m = cv::getRotationMatrix2D(centre, angle, 1.0);
                cv::Mat out;
                cv::warpAffine(img, out, m, img.size(), t.interpolation, cv::BORDER_CONSTANT,
                               cv::Scalar::all(t.fill));
                img = out;
                break;
            }
            case TransformKind::BrightnessContrast: {
                const double b = 1.0 + t.brightness * (2.0 * u(0) - 1.0);
                const double ct = 1.0 + t.contrast * (2.0 * u(1) - 1.0);
                const cv::Scalar sums = cv::sum(img);
                double total = 0;
                for (int k = 0; k < img.channels(); ++k) total += sums[k];
                const double mean = total / (static_cast<double>(img.total()) * img.channels());
                cv::Mat out;
                img.convertTo(out, img.depth(), ct * b, (1.0 - ct) * b * mean);
                img = out;
                break;
            }
            case TransformKind::Normalize: {
                const int ch = img.channels();
                if ((t.mean.size() != 1 && static_cast<int>(t.mean.size()) != ch) ||
                    (t.stddev.size() != 1 && static_cast<int>(t.stddev.size()) != ch))
                    return Error(ErrorCode::ConfigError, "normalize: mean and std need 1 or " +
                                                             std::to_string(ch) + " values for the " +
                                                             std::to_string(ch) + "-channel pictures of \"" +
                                                             spec.name + "\".")
                        .with("field", "mean")
                        .with("reason", "channel count");
                cv::Mat f;
                img.convertTo(f, CV_32F);
                std::vector<float> a(static_cast<size_t>(ch)), b(static_cast<size_t>(ch));
                for (int k = 0; k < ch; ++k) {
                    const float m = t.mean.size() == 1 ? t.mean[0] : t.mean[static_cast<size_t>(k)];
                    const float s = t.stddev.size() == 1 ? t.stddev[0] : t.stddev[static_cast<size_t>(k)];
                    a[static_cast<size_t>(k)] = t.scale / s;
                    b[static_cast<size_t>(k)] = -m / s;
                }
                for (int r = 0; r < f.rows; ++r) {
                    float* p = f.ptr<float>(r);
                    for (int x = 0; x < f.cols; ++x)
                        for (int k = 0; k < ch; ++k, ++p)
                            *p = *p * a[static_cast<size_t>(k)] + b[static_cast<size_t>(k)];
                }
                img = f;
                break;
            }
            case TransformKind::Standardize:
                break;
            }
        }
    }
    return okStatus();
}

Status TransformList::decodeRemaining(Sample& sample, const std::vector<ColumnSpec>& specs) const {
    for (size_t c = 0; c < specs.size() && c < sample.values.size(); ++c)
        if (!specs[c].text)
            KILN_TRY(ensureDecoded(sample.values[c], sample.origin, decodeOptionsFor(specs[c].name)));
    return okStatus();
}

}  // namespace kiln::engine::data
