// SPDX-License-Identifier: Apache-2.0
// Conversions: random-access sources -> TFRecord (tf.train.Example), any source -> PNG class folder.
#include "engine/data/convert.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "engine/data/example.h"

namespace kiln::engine::data {

namespace fs = std::filesystem;

namespace {

int labelColumnOf(const std::vector<ColumnSpec>& specs) {
    for (size_t c = 0; c < specs.size(); ++c)
        if (specs[c].name == "label" && specs[c].shape.rank() == 0) return static_cast<int>(c);
    for (size_t c = 0; c < specs.size(); ++c)
        if (!specs[c].image && !specs[c].text && specs[c].shape.rank() == 0) return static_cast<int>(c);
    return -1;
}

int imageColumnOf(const std::vector<ColumnSpec>& specs) {
    for (size_t c = 0; c < specs.size(); ++c)
        if (specs[c].image) return static_cast<int>(c);
    return -1;
}

// PNG bytes of a decoded picture (RGB order in, as PNG stores it out).
Result<std::string> encodePng(const cv::Mat& image, const std::string& origin) {
    cv::Mat m = image;
    if (m.depth() != CV_8U) m.convertTo(m, CV_8U);  // saturating: values outside 0..255 are clipped
    if (m.channels() == 3) cv::cvtColor(m, m, cv::COLOR_RGB2BGR);
    std::vector<uchar> buf;
    bool encoded = false;
    try {
        encoded = cv::imencode(".png", m, buf);
    } catch (const cv::Exception& e) {
        return Error(ErrorCode::Internal,
                     "OpenCV could not encode the picture of " + origin + " as PNG: " + e.what());
    }
    if (!encoded)
        return Error(ErrorCode::Internal, "OpenCV could not encode the picture of " + origin + " as PNG.");
    return std::string(buf.begin(), buf.end());
}

std::string shardName(const std::string& dst, int shard, int shards) {
    if (shards <= 1) return dst;
    const fs::path p(dst);
    std::string name = p.filename().string();
    std::string ext;
    for (const char* e : {".tfrecord.gz", ".tfrecords", ".tfrecord", ".tfrec"}) {
        const std::string s(e);
        if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
            ext = s;
            name.resize(name.size() - s.size());
            break;
        }
    }
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, "-%05d-of-%05d", shard, shards);
    return (p.parent_path() / (name + suffix + ext)).string();
}

Status writeText(const std::string& path, const std::string& text) {
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out || !(out << text) || !out.flush())
            return Error(ErrorCode::FileWrite, "Cannot write " + path + ".")
                .withFile(path)
                .with("path", path)
                .with("reason", "write failed");
    }
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec)
        return Error(ErrorCode::FileWrite, "Cannot write " + path + ": " + ec.message() + ".")
            .withFile(path)
            .with("path", path)
            .with("reason", ec.message());
    return okStatus();
}

std::string stemOf(const std::string& path) {
    return fs::path(path).stem().string();
}

// Writes samples as PNG files into class folders.
class FolderWriter {
public:
    FolderWriter(std::string dst, std::vector<std::string> classes)
        : m_dst(std::move(dst)), m_classes(std::move(classes)) {}

    Status prepare() {
        std::error_code ec;
        fs::create_directories(m_dst, ec);
        if (ec)
            return Error(ErrorCode::FileWrite,
                         "Cannot create the folder " + m_dst + ": " + ec.message() + ".")
                .withFile(m_dst)
                .with("path", m_dst)
                .with("reason", ec.message());
        for (const auto& c : m_classes) {
            fs::create_directories(fs::path(m_dst) / c, ec);
            if (ec)
                return Error(ErrorCode::FileWrite,
                             "Cannot create the folder " + (fs::path(m_dst) / c).string() + ".")
                    .with("path", m_dst)
                    .with("reason", ec.message());
        }
        return okStatus();
    }

    // `name` without extension.
    Status write(const cv::Mat& image, int label, const std::string& name, const std::string& origin) {
        if (label < 0 || label >= static_cast<int>(m_classes.size()))
            return Error(ErrorCode::DataError, origin + ": the label " + std::to_string(label) +
                                                   " is not a class index (0.." +
                                                   std::to_string(m_classes.size() - 1) + ").")
                .withFile(origin)
                .with("file", origin)
                .with("reason", "label out of range");
        KILN_ASSIGN(std::string png, encodePng(image, origin));
        const fs::path path = fs::path(m_dst) / m_classes[static_cast<size_t>(label)] / (name + ".png");
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        if (!out || !out.write(png.data(), static_cast<std::streamsize>(png.size())))
            return Error(ErrorCode::FileWrite, "Cannot write " + path.string() + ".")
                .withFile(path.string())
                .with("path", path.string())
                .with("reason", "write failed");
        return okStatus();
    }

private:
    std::string m_dst;
    std::vector<std::string> m_classes;
};

std::vector<std::string> numberedClasses(int64_t count) {
    std::vector<std::string> out;
    const int width =
        std::max<int>(1, static_cast<int>(std::to_string(std::max<int64_t>(count - 1, 0)).size()));
    for (int64_t k = 0; k < count; ++k) {
        std::string s = std::to_string(k);
        out.push_back(
            std::string(static_cast<size_t>(width) - std::min(s.size(), static_cast<size_t>(width)), '0') +
            s);
    }
    return out;
}

}  // namespace

std::string classNamesPath(const std::string& tfrecordPath) {
    return tfrecordPath + ".classes.txt";
}

Result<ConvertReport> convertToTfRecord(const SampleSource& source, const std::string& dst,
                                        const ConvertOptions& options) {
    const auto specs = source.columnSpecs();
    const int labelCol = labelColumnOf(specs);
    const int shards = std::max(1, options.shards);
    const int64_t count = options.limit >= 0 ? std::min(options.limit, source.size()) : source.size();
    ConvertReport report;
    std::error_code ec;
    if (fs::path(dst).has_parent_path()) fs::create_directories(fs::path(dst).parent_path(), ec);

    std::unique_ptr<TfRecordWriter> writer;
    int shard = -1;
    Sample s;
    const bool fileSource = source.kind() == "image-folder" || source.kind() == "csv-index";
    for (int64_t i = 0; i < count; ++i) {
        const int want = static_cast<int>(i * shards / std::max<int64_t>(count, 1));
        if (want != shard) {
            if (writer) KILN_TRY(writer->close());
            shard = want;
            const std::string name = shardName(dst, shard, shards);
            KILN_ASSIGN(writer, TfRecordWriter::create(name, options.compression));
            report.files.push_back(name);
        }
        Status st = source.load(i, s);
        Example ex;
        for (size_t c = 0; st.ok() && c < specs.size(); ++c) {
            SampleValue& v = s.values[c];
            if (v.kind == SampleValue::Kind::Encoded) {
                auto decoded = decodeImage(v.encoded, s.origin);  // left out when it cannot be decoded
                if (!decoded.ok()) {
                    st = std::move(decoded.error());
                    break;
                }
                ex.features[specs[c].name] = Feature::ofBytes({v.encoded});
            } else if (v.kind == SampleValue::Kind::Image) {
                auto png = encodePng(v.image, s.origin);
                if (!png.ok()) return std::move(png.error());
                ex.features[specs[c].name] = Feature::ofBytes({std::move(png.value())});
            } else if (static_cast<int>(c) == labelCol) {
                ex.features[specs[c].name] =
                    Feature::ofInt64s({static_cast<int64_t>(std::llround(v.values[0]))});
            } else {
                ex.features[specs[c].name] = Feature::ofFloats(v.values);
            }
        }
        if (!st.ok()) {
            if (!isBadSampleError(st.error())) return std::move(st.error());
            report.bad.push_back(BadSample{i, st.error().file.empty() ? source.origin(i) : st.error().file,
                                           st.error().param("reason")});
            continue;
        }
        if (fileSource && !s.origin.empty() && !ex.find("filename"))
            ex.features["filename"] = Feature::ofBytes({fs::path(s.origin).filename().string()});
        KILN_TRY(writer->write(encodeExample(ex)));
        ++report.written;
    }
    if (writer) KILN_TRY(writer->close());
    if (labelCol >= 0) {
        std::vector<std::string> classes = specs[static_cast<size_t>(labelCol)].classNames;
        if (classes.empty()) {
            const auto counts = sourceClassCounts(source);
            classes = numberedClasses(static_cast<int64_t>(counts.size()));
        }
        std::string text;
        for (const auto& c : classes) text += c + "\n";
        for (const auto& file : report.files) KILN_TRY(writeText(classNamesPath(file), text));
    }
    return report;
}

namespace {

// Shared by both folder conversions: visits samples through `nextSample`.
Result<ConvertReport> writeFolder(const std::vector<ColumnSpec>& specs, std::vector<std::string> classes,
                                  const std::string& dst, int64_t limit,
                                  const std::function<Result<bool>(Sample&, BadSample*)>& nextSample) {
    const int imageCol = imageColumnOf(specs);
    const int labelCol = labelColumnOf(specs);
    if (imageCol < 0 || labelCol < 0)
        return Error(ErrorCode::DataError,
                     "A class folder needs a picture column and a label column; the data has neither or only "
                     "one.")
            .with("reason", "no picture or label column");
    int filenameCol = -1;
    for (size_t c = 0; c < specs.size(); ++c)
        if (specs[c].name == "filename") filenameCol = static_cast<int>(c);
    FolderWriter out(dst, classes);
    KILN_TRY(out.prepare());
    ConvertReport report;
    report.files.push_back(dst);
    Sample s;
    for (int64_t position = 0; limit < 0 || position < limit; ++position) {
        BadSample bad;
        auto got = nextSample(s, &bad);
        if (!got.ok()) return std::move(got.error());
        if (!got.value()) break;
        if (bad.index >= 0) {
            report.bad.push_back(bad);
            continue;
        }
        SampleValue& img = s.values[static_cast<size_t>(imageCol)];
        if (img.kind == SampleValue::Kind::Encoded) {
            auto decoded = decodeImage(img.encoded, s.origin);
            if (!decoded.ok()) {
                report.bad.push_back(BadSample{s.index, s.origin, decoded.error().param("reason")});
                continue;
            }
            img.image = decoded.value();
        }
        const int label = static_cast<int>(std::lround(s.values[static_cast<size_t>(labelCol)].values[0]));
        char numbered[32];
        std::snprintf(numbered, sizeof numbered, "%08lld", static_cast<long long>(s.index));
        std::string name = numbered;
        if (filenameCol >= 0 && !s.values[static_cast<size_t>(filenameCol)].encoded.empty())
            name = stemOf(s.values[static_cast<size_t>(filenameCol)].encoded);
        else if (!s.origin.empty() && s.origin.find('@') == std::string::npos &&
                 fs::path(s.origin).has_extension() && ImageFolderSource::isImageFile(s.origin))
            name = stemOf(s.origin);
        KILN_TRY(out.write(img.image, label, name, s.origin));
        ++report.written;
    }
    return report;
}

}  // namespace

Result<ConvertReport> convertToImageFolder(const SampleSource& source, const std::string& dst,
                                           const ConvertOptions& options) {
    const auto specs = source.columnSpecs();
    const int labelCol = labelColumnOf(specs);
    std::vector<std::string> classes =
        labelCol >= 0 ? specs[static_cast<size_t>(labelCol)].classNames : std::vector<std::string>{};
    if (classes.empty()) classes = numberedClasses(static_cast<int64_t>(sourceClassCounts(source).size()));
    int64_t next = 0;
    return writeFolder(specs, classes, dst, options.limit, [&](Sample& s, BadSample* bad) -> Result<bool> {
        if (next >= source.size()) return false;
        const int64_t i = next++;
        Status st = source.load(i, s);
        if (!st.ok()) {
            if (!isBadSampleError(st.error())) return std::move(st.error());
            *bad = BadSample{i, st.error().file, st.error().param("reason")};
        }
        s.index = i;
        return true;
    });
}

Result<ConvertReport> convertToImageFolder(const RecordSource& source, const std::string& dst,
                                           const ConvertOptions& options) {
    auto specs = source.columnSpecs();
    const int labelCol = labelColumnOf(specs);
    if (labelCol < 0)
        return Error(ErrorCode::DataError, "The records have no label feature.").with("reason", "no label");
    // "filename" comes along as bytes when the records have it; the pipeline does not need it.
    std::vector<std::string> classes;
    if (source.fileCount() > 0) {
        std::ifstream in(classNamesPath(source.fileName(0)));
        for (std::string line; std::getline(in, line);)
            if (!line.empty()) classes.push_back(line);
    }
    if (classes.empty()) {  // one pass to find the largest label
        int64_t maxLabel = -1;
        for (int f = 0; f < source.fileCount(); ++f) {
            KILN_ASSIGN(auto reader, source.openFile(f));
            Sample s;
            for (;;) {
                KILN_ASSIGN(bool got, reader->next(s));
                if (!got) break;
                maxLabel = std::max<int64_t>(maxLabel,
                                             std::llround(s.values[static_cast<size_t>(labelCol)].values[0]));
            }
        }
        classes = numberedClasses(maxLabel + 1);
    }
    int file = -1;
    int64_t ordinal = 0;
    std::unique_ptr<RecordReader> reader;
    return writeFolder(specs, classes, dst, options.limit, [&](Sample& s, BadSample*) -> Result<bool> {
        for (;;) {
            if (!reader) {
                if (++file >= source.fileCount()) return false;
                KILN_ASSIGN(reader, source.openFile(file));
            }
            KILN_ASSIGN(bool got, reader->next(s));
            if (got) {
                s.index = ordinal++;
                return true;
            }
            reader.reset();
        }
    });
}

}  // namespace kiln::engine::data
