// SPDX-License-Identifier: Apache-2.0
// Reader for numeric CSV tables (optionally gzip-compressed): a label column plus feature
// columns, with one-hot encoding of categorical columns and named groups of input columns.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/core/error.h"
#include "engine/data/dataset.h"

namespace kiln::engine::data {

// A column of the file: by 0-based position (negative counts from the end, -1 = last), or by
// its header name (needs CsvTableOptions::hasHeader).
struct CsvColumnRef {
    int64_t index = 0;
    std::string name;  // used when not empty

    CsvColumnRef() = default;
    // Implicit on purpose, so that options read naturally: labelColumn = -1, = "species".
    CsvColumnRef(int64_t position) : index(position) {}
    CsvColumnRef(int position) : index(position) {}
    CsvColumnRef(std::string columnName) : name(std::move(columnName)) {}
    CsvColumnRef(const char* columnName) : name(columnName) {}

    bool byName() const { return !name.empty(); }
    std::string toString() const;  // "3" or "\"age\""
};

// File columns gathered, in the order listed, into one named input column of shape [F].
struct CsvColumnGroup {
    std::string name;
    std::vector<CsvColumnRef> columns{};

    // The file columns [begin, end) by position.
    static CsvColumnGroup range(std::string name, int64_t begin, int64_t end);
};

struct CsvTableOptions {
    // Physical lines skipped before anything else (the sklearn files start with a summary line
    // such as "569,30,malignant,benign").
    int skipRows = 0;
    // The first row after the skipped ones names the columns.
    bool hasHeader = false;
    char delimiter = ',';
    // The class column; std::nullopt for a table without labels.
    std::optional<CsvColumnRef> labelColumn = CsvColumnRef(-1);
    // Labels are names ("setosa", "A") rather than numbers: they become indices of the sorted
    // distinct names, which are kept in Column::classNames.
    bool categoricalLabel = false;
    // Feature columns holding categories: each becomes one 0/1 element per distinct value, the
    // values sorted (numerically when all are numbers).
    std::vector<CsvColumnRef> categoricalColumns{};
    // Named input columns. Empty: every column but the label (and the ignored ones) goes, in
    // file order, into one column named `featuresName`. Columns in no group are not read.
    std::vector<CsvColumnGroup> groups{};
    // Columns left out of the default "features" group (an id, say).
    std::vector<CsvColumnRef> ignoredColumns{};
    // Empty numeric cells become NaN instead of an error.
    bool allowMissing = false;
    std::string featuresName = "features";
    std::string labelName = "label";
};

// How readCsvTable made data columns of a table's file columns: kept so that other rows can be
// read the same way (readCsvRows), into the same elements with the same categories.
struct CsvTableLayout {
    std::vector<std::string> header;  // the header row; empty without one
    int64_t width = 0;                // columns per row
    int64_t labelColumn = -1;         // 0-based; -1 for a table without labels
    // The data columns in order: name and the 0-based file columns gathered into it.
    std::vector<std::pair<std::string, std::vector<int64_t>>> groups;
    std::vector<int64_t> categorical;  // the one-hot file columns
    // The sorted categories of every one-hot column (and of the label when it holds names).
    std::map<int64_t, std::vector<std::string>> categories;
};

// Reads a table into a data set: one column per group (shape [F]) and the scalar label column.
// Handles quoted fields (with "" escapes, delimiters and line breaks inside), CRLF line ends, a
// UTF-8 byte order mark and blank lines. Errors are ParseError with the file, the line and the
// 1-based column; Error::toString() reads e.g. `breast.csv:17:4: Column 4: "abc" is not a number.`
// Bad options (an unknown column name, a position past the end) are InvalidArgument. `layout`,
// when given, receives the columns as resolved.
Result<InMemoryDataset> readCsvTable(const std::string& path, const CsvTableOptions& options = {},
                                     CsvTableLayout* layout = nullptr);

// Reads other rows (new samples to predict) the way `layout` of another table was read, with the
// same `options` (skipped lines, header, delimiter, missing cells): the same data columns of the
// same elements in the same order, one-hot columns over the categories of `layout`. With a header
// the columns are found by their names in it, so they may stand in another order and others may
// be added; without one, a row holds the columns of the table, or all but the label column. The
// label column is left out when the rows do not have it, unless `requireLabel`. ParseError naming
// the file, the line and the column for a column that is missing (the header's line), a category
// that is not one of the layout's (naming the value and the known ones), a cell that is not a
// number.
Result<InMemoryDataset> readCsvRows(const std::string& path, const CsvTableOptions& options, const CsvTableLayout& layout,
                                    bool requireLabel);

// One record of a CSV text: its cells (quotes removed, unquoted cells trimmed) and the 1-based
// physical line where it starts.
struct CsvRecord {
    std::vector<std::string> fields;
    int line = 0;
};

// Splits CSV text into records with the rules of readCsvTable (quotes, CRLF, blank lines
// skipped; a leading UTF-8 byte order mark is dropped). ParseError naming `path` on an
// unterminated quote.
// A ParseError naming the file, line and column (1-based), with "reason" for the UI.
Error csvParseError(const std::string& path, int line, int column, const std::string& message,
                    const std::string& reason);

Result<std::vector<CsvRecord>> tokenizeCsv(std::string_view text, const std::string& path, char delimiter = ',');

// Parses a whole cell (spaces around it allowed) as one float; false when it is not a number.
bool parseCsvNumber(std::string_view cell, float* out);

}  // namespace kiln::engine::data
