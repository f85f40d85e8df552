// SPDX-License-Identifier: Apache-2.0
// Random-access sample sources: IDX, image folders, CSV indexes, in-memory tables, and the
// detection of what a path holds.
#include "engine/data/sources.h"

#include <algorithm>
#include <cmath>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>

#include "engine/data/byte_reader.h"
#include "engine/data/csv_table.h"

namespace kiln::engine::data {

namespace fs = std::filesystem;

namespace {

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

bool endsWith(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Reads a whole picture file; a problem is a bad-sample error (the pipeline may skip it).
Status readPictureFile(const std::string& path, std::string& out) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return badSampleError(path, "the file does not exist");
    std::ifstream in(path, std::ios::binary);
    if (!in) return badSampleError(path, "the file cannot be opened");
    in.seekg(0, std::ios::end);
    const auto size = static_cast<std::streamoff>(in.tellg());
    in.seekg(0, std::ios::beg);
    out.resize(static_cast<size_t>(std::max<std::streamoff>(size, 0)));
    if (size > 0 && !in.read(out.data(), size)) return badSampleError(path, "the file cannot be read");
    return okStatus();
}

bool isTensorPath(const std::string& cell) {
    const std::string l = lower(cell);
    return endsWith(l, ".csv") || endsWith(l, ".csv.gz");
}

std::string resolve(const std::string& dir, const std::string& cell) {
    const fs::path p(cell);
    if (p.is_absolute() || dir.empty()) return cell;
    return (fs::path(dir) / p).lexically_normal().string();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// SampleSource

std::vector<std::pair<std::string, Shape>> SampleSource::columns() const {
    std::vector<std::pair<std::string, Shape>> out;
    for (const ColumnSpec& c : columnSpecs()) out.emplace_back(c.name, c.shape);
    return out;
}

Status SampleSource::read(int64_t index, std::span<float* const> out) const {
    const auto specs = columnSpecs();
    if (out.size() != specs.size())
        return Error(ErrorCode::InvalidArgument,
                     "read needs one output buffer per column (" + std::to_string(specs.size()) + ").");
    Sample sample;
    KILN_TRY(load(index, sample));
    for (size_t c = 0; c < specs.size(); ++c) {
        SampleValue& v = sample.values[c];
        if (v.kind == SampleValue::Kind::Encoded) {
            DecodeOptions opts;
            if (specs[c].shape.rank() == 3) opts.channels = static_cast<int>(specs[c].shape[2]);
            KILN_ASSIGN(v.image, decodeImage(v.encoded, sample.origin, opts));
            v.kind = SampleValue::Kind::Image;
        }
        const Shape got = valueShape(v);
        if (got != specs[c].shape)
            return Error(ErrorCode::ShapeMismatch, "Sample " + std::to_string(index) + " of column \"" +
                                                       specs[c].name + "\" has the shape " + got.toString() +
                                                       ", expected " + specs[c].shape.toString() +
                                                       " (resize it in the pipeline).")
                .withFile(sample.origin)
                .with("reason", "shape");
        copyValue(v, out[c]);
    }
    return okStatus();
}

// ---------------------------------------------------------------------------------------------
// InMemorySource

InMemorySource::InMemorySource(InMemoryDataset data, std::string kind, std::string labelColumn,
                               std::string imageColumn)
    : m_data(std::move(data)),
      m_kind(std::move(kind)),
      m_labelColumn(std::move(labelColumn)),
      m_imageColumn(std::move(imageColumn)) {}

std::vector<ColumnSpec> InMemorySource::columnSpecs() const {
    std::vector<ColumnSpec> out;
    for (const Column& c : m_data.columnData())
        out.push_back(ColumnSpec{c.name, c.sampleShape, c.name == m_imageColumn && c.sampleShape.rank() == 3,
                                 false, c.classNames});
    return out;
}

Status InMemorySource::load(int64_t index, Sample& out) const {
    if (index < 0 || index >= m_data.count())
        return Error(ErrorCode::InvalidArgument, "Sample " + std::to_string(index) + " is out of range.");
    out.index = index;
    out.origin.clear();
    out.values.resize(m_data.columnData().size());
    for (size_t c = 0; c < m_data.columnData().size(); ++c) {
        const Column& col = m_data.columnData()[c];
        const auto s = col.sample(index);
        SampleValue& v = out.values[c];
        if (col.name == m_imageColumn && col.sampleShape.rank() == 3) {
            v.kind = SampleValue::Kind::Image;
            const auto h = static_cast<int>(col.sampleShape[0]), w = static_cast<int>(col.sampleShape[1]),
                       ch = static_cast<int>(col.sampleShape[2]);
            v.image.create(h, w, CV_32FC(ch));
            std::copy(s.begin(), s.end(), v.image.ptr<float>(0));
        } else {
            v.kind = SampleValue::Kind::Numbers;
            v.values.assign(s.begin(), s.end());
            v.shape = col.sampleShape;
        }
    }
    return okStatus();
}

std::vector<float> InMemorySource::labels() const {
    const Column* c = m_data.column(m_labelColumn);
    if (c == nullptr || c->sampleSize() != 1) return {};
    return c->values;
}

// ---------------------------------------------------------------------------------------------
// IdxSource

Result<std::pair<std::string, std::string>> IdxSource::findPair(const std::string& path) {
    std::error_code ec;
    auto partner = [](const std::string& file) -> std::pair<std::string, std::string> {
        const std::string name = fs::path(file).filename().string();
        const std::string dir = fs::path(file).parent_path().string();
        auto swapPart = [&](const std::string& from, const std::string& to) {
            std::string n = name;
            n.replace(n.find(from), from.size(), to);
            return (dir.empty() ? fs::path(n) : fs::path(dir) / n).string();
        };
        if (name.find("images-idx") != std::string::npos) {
            std::string labels = swapPart("images-idx3", "labels-idx1");
            return {file, labels};
        }
        return {swapPart("labels-idx1", "images-idx3"), file};
    };
    if (fs::is_directory(path, ec)) {
        std::vector<std::string> images;
        for (const auto& e : fs::directory_iterator(path, ec)) {
            const std::string n = e.path().filename().string();
            if (n.find("images-idx3-ubyte") != std::string::npos) images.push_back(e.path().string());
        }
        std::sort(images.begin(), images.end());
        if (images.empty())
            return Error(ErrorCode::DataError, "The folder " + path + " holds no IDX images file.")
                .withFile(path)
                .with("file", path)
                .with("reason", "no IDX files");
        std::string chosen = images.front();
        for (const auto& i : images)
            if (fs::path(i).filename().string().rfind("train", 0) == 0) chosen = i;
        auto pair = partner(chosen);
        if (!fs::exists(pair.second, ec))
            return Error(ErrorCode::FileNotFound, "The labels file " + pair.second + " is missing.")
                .withFile(pair.second)
                .with("path", pair.second);
        return pair;
    }
    const std::string name = fs::path(path).filename().string();
    if (name.find("images-idx3") == std::string::npos && name.find("labels-idx1") == std::string::npos)
        return Error(ErrorCode::UnsupportedFormat, path + " is not named like an IDX images or labels file.")
            .withFile(path)
            .with("file", path)
            .with("format", "idx");
    auto pair = partner(path);
    for (const auto& p : {pair.first, pair.second})
        if (!fs::exists(p, ec))
            return Error(ErrorCode::FileNotFound, "The IDX file " + p + " is missing.")
                .withFile(p)
                .with("path", p);
    return pair;
}

Result<std::shared_ptr<IdxSource>> IdxSource::open(const std::string& imagesPath,
                                                   const std::string& labelsPath, int64_t limit) {
    KILN_ASSIGN(IdxArray images, readIdxArray(imagesPath, limit, false));
    KILN_ASSIGN(IdxArray labels, readIdxArray(labelsPath, limit, false));
    if (images.type != IdxType::U8 || (images.dims.size() != 3 && images.dims.size() != 4))
        return Error(ErrorCode::UnsupportedFormat,
                     imagesPath + " does not hold 8-bit pictures [count, H, W(, C)].")
            .withFile(imagesPath)
            .with("file", imagesPath)
            .with("format", "idx");
    if (labels.dims.size() != 1 || labels.dims[0] != images.dims[0])
        return Error(ErrorCode::DataError, labelsPath + " holds " +
                                               std::to_string(labels.dims.empty() ? 0 : labels.dims[0]) +
                                               " labels for " + std::to_string(images.dims[0]) + " pictures.")
            .withFile(labelsPath)
            .with("file", labelsPath)
            .with("reason", "count mismatch");
    auto src = std::shared_ptr<IdxSource>(new IdxSource());
    src->m_imagesPath = imagesPath;
    src->m_count = images.dims[0];
    src->m_height = static_cast<int>(images.dims[1]);
    src->m_width = static_cast<int>(images.dims[2]);
    src->m_channels = images.dims.size() == 4 ? static_cast<int>(images.dims[3]) : 1;
    src->m_pixels.resize(images.values.size());
    for (size_t i = 0; i < images.values.size(); ++i)
        src->m_pixels[i] = static_cast<uint8_t>(images.values[i]);
    src->m_labels = std::move(labels.values);
    return src;
}

std::vector<ColumnSpec> IdxSource::columnSpecs() const {
    return {ColumnSpec{"image", Shape{m_height, m_width, m_channels}, true, false, {}},
            ColumnSpec{"label", Shape{}, false, false, {}}};
}

Status IdxSource::load(int64_t index, Sample& out) const {
    if (index < 0 || index >= m_count)
        return Error(ErrorCode::InvalidArgument, "Sample " + std::to_string(index) + " is out of range.");
    out.index = index;
    out.origin = m_imagesPath;
    out.values.resize(2);
    SampleValue& img = out.values[0];
    img.kind = SampleValue::Kind::Image;
    img.image.create(m_height, m_width, CV_8UC(m_channels));
    const size_t n =
        static_cast<size_t>(m_height) * static_cast<size_t>(m_width) * static_cast<size_t>(m_channels);
    std::copy_n(m_pixels.data() + static_cast<size_t>(index) * n, n, img.image.ptr<uint8_t>(0));
    out.values[1] = SampleValue::scalar(m_labels[static_cast<size_t>(index)]);
    return okStatus();
}

// ---------------------------------------------------------------------------------------------
// ImageFolderSource

bool ImageFolderSource::isImageFile(const std::string& path) {
    const std::string ext = lower(fs::path(path).extension().string());
    return ext == ".jpg" || ext == ".jpeg" || ext == ".png" || ext == ".bmp" || ext == ".tif" ||
           ext == ".tiff";
}

Result<std::shared_ptr<ImageFolderSource>> ImageFolderSource::open(const std::string& root,
                                                                   const Options& options) {
    std::error_code ec;
    if (!fs::exists(root, ec))
        return Error(ErrorCode::FileNotFound, "The folder " + root + " does not exist.")
            .withFile(root)
            .with("path", root);
    if (!fs::is_directory(root, ec))
        return Error(ErrorCode::DataError, root + " is not a folder.")
            .withFile(root)
            .with("file", root)
            .with("reason", "not a folder");
    auto src = std::shared_ptr<ImageFolderSource>(new ImageFolderSource());
    src->m_root = root;
    src->m_options = options;
    if (!options.classNames.empty()) {
        src->m_classes = options.classNames;
    } else {
        for (const auto& e : fs::directory_iterator(root, ec)) {
            const std::string n = e.path().filename().string();
            if (!n.empty() && n[0] != '.' && e.is_directory(ec)) src->m_classes.push_back(n);
        }
        std::sort(src->m_classes.begin(), src->m_classes.end());
    }
    if (src->m_classes.empty())
        return Error(ErrorCode::DataError,
                     "The folder " + root + " has no class subfolders (one folder per class is expected).")
            .withFile(root)
            .with("file", root)
            .with("reason", "no class folders");
    for (size_t k = 0; k < src->m_classes.size(); ++k) {
        const fs::path dir = fs::path(root) / src->m_classes[k];
        if (!fs::is_directory(dir, ec)) continue;
        std::vector<std::string> files;
        for (auto it = fs::recursive_directory_iterator(dir, ec);
             !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
            const std::string n = it->path().filename().string();
            if (!n.empty() && n[0] == '.') {
                if (it->is_directory(ec)) it.disable_recursion_pending();
                continue;
            }
            if (it->is_regular_file(ec) && isImageFile(n)) files.push_back(it->path().string());
        }
        if (ec)
            return Error(ErrorCode::FileRead,
                         "The folder " + dir.string() + " cannot be listed: " + ec.message() + ".")
                .withFile(dir.string())
                .with("path", dir.string())
                .with("reason", ec.message());
        std::sort(files.begin(), files.end());
        for (auto& f : files) src->m_files.push_back(File{std::move(f), static_cast<int>(k)});
    }
    if (src->m_files.empty())
        return Error(ErrorCode::DataError,
                     "The class folders of " + root + " hold no pictures (jpg, jpeg, png, bmp, tif, tiff).")
            .withFile(root)
            .with("file", root)
            .with("reason", "no pictures");
    return src;
}

Result<std::shared_ptr<ImageFolderSource>> ImageFolderSource::fromFiles(const std::vector<std::string>& files,
                                                                        const Options& options) {
    auto src = std::shared_ptr<ImageFolderSource>(new ImageFolderSource());
    src->m_options = options;
    src->m_classes = options.classNames;
    for (const auto& f : files) {
        std::error_code ec;
        if (!fs::exists(f, ec))
            return Error(ErrorCode::FileNotFound, "The file " + f + " does not exist.").withFile(f).with("path", f);
        if (!fs::is_regular_file(f, ec) || !isImageFile(f))
            return Error(ErrorCode::DataError, f + " is not a picture (jpg, jpeg, png, bmp, tif or tiff).")
                .withFile(f)
                .with("file", f)
                .with("reason", "not a picture file");
        src->m_files.push_back(File{f, 0});
    }
    return src;
}

Result<std::map<std::string, std::shared_ptr<ImageFolderSource>>> ImageFolderSource::openSplits(
    const std::string& root) {
    std::map<std::string, std::shared_ptr<ImageFolderSource>> out;
    std::error_code ec;
    std::map<std::string, std::string> found;  // split -> folder
    bool other = false;
    for (const auto& e : fs::directory_iterator(root, ec)) {
        if (!e.is_directory(ec)) continue;
        const std::string n = e.path().filename().string();
        if (n.empty() || n[0] == '.') continue;
        const std::string l = lower(n);
        if (l == "train")
            found["train"] = e.path().string();
        else if (l == "validation" || l == "val" || l == "valid")
            found["validation"] = e.path().string();
        else if (l == "test")
            found["test"] = e.path().string();
        else
            other = true;
    }
    if (other || found.size() < 2 || ec) return out;
    Options opts;
    if (found.count("train")) {
        KILN_ASSIGN(auto train, open(found["train"]));
        opts.classNames = train->classNames();
        out["train"] = std::move(train);
    } else {
        std::set<std::string> all;
        for (const auto& [split, dir] : found)
            for (const auto& e : fs::directory_iterator(dir, ec)) {
                const std::string n = e.path().filename().string();
                if (e.is_directory(ec) && !n.empty() && n[0] != '.') all.insert(n);
            }
        opts.classNames.assign(all.begin(), all.end());
    }
    for (const auto& [split, dir] : found) {
        if (out.count(split)) continue;
        KILN_ASSIGN(auto s, open(dir, opts));
        out[split] = std::move(s);
    }
    return out;
}

std::vector<ColumnSpec> ImageFolderSource::columnSpecs() const {
    return {ColumnSpec{m_options.imageColumn, Shape{0, 0, 0}, true, false, {}},
            ColumnSpec{m_options.labelColumn, Shape{}, false, false, m_classes}};
}

Status ImageFolderSource::load(int64_t index, Sample& out) const {
    if (index < 0 || index >= size())
        return Error(ErrorCode::InvalidArgument, "Sample " + std::to_string(index) + " is out of range.");
    const File& f = m_files[static_cast<size_t>(index)];
    out.index = index;
    out.origin = f.path;
    out.values.resize(2);
    SampleValue& img = out.values[0];
    img.kind = SampleValue::Kind::Encoded;
    img.image.release();
    KILN_TRY(readPictureFile(f.path, img.encoded));
    out.values[1] = SampleValue::scalar(static_cast<float>(f.label));
    return okStatus();
}

std::vector<float> ImageFolderSource::labels() const {
    std::vector<float> out;
    out.reserve(m_files.size());
    for (const File& f : m_files) out.push_back(static_cast<float>(f.label));
    return out;
}

// ---------------------------------------------------------------------------------------------
// CSV index

Result<SampleValue> readCsvTensor(const std::string& path) {
    std::error_code ec;
    if (!fs::exists(path, ec))
        return Error(ErrorCode::FileNotFound, "The tensor file " + path + " does not exist.")
            .withFile(path)
            .with("path", path);
    KILN_ASSIGN(std::string text, readWholeFile(path));
    KILN_ASSIGN(std::vector<CsvRecord> records, tokenizeCsv(text, path));
    if (records.empty()) return csvParseError(path, 1, 1, path + " holds no numbers.", "empty");
    const size_t cols = records.front().fields.size();
    std::vector<float> values;
    values.reserve(records.size() * cols);
    for (const CsvRecord& r : records) {
        if (r.fields.size() != cols)
            return csvParseError(path, r.line, static_cast<int>(std::min(r.fields.size(), cols)) + 1,
                              "Line " + std::to_string(r.line) + " has " + std::to_string(r.fields.size()) +
                                  " values; the first line has " + std::to_string(cols) + ".",
                              "ragged rows");
        for (size_t c = 0; c < cols; ++c) {
            float v = 0;
            if (r.fields[c].empty())
                return csvParseError(path, r.line, static_cast<int>(c) + 1,
                                  "Column " + std::to_string(c + 1) + " is empty.", "missing value");
            if (!parseCsvNumber(r.fields[c], &v))
                return csvParseError(
                    path, r.line, static_cast<int>(c) + 1,
                    "Column " + std::to_string(c + 1) + ": \"" + r.fields[c] + "\" is not a number.",
                    "not a number");
            values.push_back(v);
        }
    }
    const auto rows = static_cast<int64_t>(records.size());
    Shape shape = rows == 1 ? Shape{static_cast<int64_t>(cols)} : Shape{rows, static_cast<int64_t>(cols)};
    return SampleValue::numbers(std::move(values), std::move(shape));
}

Result<std::shared_ptr<CsvIndexSource>> CsvIndexSource::open(const std::string& path,
                                                             const Options& options) {
    std::error_code ec;
    if (!fs::exists(path, ec))
        return Error(ErrorCode::FileNotFound, "The file " + path + " does not exist.")
            .withFile(path)
            .with("path", path);
    KILN_ASSIGN(std::string text, readWholeFile(path));
    KILN_ASSIGN(std::vector<CsvRecord> records, tokenizeCsv(text, path));
    if (records.empty())
        return csvParseError(path, 1, 1, path + " is empty; a header line is expected.", "empty");
    auto src = std::shared_ptr<CsvIndexSource>(new CsvIndexSource());
    src->m_path = path;
    src->m_dir = fs::path(path).parent_path().string();
    src->m_options = options;

    // Header: "name:description" cells; "name__k" cells form one vector variable.
    const CsvRecord& header = records.front();
    for (size_t c = 0; c < header.fields.size(); ++c) {
        std::string name = header.fields[c].substr(0, header.fields[c].find(':'));
        const int col = static_cast<int>(c) + 1;
        if (name.empty())
            return csvParseError(path, header.line, col,
                              "Header column " + std::to_string(col) + " has no name.", "empty name");
        if (name == options.splitColumn) {
            src->m_splitCell = static_cast<int>(c);
            continue;
        }
        std::string base = name;
        const size_t sep = name.rfind("__");
        if (sep != std::string::npos && sep + 2 < name.size() &&
            std::all_of(name.begin() + static_cast<std::ptrdiff_t>(sep) + 2, name.end(),
                        [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); }))
            base = name.substr(0, sep);
        auto it = std::find_if(src->m_vars.begin(), src->m_vars.end(),
                               [&](const Variable& v) { return v.name == base; });
        if (it != src->m_vars.end() && base == name)
            return csvParseError(path, header.line, col, "The header names \"" + name + "\" twice.",
                              "duplicate column");
        if (it == src->m_vars.end()) {
            src->m_vars.push_back(Variable{base, VarKind::Number, {}, Shape{}});
            it = src->m_vars.end() - 1;
        }
        it->cells.push_back(static_cast<int>(c));
    }
    if (!options.splitColumn.empty() && src->m_splitCell < 0)
        return Error(ErrorCode::ParseError,
                     path + " has no column \"" + options.splitColumn + "\" for the split.")
            .withFile(path, header.line)
            .with("file", path)
            .with("line", std::to_string(header.line))
            .with("reason", "missing column");

    const size_t width = header.fields.size();
    for (size_t r = 1; r < records.size(); ++r) {
        CsvRecord& rec = records[r];
        if (rec.fields.size() < width)
            return csvParseError(path, rec.line, static_cast<int>(rec.fields.size()) + 1,
                              "Line " + std::to_string(rec.line) + " has " +
                                  std::to_string(rec.fields.size()) + " cells; the header has " +
                                  std::to_string(width) + " (column " +
                                  std::to_string(rec.fields.size() + 1) + " is missing).",
                              "missing cell");
        if (rec.fields.size() > width)
            return csvParseError(path, rec.line, static_cast<int>(width) + 1,
                              "Line " + std::to_string(rec.line) + " has " +
                                  std::to_string(rec.fields.size()) + " cells; the header has " +
                                  std::to_string(width) + ".",
                              "extra cell");
        for (Variable& v : src->m_vars) {
            for (int cell : v.cells) {
                const std::string& value = rec.fields[static_cast<size_t>(cell)];
                const int col = cell + 1;
                if (value.empty())
                    return csvParseError(path, rec.line, col,
                                      "Column " + std::to_string(col) + " (\"" + v.name + "\") is empty.",
                                      "missing value");
                VarKind kind = ImageFolderSource::isImageFile(value) ? VarKind::Image
                               : isTensorPath(value)                 ? VarKind::Tensor
                                                                     : VarKind::Number;
                if (r == 1) {
                    if (kind != VarKind::Number && v.cells.size() > 1)
                        return csvParseError(path, rec.line, col,
                                          "Column " + std::to_string(col) + " is part of the vector \"" +
                                              v.name + "\" and must hold a number.",
                                          "not a number");
                    v.kind = kind;
                } else if (kind != v.kind) {
                    const char* want = v.kind == VarKind::Image    ? "an image path"
                                       : v.kind == VarKind::Tensor ? "a CSV tensor path"
                                                                   : "a number";
                    return csvParseError(path, rec.line, col,
                                      "Column " + std::to_string(col) + " (\"" + v.name + "\"): \"" + value +
                                          "\" is not " + want + " like the first row.",
                                      v.kind == VarKind::Number ? "not a number" : "wrong kind");
                }
                float number = 0;
                if (kind == VarKind::Number && !parseCsvNumber(value, &number))
                    return csvParseError(path, rec.line, col,
                                      "Column " + std::to_string(col) + " (\"" + v.name + "\"): \"" + value +
                                          "\" is not a number.",
                                      "not a number");
            }
        }
        src->m_rows.push_back(Row{rec.line, std::move(rec.fields)});
    }
    if (src->m_rows.empty())
        return csvParseError(path, header.line + 1, 1, path + " has a header but no data rows.", "no rows");
    for (Variable& v : src->m_vars) {
        if (v.kind == VarKind::Number)
            v.shape = v.cells.size() == 1 ? Shape{} : Shape{static_cast<int64_t>(v.cells.size())};
        else if (v.kind == VarKind::Image)
            v.shape = Shape{0, 0, 0};
        else {
            const std::string first =
                resolve(src->m_dir, src->m_rows.front().cells[static_cast<size_t>(v.cells[0])]);
            KILN_ASSIGN(SampleValue t, readCsvTensor(first));
            v.shape = t.shape;
        }
    }
    for (const std::string& l : options.labelNames) {
        for (size_t i = 0; i < src->m_vars.size() && src->m_labelVar < 0; ++i)
            if (src->m_vars[i].name == l && src->m_vars[i].kind == VarKind::Number &&
                src->m_vars[i].cells.size() == 1)
                src->m_labelVar = static_cast<int>(i);
    }
    return src;
}

std::vector<ColumnSpec> CsvIndexSource::columnSpecs() const {
    std::vector<ColumnSpec> out;
    for (const Variable& v : m_vars)
        out.push_back(ColumnSpec{v.name, v.shape, v.kind == VarKind::Image, false, {}});
    return out;
}

std::string CsvIndexSource::origin(int64_t index) const {
    const Row& row = m_rows[static_cast<size_t>(index)];
    for (const Variable& v : m_vars)
        if (v.kind != VarKind::Number) return resolve(m_dir, row.cells[static_cast<size_t>(v.cells[0])]);
    return m_path + ":" + std::to_string(row.line);
}

Status CsvIndexSource::load(int64_t index, Sample& out) const {
    if (index < 0 || index >= size())
        return Error(ErrorCode::InvalidArgument, "Sample " + std::to_string(index) + " is out of range.");
    const Row& row = m_rows[static_cast<size_t>(index)];
    out.index = index;
    out.origin = origin(index);
    out.values.resize(m_vars.size());
    for (size_t i = 0; i < m_vars.size(); ++i) {
        const Variable& v = m_vars[i];
        SampleValue& value = out.values[i];
        switch (v.kind) {
        case VarKind::Number: {
            value.kind = SampleValue::Kind::Numbers;
            value.values.resize(v.cells.size());
            for (size_t k = 0; k < v.cells.size(); ++k)
                parseCsvNumber(row.cells[static_cast<size_t>(v.cells[k])], &value.values[k]);
            value.shape = v.shape;
            break;
        }
        case VarKind::Image: {
            value.kind = SampleValue::Kind::Encoded;
            value.image.release();
            const std::string file = resolve(m_dir, row.cells[static_cast<size_t>(v.cells[0])]);
            out.origin = file;
            KILN_TRY(readPictureFile(file, value.encoded));
            break;
        }
        case VarKind::Tensor: {
            const std::string file = resolve(m_dir, row.cells[static_cast<size_t>(v.cells[0])]);
            auto t = readCsvTensor(file);
            if (!t.ok()) {
                Error e = std::move(t.error());
                if (e.code == ErrorCode::FileNotFound) {
                    e.message = m_path + " line " + std::to_string(row.line) + " names the tensor file " +
                                file + ", which does not exist.";
                }
                return e;
            }
            if (t->shape != v.shape)
                return Error(ErrorCode::DataError, file + " holds a tensor of shape " + t->shape.toString() +
                                                       "; the first row's has " + v.shape.toString() + ".")
                    .withFile(file)
                    .with("file", file)
                    .with("reason", "shape");
            value = std::move(t.value());
            break;
        }
        }
    }
    return okStatus();
}

std::vector<float> CsvIndexSource::labels() const {
    if (m_labelVar < 0) return {};
    std::vector<float> out(m_rows.size());
    const int cell = m_vars[static_cast<size_t>(m_labelVar)].cells[0];
    for (size_t r = 0; r < m_rows.size(); ++r)
        parseCsvNumber(m_rows[r].cells[static_cast<size_t>(cell)], &out[r]);
    return out;
}

Status CsvIndexSource::checkClassLabels(const std::string& column, int64_t classes,
                                        const std::vector<std::string>& classNames) const {
    const auto var = std::find_if(m_vars.begin(), m_vars.end(), [&](const Variable& v) {
        return v.name == column && v.kind == VarKind::Number && v.cells.size() == 1;
    });
    if (var == m_vars.end() || classes <= 0) return okStatus();
    const size_t cell = static_cast<size_t>(var->cells[0]);
    for (const Row& row : m_rows) {
        const std::string& label = row.cells[cell];
        float value = 0;
        parseCsvNumber(label, &value);
        if (value >= 0 && value < static_cast<float>(classes) && value == std::floor(value)) continue;
        const std::string known = modelClassesText(classes, classNames);
        return Error(ErrorCode::DataError, "Line " + std::to_string(row.line) + ": the label \"" + label + "\" (column \"" +
                                               column + "\") is not one of the model's " + std::to_string(classes) +
                                               " classes (" + known + ").")
            .withFile(m_path, row.line, static_cast<int>(cell) + 1)
            .with("file", m_path)
            .with("line", std::to_string(row.line))
            .with("label", label)
            .with("reason", "not a class of the model (" + known + ")");
    }
    return okStatus();
}

std::vector<int64_t> CsvIndexSource::rowsInSplit(const std::string& value) const {
    std::vector<int64_t> out;
    if (m_splitCell < 0) return out;
    for (size_t r = 0; r < m_rows.size(); ++r)
        if (lower(m_rows[r].cells[static_cast<size_t>(m_splitCell)]) == lower(value))
            out.push_back(static_cast<int64_t>(r));
    return out;
}

std::string modelClassesText(int64_t classes, const std::vector<std::string>& classNames) {
    if (static_cast<int64_t>(classNames.size()) != classes) return "0 to " + std::to_string(classes - 1);
    std::string known;
    for (size_t k = 0; k < classNames.size(); ++k) known += (k ? ", " : "") + std::to_string(k) + " " + classNames[k];
    return known;
}

// ---------------------------------------------------------------------------------------------
// Detection

Result<std::shared_ptr<SampleSource>> openSource(const std::string& path) {
    std::error_code ec;
    if (!fs::exists(path, ec))
        return Error(ErrorCode::FileNotFound, path + " does not exist.").withFile(path).with("path", path);
    const std::string name = lower(fs::path(path).filename().string());
    if (fs::is_directory(path, ec)) {
        bool idx = false;
        for (const auto& e : fs::directory_iterator(path, ec))
            if (e.path().filename().string().find("images-idx3-ubyte") != std::string::npos) idx = true;
        if (idx) {
            KILN_ASSIGN(auto pair, IdxSource::findPair(path));
            KILN_ASSIGN(auto src, IdxSource::open(pair.first, pair.second));
            return std::shared_ptr<SampleSource>(std::move(src));
        }
        KILN_ASSIGN(auto splits, ImageFolderSource::openSplits(path));
        if (!splits.empty()) {
            auto it = splits.count("train") ? splits.find("train") : splits.begin();
            return std::shared_ptr<SampleSource>(it->second);
        }
        KILN_ASSIGN(auto src, ImageFolderSource::open(path));
        return std::shared_ptr<SampleSource>(std::move(src));
    }
    if (name.find("idx") != std::string::npos && name.find("ubyte") != std::string::npos) {
        KILN_ASSIGN(auto pair, IdxSource::findPair(path));
        KILN_ASSIGN(auto src, IdxSource::open(pair.first, pair.second));
        return std::shared_ptr<SampleSource>(std::move(src));
    }
    if (endsWith(name, ".csv") || endsWith(name, ".csv.gz") || endsWith(name, ".tsv")) {
        KILN_ASSIGN(std::string text, readWholeFile(path));
        // Only the first lines decide; cut the text after the third line break.
        size_t cut = 0;
        for (int i = 0; i < 3 && cut != std::string::npos; ++i) cut = text.find('\n', cut == 0 ? 0 : cut + 1);
        KILN_ASSIGN(
            std::vector<CsvRecord> head,
            tokenizeCsv(cut == std::string::npos ? text : std::string_view(text).substr(0, cut), path));
        if (head.empty())
            return Error(ErrorCode::ParseError, path + " is empty.")
                .withFile(path, 1)
                .with("file", path)
                .with("reason", "empty");
        auto numeric = [](const CsvRecord& r, size_t* count) {
            size_t n = 0;
            for (const auto& f : r.fields) {
                float v;
                if (parseCsvNumber(f, &v)) ++n;
            }
            *count = n;
            return n == r.fields.size();
        };
        bool index = false;
        for (const auto& f : head.front().fields)
            if (f.find(':') != std::string::npos) index = true;
        if (head.size() > 1)
            for (const auto& f : head[1].fields)
                if (ImageFolderSource::isImageFile(f) || isTensorPath(f)) index = true;
        if (index) {
            KILN_ASSIGN(auto src, CsvIndexSource::open(path));
            return std::shared_ptr<SampleSource>(std::move(src));
        }
        CsvTableOptions opts;
        size_t n0 = 0, n1 = 0;
        const bool firstNumeric = numeric(head.front(), &n0);
        const bool secondNumeric = head.size() > 1 && numeric(head[1], &n1);
        if (!firstNumeric && n0 > 0 && secondNumeric)
            opts.skipRows = 1;  // a summary line (sklearn style)
        else if (!firstNumeric)
            opts.hasHeader = true;
        KILN_ASSIGN(InMemoryDataset table, readCsvTable(path, opts));
        return std::shared_ptr<SampleSource>(std::make_shared<InMemorySource>(std::move(table), "table"));
    }
    return Error(ErrorCode::UnsupportedFormat,
                 "Kiln cannot tell what " + path + " holds (IDX, image folder, CSV or TFRecord expected).")
        .withFile(path)
        .with("file", path)
        .with("format", fs::path(path).extension().string());
}

std::vector<int64_t> sourceClassCounts(const SampleSource& source) {
    std::vector<int64_t> counts;
    for (float l : source.labels()) {
        if (l < 0 || l != static_cast<float>(static_cast<int64_t>(l))) continue;
        const auto k = static_cast<size_t>(l);
        if (counts.size() <= k) counts.resize(k + 1, 0);
        ++counts[k];
    }
    return counts;
}

}  // namespace kiln::engine::data
