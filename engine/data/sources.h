// SPDX-License-Identifier: Apache-2.0
// Random-access sample sources for the streaming pipeline: IDX files, image folders (one
// subfolder per class), CSV indexes in Neural Network Console style and in-memory tables.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/error.h"
#include "engine/data/dataset.h"
#include "engine/data/idx_reader.h"
#include "engine/data/sample.h"

namespace kiln::engine::data {

// A data set whose samples are addressed by index and loaded on demand, from any thread.
// load() leaves pictures encoded where the source stores them encoded (the pipeline decodes them
// on its worker threads). As a DataSource, read() decodes pictures and requires every sample of a
// column to have the column's shape (use the pipeline with a resize transform otherwise).
class SampleSource : public DataSource {
public:
    // "idx", "image-folder", "csv-index", "table".
    virtual std::string kind() const = 0;
    virtual std::vector<ColumnSpec> columnSpecs() const = 0;
    // Fills `out` (index, origin, one value per column). Thread-safe. A picture that cannot be
    // read is DataError naming the file; the pipeline counts and skips those.
    virtual Status load(int64_t index, Sample& out) const = 0;
    // The file sample `index` comes from ("" when there is none).
    virtual std::string origin(int64_t index) const { return {}; }
    // One class label per sample (the label column) without reading pictures; empty when the
    // source has no label column. Used for stratified splits and class counts.
    virtual std::vector<float> labels() const { return {}; }

    // DataSource
    std::vector<std::pair<std::string, Shape>> columns() const override;
    Status read(int64_t index, std::span<float* const> out) const override;
};

// Wraps an in-memory data set (a CSV table, or anything a reader produced). A column whose
// name is `imageColumn` and whose samples are [H,W,C] is handed out as an image (values kept
// as they are, so pixel transforms see the stored scale).
class InMemorySource : public SampleSource {
public:
    explicit InMemorySource(InMemoryDataset data, std::string kind = "table",
                            std::string labelColumn = "label", std::string imageColumn = {});
    std::string kind() const override { return m_kind; }
    int64_t size() const override { return m_data.count(); }
    std::vector<ColumnSpec> columnSpecs() const override;
    Status load(int64_t index, Sample& out) const override;
    std::vector<float> labels() const override;
    const InMemoryDataset& data() const { return m_data; }

private:
    InMemoryDataset m_data;
    std::string m_kind;
    std::string m_labelColumn;
    std::string m_imageColumn;
};

// IDX image + label files (MNIST, Fashion-MNIST). Pictures stay 8-bit (values 0..255) so that
// they convert to PNG unchanged; a "normalize" transform scales them.
class IdxSource : public SampleSource {
public:
    // `limit` >= 0 reads only the first samples.
    static Result<std::shared_ptr<IdxSource>> open(const std::string& imagesPath,
                                                   const std::string& labelsPath, int64_t limit = -1);
    // Finds "<prefix>-images-idx3-ubyte[.gz]" and the matching labels file given either one of
    // them or a folder holding exactly one such pair (train-* is preferred).
    static Result<std::pair<std::string, std::string>> findPair(const std::string& path);

    std::string kind() const override { return "idx"; }
    int64_t size() const override { return m_count; }
    std::vector<ColumnSpec> columnSpecs() const override;
    Status load(int64_t index, Sample& out) const override;
    std::string origin(int64_t index) const override { return m_imagesPath; }
    std::vector<float> labels() const override { return m_labels; }

private:
    std::string m_imagesPath;
    int64_t m_count = 0;
    int m_height = 0, m_width = 0, m_channels = 1;
    std::vector<uint8_t> m_pixels;  // m_count * H * W * C
    std::vector<float> m_labels;
};

// Keras flow_from_directory semantics: every subfolder of the root is a class (sorted by name,
// byte order), every file below it (recursively, sorted by path) with extension jpg, jpeg, png,
// bmp, tif or tiff (any case) is a sample. Names starting with "." are ignored. Columns: "image"
// (encoded) and "label" (class index).
class ImageFolderSource : public SampleSource {
public:
    struct Options {
        // Fixed class list (e.g. the training split's, for validation/test folders); empty: the
        // subfolders found.
        std::vector<std::string> classNames;
        std::string imageColumn = "image";
        std::string labelColumn = "label";
    };
    static Result<std::shared_ptr<ImageFolderSource>> open(const std::string& root, const Options& options);
    static Result<std::shared_ptr<ImageFolderSource>> open(const std::string& root) {
        return open(root, Options{});
    }

    // Split subfolders: "train", "validation" (or "val"), "test", each holding class folders.
    // Returns split name -> source ("train", "validation", "test"), classes taken from train (or
    // the union when there is no train folder). Empty map when `root` is not laid out that way.
    static Result<std::map<std::string, std::shared_ptr<ImageFolderSource>>> openSplits(
        const std::string& root);
    static bool isImageFile(const std::string& path);
    // Pictures to predict, in the given order, with the columns of an image folder of
    // `options.classNames`; their labels are unknown and read as class 0 (never use them for
    // figures). DataError naming the first path that is not a picture file.
    static Result<std::shared_ptr<ImageFolderSource>> fromFiles(const std::vector<std::string>& files,
                                                                const Options& options);

    std::string kind() const override { return "image-folder"; }
    int64_t size() const override { return static_cast<int64_t>(m_files.size()); }
    std::vector<ColumnSpec> columnSpecs() const override;
    Status load(int64_t index, Sample& out) const override;
    std::string origin(int64_t index) const override { return m_files[static_cast<size_t>(index)].path; }
    std::vector<float> labels() const override;
    const std::vector<std::string>& classNames() const { return m_classes; }
    const std::string& root() const { return m_root; }

private:
    struct File {
        std::string path;
        int label = 0;
    };
    std::string m_root;
    Options m_options;
    std::vector<std::string> m_classes;
    std::vector<File> m_files;
};

// A CSV index in Neural Network Console style. The header names variables, `name:description`
// (the description is ignored); columns `name__0`, `name__1`, ... form one vector variable. Each
// cell is a number, an image path or a path to a per-sample CSV tensor (rows x columns of
// numbers), paths relative to the index file. The kind of a variable comes from its first row
// and must stay the same. Every problem in the index itself is ParseError with file, line and
// column; a per-sample CSV tensor that is wrong fails the same way when the sample is loaded.
class CsvIndexSource : public SampleSource {
public:
    struct Options {
        // Variable whose values (text, not numbers) assign rows to splits, e.g. "split" with
        // values train/validation/test; it is not a data column. Empty: none.
        std::string splitColumn;
        // Name of the label variable reported by labels() (the first of these present).
        std::vector<std::string> labelNames{"y", "label"};
    };
    static Result<std::shared_ptr<CsvIndexSource>> open(const std::string& path, const Options& options);
    static Result<std::shared_ptr<CsvIndexSource>> open(const std::string& path) {
        return open(path, Options{});
    }

    std::string kind() const override { return "csv-index"; }
    int64_t size() const override { return static_cast<int64_t>(m_rows.size()); }
    std::vector<ColumnSpec> columnSpecs() const override;
    Status load(int64_t index, Sample& out) const override;
    std::string origin(int64_t index) const override;
    std::vector<float> labels() const override;
    // Row indices whose split cell equals `value` (needs Options::splitColumn).
    std::vector<int64_t> rowsInSplit(const std::string& value) const;
    // Checks that every row's value of the number column `column` is a class index below
    // `classes` (a whole number from 0). DataError naming the file, the line and the label of the
    // first row that is not, with the classes (`classNames` when there are `classes` of them,
    // else their indices). A source without that column is not checked.
    Status checkClassLabels(const std::string& column, int64_t classes, const std::vector<std::string>& classNames) const;

private:
    enum class VarKind { Number, Image, Tensor };
    struct Variable {
        std::string name;
        VarKind kind = VarKind::Number;
        std::vector<int> cells;  // file column positions (several for name__k)
        Shape shape;
    };
    struct Row {
        int line = 0;
        std::vector<std::string> cells;
    };
    std::string m_path;
    std::string m_dir;
    Options m_options;
    std::vector<Variable> m_vars;
    int m_splitCell = -1;
    int m_labelVar = -1;
    std::vector<Row> m_rows;
};

// Reads a per-sample CSV tensor: rows x columns of numbers (shape [rows, columns], or [columns]
// for a single row). ParseError with file, line and column on a bad cell.
Result<SampleValue> readCsvTensor(const std::string& path);

// Opens whatever `path` is: an IDX file or a folder with an IDX pair, an image folder (class
// subfolders; for split folders the "train" part), a CSV index (a header with an image or
// tensor path in its first row), or a numeric CSV table (label in the last column).
Result<std::shared_ptr<SampleSource>> openSource(const std::string& path);

// The classes of a model as the refusal of a label names them: "0 dark, 1 grey, 2 light" when
// there are `classes` names, else "0 to N-1".
std::string modelClassesText(int64_t classes, const std::vector<std::string>& classNames);

// Per-class counts of a source's labels (empty without labels).
std::vector<int64_t> sourceClassCounts(const SampleSource& source);

}  // namespace kiln::engine::data
