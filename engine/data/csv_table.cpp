// SPDX-License-Identifier: Apache-2.0
// CSV tables: a small RFC 4180 style tokenizer (quotes, CRLF, blank lines) followed by column
// selection, one-hot encoding and number parsing with errors that point at line and column.
#include "engine/data/csv_table.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include "engine/data/byte_reader.h"

namespace kiln::engine::data {

namespace {

struct Record {
    std::vector<std::string> fields;
    int line = 0;  // 1-based line where the record starts
};

bool isBlank(char c) {
    return c == ' ' || c == '\t';
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && isBlank(s.front())) s.remove_prefix(1);
    while (!s.empty() && isBlank(s.back())) s.remove_suffix(1);
    return s;
}

// Parses a whole cell as a float; false when it is not exactly one number.
bool parseNumber(std::string_view cell, float* out) {
    cell = trim(cell);
    if (!cell.empty() && cell.front() == '+') cell.remove_prefix(1);
    if (cell.empty()) return false;
    const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), *out);
    return ec == std::errc() && end == cell.data() + cell.size();
}

std::string baseName(const std::string& path) {
    return std::filesystem::path(path).filename().string();
}

// Splits `text` (starting at physical line `line`) into records.
Result<std::vector<Record>> tokenize(std::string_view text, char delimiter, int line,
                                     const std::string& path) {
    std::vector<Record> records;
    Record current;
    current.line = line;
    std::string field;
    bool inQuotes = false;
    bool fieldQuoted = false;   // the current field was quoted (keep its spaces)
    bool recordQuoted = false;  // some field of the record was quoted (so it is not blank)
    int quoteLine = 0;

    auto endField = [&] {
        current.fields.emplace_back(fieldQuoted ? field : std::string(trim(field)));
        field.clear();
        fieldQuoted = false;
    };
    auto endRecord = [&] {
        endField();
        const bool blank = current.fields.size() == 1 && current.fields[0].empty() && !recordQuoted;
        if (!blank) records.push_back(std::move(current));
        current = Record{};
        recordQuoted = false;
    };

    const size_t n = text.size();
    for (size_t i = 0; i < n; ++i) {
        const char c = text[i];
        if (inQuotes) {
            if (c == '"') {
                if (i + 1 < n && text[i + 1] == '"') {
                    field += '"';
                    ++i;
                } else {
                    inQuotes = false;
                }
            } else if (c == '\r' && i + 1 < n && text[i + 1] == '\n') {
                // CRLF inside a quoted field is kept as a plain line break.
            } else {
                if (c == '\n') ++line;
                field += c;
            }
            continue;
        }
        if (c == delimiter) {
            endField();
        } else if (c == '\n' || c == '\r') {
            if (c == '\r' && i + 1 < n && text[i + 1] == '\n') ++i;
            endRecord();
            ++line;
            current.line = line;
        } else if (c == '"' && trim(field).empty() && !fieldQuoted) {
            inQuotes = true;
            fieldQuoted = true;
            recordQuoted = true;
            quoteLine = line;
            field.clear();
        } else if (fieldQuoted && isBlank(c)) {
            // spaces between a closing quote and the delimiter
        } else {
            field += c;
        }
    }
    if (inQuotes)
        return Error(ErrorCode::ParseError,
                     "A quoted field starting on line " + std::to_string(quoteLine) + " is never closed.")
            .withFile(path, quoteLine)
            .with("file", path)
            .with("line", std::to_string(quoteLine))
            .with("reason", "unterminated quote");
    if (!field.empty() || fieldQuoted || !current.fields.empty()) endRecord();
    return records;
}

Error optionError(const std::string& path, const std::string& message) {
    return Error(ErrorCode::InvalidArgument, message).withFile(path).with("reason", message);
}

// Sorted distinct values; numerically when every value is a number.
std::vector<std::string> sortedCategories(const std::set<std::string>& values) {
    std::vector<std::string> out(values.begin(), values.end());
    bool numeric = true;
    for (const auto& v : out) {
        float f = 0.0f;
        if (!parseNumber(v, &f)) {
            numeric = false;
            break;
        }
    }
    if (numeric) {
        std::stable_sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
            float fa = 0.0f, fb = 0.0f;
            parseNumber(a, &fa);
            parseNumber(b, &fb);
            return fa < fb;
        });
    }
    return out;
}

}  // namespace

std::string CsvColumnRef::toString() const {
    return byName() ? "\"" + name + "\"" : std::to_string(index);
}

CsvColumnGroup CsvColumnGroup::range(std::string name, int64_t begin, int64_t end) {
    CsvColumnGroup g;
    g.name = std::move(name);
    for (int64_t i = begin; i < end; ++i) g.columns.emplace_back(i);
    return g;
}

namespace {

// A file's records after the byte order mark and the skipped lines, with the header split off
// and every row checked to have `width` fields.
struct ParsedTable {
    std::vector<Record> records;
    size_t first = 0;  // the first data record
    std::vector<std::string> header;
    int headerLine = 0;
    int64_t width = 0;
};

Result<ParsedTable> parseTable(const std::string& path, const CsvTableOptions& options) {
    KILN_ASSIGN(std::string text, readWholeFile(path));

    // Byte order mark, then the skipped physical lines.
    size_t pos = 0;
    if (text.size() >= 3 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) pos = 3;
    int line = 1;
    for (int skipped = 0; skipped < options.skipRows && pos < text.size(); ++skipped) {
        const size_t eol = text.find_first_of("\r\n", pos);
        if (eol == std::string::npos) {
            pos = text.size();
        } else {
            pos = eol + ((text[eol] == '\r' && eol + 1 < text.size() && text[eol + 1] == '\n') ? 2 : 1);
        }
        ++line;
    }
    ParsedTable t;
    KILN_ASSIGN(t.records, tokenize(std::string_view(text).substr(pos), options.delimiter, line, path));
    text = std::string();

    if (options.hasHeader) {
        if (t.records.empty())
            return Error(ErrorCode::DataError, "The table has no header row.")
                .withFile(path)
                .with("reason", "empty");
        t.header = t.records[0].fields;
        t.headerLine = t.records[0].line;
        t.first = 1;
    }
    if (t.records.size() <= t.first)
        return Error(ErrorCode::DataError, "The table has no data rows.")
            .withFile(path)
            .with("reason", "empty");

    t.width = static_cast<int64_t>(t.header.empty() ? t.records[t.first].fields.size() : t.header.size());
    for (size_t r = t.first; r < t.records.size(); ++r) {
        const auto found = static_cast<int64_t>(t.records[r].fields.size());
        if (found != t.width)
            return csvParseError(
                path, t.records[r].line, 0,
                "Expected " + std::to_string(t.width) + " columns, found " + std::to_string(found) + ".",
                "column count");
    }
    return t;
}

// "Column 4" or "Column 4 ("age")" for field `f` (0-based) of a table with `header`.
std::string columnWhere(const std::vector<std::string>& header, int64_t f) {
    const std::string number = "Column " + std::to_string(f + 1);
    return header.empty() || header[static_cast<size_t>(f)].empty() ? number
                                                                    : number + " (\"" + header[static_cast<size_t>(f)] + "\")";
}

// The index of `value` among `categories`, -1 when it is none of them. A number also matches a
// numeric category of the same value ("1.0" is the category "1").
int64_t categoryIndex(const std::vector<std::string>& categories, std::string_view value) {
    // Categories are few; a linear search keeps the sorted order authoritative.
    for (size_t k = 0; k < categories.size(); ++k)
        if (categories[k] == value) return static_cast<int64_t>(k);
    float v = 0.0f;
    if (!parseNumber(value, &v)) return -1;
    for (size_t k = 0; k < categories.size(); ++k) {
        float c = 0.0f;
        if (parseNumber(categories[k], &c) && c == v) return static_cast<int64_t>(k);
    }
    return -1;
}

std::string joined(const std::vector<std::string>& values) {
    std::string out;
    for (const auto& v : values) out += (out.empty() ? "" : ", ") + v;
    return out;
}

// The data set of `table`'s rows read by `layout`: file column c of the layout is field
// fieldOf[c] of a row. `withLabel`: the label column is read (its field is known).
Result<InMemoryDataset> buildTable(const std::string& path, const ParsedTable& table, const CsvTableOptions& options,
                                   const CsvTableLayout& layout, const std::vector<int64_t>& fieldOf, bool withLabel) {
    const auto& records = table.records;
    const size_t first = table.first;
    auto columnTitle = [&](int64_t c) {
        return layout.header.empty() || layout.header[static_cast<size_t>(c)].empty()
                   ? "column " + std::to_string(c + 1)
                   : layout.header[static_cast<size_t>(c)];
    };
    auto isCategorical = [&](int64_t c) {
        return std::find(layout.categorical.begin(), layout.categorical.end(), c) != layout.categorical.end();
    };
    const auto categoriesOf = [&](int64_t c) -> const std::vector<std::string>& { return layout.categories.at(c); };
    auto unknownCategory = [&](const Record& rec, int64_t field, const std::string& cell, int64_t c) {
        return csvParseError(path, rec.line, static_cast<int>(field + 1),
                             columnWhere(table.header, field) + ": \"" + cell +
                                 "\" is not one of the categories the model was trained with (" + joined(categoriesOf(c)) +
                                 ").",
                             "unknown category")
            .with("value", cell)
            .with("categories", joined(categoriesOf(c)));
    };

    const auto count = static_cast<int64_t>(records.size() - first);
    std::vector<Column> columns;
    for (const auto& [groupName, cols] : layout.groups) {
        Column col;
        col.name = groupName;
        for (int64_t c : cols) {
            if (isCategorical(c)) {
                for (const auto& v : categoriesOf(c)) {
                    col.elementNames.push_back(columnTitle(c) + "=" + v);
                    col.elementColumns.push_back(c);
                    col.elementCategories.push_back(v);
                }
            } else {
                col.elementNames.push_back(columnTitle(c));
                col.elementColumns.push_back(c);
                col.elementCategories.emplace_back();
            }
        }
        const auto featureCount = static_cast<int64_t>(col.elementNames.size());
        col.sampleShape = Shape{featureCount};
        col.values.assign(static_cast<size_t>(count * featureCount), 0.0f);
        float* out = col.values.data();
        for (size_t r = first; r < records.size(); ++r) {
            const Record& rec = records[r];
            for (int64_t c : cols) {
                const int64_t field = fieldOf[static_cast<size_t>(c)];
                const std::string& cell = rec.fields[static_cast<size_t>(field)];
                if (isCategorical(c)) {
                    const int64_t k = categoryIndex(categoriesOf(c), trim(cell));
                    if (k < 0) return unknownCategory(rec, field, std::string(trim(cell)), c);
                    out[k] = 1.0f;
                    out += categoriesOf(c).size();
                    continue;
                }
                float v = 0.0f;
                if (!parseNumber(cell, &v)) {
                    const std::string where = columnWhere(table.header, field);
                    if (trim(cell).empty()) {
                        if (!options.allowMissing)
                            return csvParseError(path, rec.line, static_cast<int>(field + 1), where + " is empty.",
                                                 "empty value");
                        v = std::numeric_limits<float>::quiet_NaN();
                    } else {
                        std::string message = where;
                        message.append(": \"").append(cell).append("\" is not a number.");
                        return csvParseError(path, rec.line, static_cast<int>(field + 1), message, "not a number");
                    }
                }
                *out++ = v;
            }
        }
        columns.push_back(std::move(col));
    }

    const int64_t labelCol = layout.labelColumn;
    if (labelCol >= 0 && withLabel) {
        const int64_t field = fieldOf[static_cast<size_t>(labelCol)];
        Column label;
        label.name = options.labelName;
        label.sampleShape = Shape{};
        label.values.resize(static_cast<size_t>(count));
        if (options.categoricalLabel) label.classNames = categoriesOf(labelCol);
        for (size_t r = first; r < records.size(); ++r) {
            const Record& rec = records[r];
            const std::string& cell = rec.fields[static_cast<size_t>(field)];
            float v = 0.0f;
            if (options.categoricalLabel) {
                const int64_t k = categoryIndex(categoriesOf(labelCol), trim(cell));
                if (k < 0) return unknownCategory(rec, field, std::string(trim(cell)), labelCol);
                v = static_cast<float>(k);
            } else if (!parseNumber(cell, &v) || !std::isfinite(v)) {
                const std::string what = trim(cell).empty() ? "is empty" : "\"" + cell + "\" is not a number";
                return csvParseError(path, rec.line, static_cast<int>(field + 1),
                                     "Label column " + std::to_string(field + 1) + ": " + what +
                                         " (set categoricalLabel for class names).",
                                     "bad label");
            }
            label.values[r - first] = v;
        }
        columns.push_back(std::move(label));
    }
    KILN_ASSIGN(InMemoryDataset set, InMemoryDataset::create(count, std::move(columns)));
    std::vector<int64_t> lines;
    lines.reserve(static_cast<size_t>(count));
    for (size_t r = first; r < records.size(); ++r) lines.push_back(records[r].line);
    KILN_TRY(set.setSourceLines(path, std::move(lines)));
    return set;
}

}  // namespace

Result<InMemoryDataset> readCsvTable(const std::string& path, const CsvTableOptions& options, CsvTableLayout* layoutOut) {
    KILN_ASSIGN(ParsedTable table, parseTable(path, options));
    const std::string file = baseName(path);
    const auto& header = table.header;
    const int64_t width = table.width;
    const auto& records = table.records;

    auto resolve = [&](const CsvColumnRef& ref, const char* role) -> Result<int64_t> {
        if (ref.byName()) {
            if (header.empty())
                return optionError(path, std::string("The ") + role + " column " + ref.toString() +
                                             " is given by name, but the table has no header row.");
            for (size_t c = 0; c < header.size(); ++c)
                if (header[c] == ref.name) return static_cast<int64_t>(c);
            return optionError(path, std::string("The ") + role + " column " + ref.toString() +
                                         " is not in the header of " + file + ".");
        }
        const int64_t c = ref.index < 0 ? width + ref.index : ref.index;
        if (c < 0 || c >= width)
            return optionError(path, std::string("The ") + role + " column " + ref.toString() +
                                         " does not exist: " + file + " has " + std::to_string(width) +
                                         " columns.");
        return c;
    };

    CsvTableLayout layout;
    layout.header = header;
    layout.width = width;
    if (options.labelColumn) {
        KILN_ASSIGN(layout.labelColumn, resolve(*options.labelColumn, "label"));
    }
    const int64_t labelCol = layout.labelColumn;
    std::set<int64_t> categorical;
    for (const auto& ref : options.categoricalColumns) {
        KILN_ASSIGN(int64_t c, resolve(ref, "categorical"));
        categorical.insert(c);
    }
    layout.categorical.assign(categorical.begin(), categorical.end());
    std::set<int64_t> ignored;
    for (const auto& ref : options.ignoredColumns) {
        KILN_ASSIGN(int64_t c, resolve(ref, "ignored"));
        ignored.insert(c);
    }

    // Groups as lists of file columns.
    if (options.groups.empty()) {
        std::vector<int64_t> all;
        for (int64_t c = 0; c < width; ++c)
            if (c != labelCol && !ignored.count(c)) all.push_back(c);
        layout.groups.emplace_back(options.featuresName, std::move(all));
    } else {
        for (const auto& g : options.groups) {
            std::vector<int64_t> cols;
            for (const auto& ref : g.columns) {
                KILN_ASSIGN(int64_t c, resolve(ref, "input"));
                if (c == labelCol)
                    return optionError(path, "The group \"" + g.name + "\" contains the label column " +
                                                 ref.toString() + ".");
                cols.push_back(c);
            }
            layout.groups.emplace_back(g.name, std::move(cols));
        }
    }

    // Categories of every one-hot column (and of the label when it holds names).
    auto collect = [&](int64_t c) {
        std::set<std::string> values;
        for (size_t r = table.first; r < records.size(); ++r)
            values.insert(std::string(trim(records[r].fields[static_cast<size_t>(c)])));
        layout.categories[c] = sortedCategories(values);
    };
    for (int64_t c : categorical) collect(c);
    if (labelCol >= 0 && options.categoricalLabel) collect(labelCol);

    std::vector<int64_t> fieldOf(static_cast<size_t>(width));
    for (int64_t c = 0; c < width; ++c) fieldOf[static_cast<size_t>(c)] = c;
    KILN_ASSIGN(InMemoryDataset set, buildTable(path, table, options, layout, fieldOf, true));
    if (layoutOut != nullptr) *layoutOut = std::move(layout);
    return set;
}

Result<InMemoryDataset> readCsvRows(const std::string& path, const CsvTableOptions& options, const CsvTableLayout& layout,
                                    bool requireLabel) {
    KILN_ASSIGN(ParsedTable table, parseTable(path, options));
    const std::string file = baseName(path);
    // The file columns of the layout that are read: the groups' and the label.
    std::set<int64_t> used;
    for (const auto& group : layout.groups) used.insert(group.second.begin(), group.second.end());
    const int64_t labelCol = layout.labelColumn;

    std::vector<int64_t> fieldOf(static_cast<size_t>(layout.width), -1);
    bool withLabel = labelCol >= 0;
    if (!layout.header.empty() && table.header != layout.header) {
        // By name: each column the model reads must be in this header.
        for (int64_t c = 0; c < layout.width; ++c) {
            if (!used.count(c) && c != labelCol) continue;
            const std::string& name = layout.header[static_cast<size_t>(c)];
            const auto it = name.empty() ? table.header.end() : std::find(table.header.begin(), table.header.end(), name);
            if (it != table.header.end()) {
                fieldOf[static_cast<size_t>(c)] = it - table.header.begin();
                continue;
            }
            if (c == labelCol && !requireLabel) {
                withLabel = false;
                continue;
            }
            const std::string what = name.empty() ? "column " + std::to_string(c + 1) + " (unnamed in the project's table)"
                                                  : "column \"" + name + "\"";
            return csvParseError(path, table.headerLine, 0,
                                 "The header of " + file + " has no " + what +
                                     (c == labelCol ? ": evaluation needs the label column." : ", which the model reads."),
                                 c == labelCol ? "missing label column" : "missing column")
                .with("column_name", name.empty() ? "column " + std::to_string(c + 1) : name);
        }
    } else if (table.width == layout.width) {
        for (int64_t c = 0; c < layout.width; ++c) fieldOf[static_cast<size_t>(c)] = c;
    } else if (labelCol >= 0 && table.width == layout.width - 1 && layout.header.empty()) {
        // Every column but the label, in the table's order.
        if (requireLabel)
            return csvParseError(path, table.records[table.first].line, 0,
                                 "Expected " + std::to_string(layout.width) + " columns as in the project's table, found " +
                                     std::to_string(table.width) + ": evaluation needs the label column " +
                                     std::to_string(labelCol + 1) + ".",
                                 "missing label column");
        for (int64_t c = 0; c < layout.width; ++c)
            if (c != labelCol) fieldOf[static_cast<size_t>(c)] = c < labelCol ? c : c - 1;
        withLabel = false;
    } else {
        return csvParseError(path, table.records[table.first].line, 0,
                             "Expected " + std::to_string(layout.width) + " columns as in the project's table" +
                                 (labelCol >= 0 ? " (or " + std::to_string(layout.width - 1) + " without the label column)"
                                                : std::string()) +
                                 ", found " + std::to_string(table.width) + ".",
                             "column count");
    }
    return buildTable(path, table, options, layout, fieldOf, withLabel);
}

Result<std::vector<CsvRecord>> tokenizeCsv(std::string_view text, const std::string& path, char delimiter) {
    if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
    KILN_ASSIGN(std::vector<Record> records, tokenize(text, delimiter, 1, path));
    std::vector<CsvRecord> out;
    out.reserve(records.size());
    for (Record& r : records) out.push_back(CsvRecord{std::move(r.fields), r.line});
    return out;
}

bool parseCsvNumber(std::string_view cell, float* out) {
    return parseNumber(cell, out);
}

Error csvParseError(const std::string& path, int line, int column, const std::string& message,
                    const std::string& reason) {
    return Error(ErrorCode::ParseError, message)
        .withFile(path, line, column)
        .with("file", path)
        .with("line", std::to_string(line))
        .with("column", std::to_string(column))
        .with("reason", reason);
}

}  // namespace kiln::engine::data
