// SPDX-License-Identifier: Apache-2.0
// The TFRecord pipeline source: file listing, feature specs (given, read from JSON, or guessed
// from the first record) and the per-file reader turning Examples into samples.
#include "engine/data/tfrecord_source.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/data/example.h"
#include "engine/data/sources.h"

namespace kiln::engine::data {

namespace fs = std::filesystem;

namespace {

bool looksLikePicture(const std::string& b) {
    using namespace std::string_view_literals;
    auto starts = [&](std::string_view magic) { return std::string_view(b).substr(0, magic.size()) == magic; };
    return starts("\xFF\xD8\xFF"sv) || starts("\x89PNG"sv) || starts("BM"sv) || starts("II*\0"sv) || starts("MM\0*"sv);
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

Error recordError(const std::string& file, int64_t offset, const std::string& reason) {
    return Error(ErrorCode::DataError,
                 file + ": " + reason + " in the record at byte offset " + std::to_string(offset) + ".")
        .withFile(file)
        .with("file", file)
        .with("offset", std::to_string(offset))
        .with("reason", reason);
}

class TfExampleReader : public RecordReader {
public:
    TfExampleReader(std::unique_ptr<TfRecordReader> reader, const std::vector<TfFeatureSpec>* features)
        : m_reader(std::move(reader)), m_features(features) {}

    Result<bool> next(Sample& out) override {
        const int64_t offset = m_reader->position();
        KILN_ASSIGN(bool got, m_reader->next(m_payload));
        if (!got) return false;
        auto ex = decodeExample(m_payload);
        if (!ex.ok())
            return recordError(m_reader->path(), offset,
                               "a malformed tf.train.Example (" + ex.error().message + ")");
        out.origin = m_reader->path() + "@" + std::to_string(offset);
        out.values.resize(m_features->size());
        for (size_t i = 0; i < m_features->size(); ++i) {
            const TfFeatureSpec& spec = (*m_features)[i];
            const Feature* f = ex->find(spec.feature);
            if (f == nullptr)
                return recordError(m_reader->path(), offset, "no feature \"" + spec.feature + "\"");
            SampleValue& v = out.values[i];
            if (spec.type == TfFeatureSpec::Type::Image || spec.type == TfFeatureSpec::Type::Bytes) {
                if (f->kind != Feature::Kind::Bytes || f->bytes.size() != 1)
                    return recordError(m_reader->path(), offset,
                                       "feature \"" + spec.feature + "\" is not one bytes value");
                v.kind = SampleValue::Kind::Encoded;
                v.image.release();
                v.encoded = f->bytes[0];
                continue;
            }
            const auto n = static_cast<size_t>(spec.shape.numel());
            v.kind = SampleValue::Kind::Numbers;
            v.shape = spec.shape;
            if (spec.type == TfFeatureSpec::Type::Float && f->kind == Feature::Kind::Float &&
                f->floats.size() == n) {
                v.values = f->floats;
            } else if (spec.type == TfFeatureSpec::Type::Int64 && f->kind == Feature::Kind::Int64 &&
                       f->ints.size() == n) {
                v.values.resize(n);
                for (size_t k = 0; k < n; ++k) v.values[k] = static_cast<float>(f->ints[k]);
            } else {
                return recordError(m_reader->path(), offset,
                                   "feature \"" + spec.feature + "\" holds " + std::to_string(f->size()) +
                                       " " + featureKindName(f->kind) + " values where " + std::to_string(n) +
                                       " " + (spec.type == TfFeatureSpec::Type::Float ? "float" : "int64") +
                                       " values are expected");
            }
        }
        return true;
    }

private:
    std::unique_ptr<TfRecordReader> m_reader;
    const std::vector<TfFeatureSpec>* m_features;
    std::string m_payload;
};

}  // namespace

Result<std::shared_ptr<TfRecordSource>> TfRecordSource::open(std::vector<std::string> files,
                                                             std::vector<TfFeatureSpec> features,
                                                             TfRecordCompression compression) {
    if (files.empty())
        return Error(ErrorCode::DataError, "No TFRecord files were given.").with("reason", "no files");
    if (features.empty())
        return Error(ErrorCode::ConfigError, "The TFRecord feature spec is empty.").with("field", "features");
    std::error_code ec;
    for (const auto& f : files)
        if (!fs::exists(f, ec))
            return Error(ErrorCode::FileNotFound, "The file " + f + " does not exist.")
                .withFile(f)
                .with("path", f);
    auto src = std::make_shared<TfRecordSource>();
    src->m_files = std::move(files);
    src->m_features = std::move(features);
    for (auto& f : src->m_features)
        if (f.column.empty()) f.column = f.feature;
    src->m_compression = compression;
    return src;
}

Result<std::vector<std::string>> TfRecordSource::listFiles(const std::string& path) {
    std::error_code ec;
    if (!fs::exists(path, ec))
        return Error(ErrorCode::FileNotFound, path + " does not exist.").withFile(path).with("path", path);
    if (!fs::is_directory(path, ec)) return std::vector<std::string>{path};
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path, ec)) {
        const std::string n = lower(e.path().filename().string());
        const bool sidecar = n.size() > 4 && (n.compare(n.size() - 4, 4, ".txt") == 0 ||
                                              n.compare(n.size() - 5, 5, ".json") == 0);
        if (e.is_regular_file(ec) && !sidecar && n.find(".tfrec") != std::string::npos)
            out.push_back(e.path().string());
    }
    std::sort(out.begin(), out.end());
    if (out.empty())
        return Error(ErrorCode::DataError, "The folder " + path + " holds no .tfrecord files.")
            .withFile(path)
            .with("file", path)
            .with("reason", "no TFRecord files");
    return out;
}

TfRecordCompression TfRecordSource::guessCompression(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    unsigned char head[12] = {};
    in.read(reinterpret_cast<char*>(head), 12);
    if (in.gcount() == 12) {
        // A plain file starts with a length whose masked CRC follows it.
        uint32_t stored = 0;
        std::memcpy(&stored, head + 8, 4);
        if (maskCrc32c(crc32c(head, 8)) == stored) return TfRecordCompression::None;
    }
    if (in.gcount() >= 2) {
        if (head[0] == 0x1F && head[1] == 0x8B) return TfRecordCompression::Gzip;
        if ((head[0] & 0x0F) == 8 && ((head[0] << 8) | head[1]) % 31 == 0) return TfRecordCompression::Zlib;
    }
    return TfRecordCompression::None;
}

Result<std::vector<TfFeatureSpec>> TfRecordSource::inferFeatures(const std::string& file,
                                                                 TfRecordCompression compression,
                                                                 bool includeBytes) {
    KILN_ASSIGN(auto reader, TfRecordReader::open(file, compression));
    std::string payload;
    KILN_ASSIGN(bool got, reader->next(payload));
    if (!got)
        return Error(ErrorCode::DataError, file + " holds no records.")
            .withFile(file)
            .with("file", file)
            .with("reason", "empty");
    auto ex = decodeExample(payload);
    if (!ex.ok()) return recordError(file, 0, "a malformed tf.train.Example (" + ex.error().message + ")");
    std::vector<TfFeatureSpec> out;
    for (const auto& [key, f] : ex->features) {
        TfFeatureSpec s;
        s.feature = key;
        s.column = key;
        if (f.kind == Feature::Kind::Bytes) {
            if (f.bytes.size() != 1) continue;
            if (looksLikePicture(f.bytes[0]))
                s.type = TfFeatureSpec::Type::Image;
            else if (includeBytes)
                s.type = TfFeatureSpec::Type::Bytes;
            else
                continue;
        } else if (f.kind == Feature::Kind::Float || f.kind == Feature::Kind::Int64) {
            s.type = f.kind == Feature::Kind::Float ? TfFeatureSpec::Type::Float : TfFeatureSpec::Type::Int64;
            s.shape = f.size() == 1 ? Shape{} : Shape{static_cast<int64_t>(f.size())};
        } else {
            continue;
        }
        out.push_back(std::move(s));
    }
    // Pictures first, then the rest by name (a stable, readable column order).
    std::stable_sort(out.begin(), out.end(), [](const TfFeatureSpec& a, const TfFeatureSpec& b) {
        return (a.type == TfFeatureSpec::Type::Image) > (b.type == TfFeatureSpec::Type::Image);
    });
    if (out.empty()) return recordError(file, 0, "no picture or number features");
    return out;
}

Result<std::vector<TfFeatureSpec>> TfRecordSource::featuresFromJson(const nlohmann::json& j,
                                                                    const std::string& field) {
    auto bad = [&](const std::string& at, const std::string& msg) {
        return Error(ErrorCode::ConfigError, at + ": " + msg).with("field", at).with("reason", msg);
    };
    if (!j.is_object() || j.empty()) return bad(field, "expected {\"feature\": {\"type\": ...}, ...}");
    std::vector<TfFeatureSpec> out;
    for (const auto& [key, v] : j.items()) {
        const std::string at = field + "." + key;
        if (!v.is_object() || !v.contains("type") || !v["type"].is_string())
            return bad(at, "needs a \"type\": image, float or int64");
        TfFeatureSpec s;
        s.feature = key;
        const std::string type = v["type"].get<std::string>();
        if (type == "image")
            s.type = TfFeatureSpec::Type::Image;
        else if (type == "float")
            s.type = TfFeatureSpec::Type::Float;
        else if (type == "int64")
            s.type = TfFeatureSpec::Type::Int64;
        else
            return bad(at + ".type", "unknown type \"" + type + "\" (image, float, int64)");
        for (const auto& [k, x] : v.items())
            if (k != "type" && k != "shape" && k != "column")
                return bad(at + "." + k, "is not a known setting");
        if (v.contains("shape")) {
            if (!v["shape"].is_array()) return bad(at + ".shape", "expected a list of sizes");
            std::vector<int64_t> dims;
            for (const auto& d : v["shape"]) {
                if (!d.is_number_integer() || d.get<int64_t>() < 1)
                    return bad(at + ".shape", "sizes must be whole numbers >= 1");
                dims.push_back(d.get<int64_t>());
            }
            s.shape = Shape(dims);
        }
        if (v.contains("column")) {
            if (!v["column"].is_string()) return bad(at + ".column", "expected a name");
            s.column = v["column"].get<std::string>();
        }
        out.push_back(std::move(s));
    }
    return out;
}

std::vector<ColumnSpec> TfRecordSource::columnSpecs() const {
    std::vector<ColumnSpec> out;
    for (const auto& f : m_features) {
        ColumnSpec c{f.column.empty() ? f.feature : f.column,
                     f.type == TfFeatureSpec::Type::Image ? Shape{0, 0, 0} : f.shape,
                     f.type == TfFeatureSpec::Type::Image,
                     f.type == TfFeatureSpec::Type::Bytes,
                     {}};
        out.push_back(std::move(c));
    }
    return out;
}

Status TfRecordSource::checkClassLabels(const std::string& column, int64_t classes,
                                        const std::vector<std::string>& classNames) const {
    const auto spec = std::find_if(m_features.begin(), m_features.end(), [&](const TfFeatureSpec& f) {
        return (f.column.empty() ? f.feature : f.column) == column &&
               (f.type == TfFeatureSpec::Type::Int64 || f.type == TfFeatureSpec::Type::Float) && f.shape.numel() == 1;
    });
    if (spec == m_features.end() || classes <= 0) return okStatus();
    std::string payload;
    for (const auto& file : m_files) {
        KILN_ASSIGN(auto reader, TfRecordReader::open(file, m_compression));
        for (int64_t record = 1;; ++record) {
            const int64_t offset = reader->position();
            KILN_ASSIGN(bool got, reader->next(payload));
            if (!got) break;
            auto ex = decodeExample(payload);
            if (!ex.ok()) return recordError(file, offset, "a malformed tf.train.Example (" + ex.error().message + ")");
            const Feature* f = ex->find(spec->feature);
            // A record without the label, or with another kind of list, is the reader's to refuse.
            if (f == nullptr || f->size() != 1) continue;
            std::string label;
            if (f->kind == Feature::Kind::Int64) {
                const int64_t v = f->ints[0];
                if (v >= 0 && v < classes) continue;
                label = std::to_string(v);
            } else if (f->kind == Feature::Kind::Float) {
                const float v = f->floats[0];
                if (v >= 0 && v < static_cast<float>(classes) && v == std::floor(v)) continue;
                char buf[32];
                std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
                label = buf;
            } else {
                continue;
            }
            const std::string known = modelClassesText(classes, classNames);
            return Error(ErrorCode::DataError, "Record " + std::to_string(record) + " (byte offset " +
                                                   std::to_string(offset) + "): the label " + label + " (feature \"" +
                                                   spec->feature + "\") is not one of the model's " +
                                                   std::to_string(classes) + " classes (" + known + ").")
                .withFile(file)
                .with("file", file)
                .with("record", std::to_string(record))
                .with("offset", std::to_string(offset))
                .with("label", label)
                .with("reason", "not a class of the model (" + known + ")");
        }
    }
    return okStatus();
}

Result<std::unique_ptr<RecordReader>> TfRecordSource::openFile(int file) const {
    KILN_ASSIGN(auto reader, TfRecordReader::open(m_files[static_cast<size_t>(file)], m_compression));
    return std::unique_ptr<RecordReader>(new TfExampleReader(std::move(reader), &m_features));
}

}  // namespace kiln::engine::data
