// SPDX-License-Identifier: Apache-2.0
// Data sets as seen by training: a DataSource yields samples as named float columns; an
// InMemoryDataset is the simple columnar implementation every reader produces today.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/core/error.h"
#include "engine/core/shape.h"

namespace kiln::engine::data {

// One named column of a data set: `count` samples of `sampleShape`, stored sample after sample.
// Labels are a scalar column (sampleShape == Shape{}) holding class indices as floats.
struct Column {
    std::string name;
    Shape sampleShape;          // concrete; Shape{} for a scalar
    std::vector<float> values;  // count * sampleShape.numel() floats
    // Optional, for display: one name per element of a sample (a CSV header, "colour=red" for a
    // one-hot element), or one name per class for a label column ("malignant", "benign").
    std::vector<std::string> elementNames;
    std::vector<std::string> classNames;
    // Optional, for showing samples as their file holds them: per element, the file column it
    // comes from (0-based) and, for a one-hot element, the category it stands for ("" for a
    // number). A CSV table fills both; other readers leave them empty.
    std::vector<int64_t> elementColumns;
    std::vector<std::string> elementCategories;

    int64_t sampleSize() const { return sampleShape.numel(); }
    std::span<const float> sample(int64_t index) const;
    std::span<float> sample(int64_t index);
};

// The reader interface of the training pipeline. Samples are addressed by index in [0, size());
// each sample has one value block per column, in the order columns() lists them.
//
// Today every reader loads its file into an InMemoryDataset. The streaming pipeline (data larger
// than memory, decoding on worker threads, prefetching) will add further DataSource
// implementations behind this same interface, so trainers written against DataSource keep working.
class DataSource {
public:
    virtual ~DataSource();

    virtual int64_t size() const = 0;
    // (name, per-sample shape) of each column.
    virtual std::vector<std::pair<std::string, Shape>> columns() const = 0;
    // Copies sample `index` into out[c] for every column c (out[c] holds sampleShape.numel() floats).
    virtual Status read(int64_t index, std::span<float* const> out) const = 0;
    // Gathers the samples `indices` into contiguous batches: out[c] receives indices.size() samples
    // of column c, one after another. The default calls read() per sample.
    virtual Status readBatch(std::span<const int64_t> indices, std::span<float* const> out) const;
};

// A columnar data set held in memory. Every column has `count()` samples.
class InMemoryDataset : public DataSource {
public:
    InMemoryDataset() = default;
    explicit InMemoryDataset(int64_t count) : m_count(count) {}

    // Builds a data set from columns, checking names are unique and sizes match `count`.
    static Result<InMemoryDataset> create(int64_t count, std::vector<Column> columns);

    int64_t count() const { return m_count; }
    const std::vector<Column>& columnData() const { return m_columns; }
    std::vector<Column>& columnData() { return m_columns; }
    // nullptr when there is no column of that name.
    const Column* column(std::string_view name) const;
    Column* column(std::string_view name);

    // Appends a column; its name must be new and it must hold count() samples.
    Status addColumn(Column column);

    // The samples `indices` (in that order, repeats allowed) as a new data set, with their
    // source lines.
    Result<InMemoryDataset> subset(std::span<const int64_t> indices) const;

    // Optional: where each sample stands in the file it was read from, so that reports can name
    // it. A CSV table sets its path and the 1-based line where each row starts; subset() keeps
    // every line with its sample. InvalidArgument unless there is one line per sample.
    Status setSourceLines(std::string file, std::vector<int64_t> lines);
    bool hasSourceLines() const { return !m_sourceLines.empty(); }
    const std::string& sourceFile() const { return m_sourceFile; }
    // The line of sample `index`, 0 when unknown.
    int64_t sourceLine(int64_t index) const;
    // "FILE:LINE" for sample `index`, "" when unknown.
    std::string sourceOf(int64_t index) const;

    // DataSource
    int64_t size() const override { return m_count; }
    std::vector<std::pair<std::string, Shape>> columns() const override;
    Status read(int64_t index, std::span<float* const> out) const override;
    Status readBatch(std::span<const int64_t> indices, std::span<float* const> out) const override;

private:
    int64_t m_count = 0;
    std::vector<Column> m_columns;
    std::string m_sourceFile;
    std::vector<int64_t> m_sourceLines;  // empty, or one per sample
};

// Number of samples per class in a label column: result[k] counts the samples whose label is k.
// Fails when a label is not a non-negative whole number.
Result<std::vector<int64_t>> classCounts(const Column& labels);

}  // namespace kiln::engine::data
