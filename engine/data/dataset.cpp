// SPDX-License-Identifier: Apache-2.0
// The in-memory columnar data set and the default batch gathering of DataSource.
#include "engine/data/dataset.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace kiln::engine::data {

namespace {

std::string formatFloat(float v) {
    std::array<char, 32> buf{};
    std::snprintf(buf.data(), buf.size(), "%g", static_cast<double>(v));
    return buf.data();
}

}  // namespace

std::span<const float> Column::sample(int64_t index) const {
    const auto n = static_cast<size_t>(sampleSize());
    return {values.data() + static_cast<size_t>(index) * n, n};
}

std::span<float> Column::sample(int64_t index) {
    const auto n = static_cast<size_t>(sampleSize());
    return {values.data() + static_cast<size_t>(index) * n, n};
}

DataSource::~DataSource() = default;

Status DataSource::readBatch(std::span<const int64_t> indices, std::span<float* const> out) const {
    const auto cols = columns();
    if (out.size() != cols.size())
        return Error(ErrorCode::InvalidArgument, "readBatch needs one output buffer per column (" +
                                                     std::to_string(cols.size()) + "), got " +
                                                     std::to_string(out.size()) + ".");
    std::vector<float*> cursor(out.begin(), out.end());
    for (int64_t index : indices) {
        KILN_TRY(read(index, cursor));
        for (size_t c = 0; c < cols.size(); ++c) cursor[c] += cols[c].second.numel();
    }
    return okStatus();
}

Result<InMemoryDataset> InMemoryDataset::create(int64_t count, std::vector<Column> columns) {
    if (count < 0)
        return Error(ErrorCode::InvalidArgument, "A data set cannot have a negative sample count.");
    InMemoryDataset set(count);
    for (Column& c : columns) KILN_TRY(set.addColumn(std::move(c)));
    return set;
}

const Column* InMemoryDataset::column(std::string_view name) const {
    for (const Column& c : m_columns)
        if (c.name == name) return &c;
    return nullptr;
}

Column* InMemoryDataset::column(std::string_view name) {
    for (Column& c : m_columns)
        if (c.name == name) return &c;
    return nullptr;
}

Status InMemoryDataset::addColumn(Column column) {
    if (column.name.empty()) return Error(ErrorCode::InvalidArgument, "A data set column needs a name.");
    if (this->column(column.name) != nullptr)
        return Error(ErrorCode::InvalidArgument, "The data set already has a column \"" + column.name + "\".")
            .with("column", column.name);
    if (!column.sampleShape.isConcrete())
        return Error(ErrorCode::InvalidArgument, "Column \"" + column.name +
                                                     "\" has the non-concrete shape " +
                                                     column.sampleShape.toString() + ".")
            .with("column", column.name);
    const int64_t expected = m_count * column.sampleSize();
    if (static_cast<int64_t>(column.values.size()) != expected)
        return Error(ErrorCode::InvalidArgument,
                     "Column \"" + column.name + "\" holds " + std::to_string(column.values.size()) +
                         " values, but " + std::to_string(m_count) + " samples of shape " +
                         column.sampleShape.toString() + " need " + std::to_string(expected) + ".")
            .with("column", column.name);
    m_columns.push_back(std::move(column));
    return okStatus();
}

Result<InMemoryDataset> InMemoryDataset::subset(std::span<const int64_t> indices) const {
    for (int64_t i : indices)
        if (i < 0 || i >= m_count)
            return Error(ErrorCode::InvalidArgument, "Sample index " + std::to_string(i) +
                                                         " is outside the data set (0.." +
                                                         std::to_string(m_count - 1) + ").");
    InMemoryDataset out(static_cast<int64_t>(indices.size()));
    out.m_columns.reserve(m_columns.size());
    for (const Column& src : m_columns) {
        Column dst;
        dst.name = src.name;
        dst.sampleShape = src.sampleShape;
        dst.elementNames = src.elementNames;
        dst.classNames = src.classNames;
        dst.elementColumns = src.elementColumns;
        dst.elementCategories = src.elementCategories;
        const auto n = static_cast<size_t>(src.sampleSize());
        dst.values.resize(indices.size() * n);
        float* to = dst.values.data();
        for (int64_t i : indices) {
            if (n > 0) std::memcpy(to, src.values.data() + static_cast<size_t>(i) * n, n * sizeof(float));
            to += n;
        }
        out.m_columns.push_back(std::move(dst));
    }
    if (hasSourceLines()) {
        out.m_sourceFile = m_sourceFile;
        out.m_sourceLines.reserve(indices.size());
        for (int64_t i : indices) out.m_sourceLines.push_back(m_sourceLines[static_cast<size_t>(i)]);
    }
    return out;
}

Status InMemoryDataset::setSourceLines(std::string file, std::vector<int64_t> lines) {
    if (static_cast<int64_t>(lines.size()) != m_count)
        return Error(ErrorCode::InvalidArgument, std::to_string(lines.size()) + " source lines given for " +
                                                     std::to_string(m_count) + " samples.");
    m_sourceFile = std::move(file);
    m_sourceLines = std::move(lines);
    return okStatus();
}

int64_t InMemoryDataset::sourceLine(int64_t index) const {
    if (index < 0 || static_cast<size_t>(index) >= m_sourceLines.size()) return 0;
    return m_sourceLines[static_cast<size_t>(index)];
}

std::string InMemoryDataset::sourceOf(int64_t index) const {
    const int64_t line = sourceLine(index);
    return line > 0 ? m_sourceFile + ":" + std::to_string(line) : std::string();
}

std::vector<std::pair<std::string, Shape>> InMemoryDataset::columns() const {
    std::vector<std::pair<std::string, Shape>> out;
    out.reserve(m_columns.size());
    for (const Column& c : m_columns) out.emplace_back(c.name, c.sampleShape);
    return out;
}

Status InMemoryDataset::read(int64_t index, std::span<float* const> out) const {
    if (index < 0 || index >= m_count)
        return Error(ErrorCode::InvalidArgument, "Sample index " + std::to_string(index) +
                                                     " is outside the data set (0.." +
                                                     std::to_string(m_count - 1) + ").");
    if (out.size() != m_columns.size())
        return Error(ErrorCode::InvalidArgument, "read needs one output buffer per column (" +
                                                     std::to_string(m_columns.size()) + "), got " +
                                                     std::to_string(out.size()) + ".");
    for (size_t c = 0; c < m_columns.size(); ++c) {
        auto s = m_columns[c].sample(index);
        if (!s.empty()) std::memcpy(out[c], s.data(), s.size_bytes());
    }
    return okStatus();
}

Status InMemoryDataset::readBatch(std::span<const int64_t> indices, std::span<float* const> out) const {
    if (out.size() != m_columns.size())
        return Error(ErrorCode::InvalidArgument, "readBatch needs one output buffer per column (" +
                                                     std::to_string(m_columns.size()) + "), got " +
                                                     std::to_string(out.size()) + ".");
    for (int64_t i : indices)
        if (i < 0 || i >= m_count)
            return Error(ErrorCode::InvalidArgument, "Sample index " + std::to_string(i) +
                                                         " is outside the data set (0.." +
                                                         std::to_string(m_count - 1) + ").");
    for (size_t c = 0; c < m_columns.size(); ++c) {
        const Column& col = m_columns[c];
        const auto n = static_cast<size_t>(col.sampleSize());
        float* to = out[c];
        for (int64_t i : indices) {
            if (n > 0) std::memcpy(to, col.values.data() + static_cast<size_t>(i) * n, n * sizeof(float));
            to += n;
        }
    }
    return okStatus();
}

Result<std::vector<int64_t>> classCounts(const Column& labels) {
    if (labels.sampleSize() != 1)
        return Error(ErrorCode::DataError, "Column \"" + labels.name +
                                               "\" is not a scalar label column (shape " +
                                               labels.sampleShape.toString() + ").")
            .with("column", labels.name);
    std::vector<int64_t> counts;
    for (float v : labels.values) {
        if (!std::isfinite(v) || v < 0.0f || v != std::floor(v) || v > 1.0e7f)
            return Error(ErrorCode::DataError, "Label " + formatFloat(v) + " in column \"" + labels.name +
                                                   "\" is not a class index (a whole number from 0).")
                .with("column", labels.name);
        const auto k = static_cast<size_t>(v);
        if (k >= counts.size()) counts.resize(k + 1, 0);
        ++counts[k];
    }
    return counts;
}

}  // namespace kiln::engine::data
