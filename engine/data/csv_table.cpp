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

Result<InMemoryDataset> readCsvTable(const std::string& path, const CsvTableOptions& options) {
    KILN_ASSIGN(std::string text, readWholeFile(path));
    const std::string file = baseName(path);

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
    KILN_ASSIGN(std::vector<Record> records,
                tokenize(std::string_view(text).substr(pos), options.delimiter, line, path));
    text = std::string();

    std::vector<std::string> header;
    size_t first = 0;
    if (options.hasHeader) {
        if (records.empty())
            return Error(ErrorCode::DataError, "The table has no header row.")
                .withFile(path)
                .with("reason", "empty");
        header = records[0].fields;
        first = 1;
    }
    if (records.size() <= first)
        return Error(ErrorCode::DataError, "The table has no data rows.")
            .withFile(path)
            .with("reason", "empty");

    const auto width = static_cast<int64_t>(header.empty() ? records[first].fields.size() : header.size());
    for (size_t r = first; r < records.size(); ++r) {
        const auto found = static_cast<int64_t>(records[r].fields.size());
        if (found != width)
            return csvParseError(
                path, records[r].line, 0,
                "Expected " + std::to_string(width) + " columns, found " + std::to_string(found) + ".",
                "column count");
    }

    auto columnTitle = [&](int64_t c) {
        return header.empty() || header[static_cast<size_t>(c)].empty() ? "column " + std::to_string(c + 1)
                                                                        : header[static_cast<size_t>(c)];
    };
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

    int64_t labelCol = -1;
    if (options.labelColumn) {
        KILN_ASSIGN(labelCol, resolve(*options.labelColumn, "label"));
    }
    std::set<int64_t> categorical;
    for (const auto& ref : options.categoricalColumns) {
        KILN_ASSIGN(int64_t c, resolve(ref, "categorical"));
        categorical.insert(c);
    }
    std::set<int64_t> ignored;
    for (const auto& ref : options.ignoredColumns) {
        KILN_ASSIGN(int64_t c, resolve(ref, "ignored"));
        ignored.insert(c);
    }

    // Groups as lists of file columns.
    std::vector<std::pair<std::string, std::vector<int64_t>>> groups;
    if (options.groups.empty()) {
        std::vector<int64_t> all;
        for (int64_t c = 0; c < width; ++c)
            if (c != labelCol && !ignored.count(c)) all.push_back(c);
        groups.emplace_back(options.featuresName, std::move(all));
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
            groups.emplace_back(g.name, std::move(cols));
        }
    }

    // Categories of every one-hot column (and of the label when it holds names).
    std::map<int64_t, std::vector<std::string>> categories;
    auto collect = [&](int64_t c) {
        std::set<std::string> values;
        for (size_t r = first; r < records.size(); ++r)
            values.insert(std::string(trim(records[r].fields[static_cast<size_t>(c)])));
        categories[c] = sortedCategories(values);
    };
    for (int64_t c : categorical) collect(c);
    if (labelCol >= 0 && options.categoricalLabel) collect(labelCol);
    auto categoryIndex = [&](int64_t c, std::string_view value) -> int64_t {
        const auto& cats = categories[c];
        // Categories are few; a linear search keeps the sorted order authoritative.
        for (size_t k = 0; k < cats.size(); ++k)
            if (cats[k] == value) return static_cast<int64_t>(k);
        return -1;
    };

    const auto count = static_cast<int64_t>(records.size() - first);
    std::vector<Column> columns;
    for (const auto& [groupName, cols] : groups) {
        Column col;
        col.name = groupName;
        for (int64_t c : cols) {
            if (categorical.count(c)) {
                for (const auto& v : categories[c]) {
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
                const std::string& cell = rec.fields[static_cast<size_t>(c)];
                if (categorical.count(c)) {
                    const int64_t k = categoryIndex(c, trim(cell));
                    out[k] = 1.0f;
                    out += categories[c].size();
                    continue;
                }
                float v = 0.0f;
                if (!parseNumber(cell, &v)) {
                    const std::string where = header.empty() || header[static_cast<size_t>(c)].empty()
                                                  ? "Column " + std::to_string(c + 1)
                                                  : "Column " + std::to_string(c + 1) + " (\"" +
                                                        header[static_cast<size_t>(c)] + "\")";
                    if (trim(cell).empty()) {
                        if (!options.allowMissing)
                            return csvParseError(path, rec.line, static_cast<int>(c + 1), where + " is empty.",
                                              "empty value");
                        v = std::numeric_limits<float>::quiet_NaN();
                    } else {
                        std::string message = where;
                        message.append(": \"").append(cell).append("\" is not a number.");
                        return csvParseError(path, rec.line, static_cast<int>(c + 1), message, "not a number");
                    }
                }
                *out++ = v;
            }
        }
        columns.push_back(std::move(col));
    }

    if (labelCol >= 0) {
        Column label;
        label.name = options.labelName;
        label.sampleShape = Shape{};
        label.values.resize(static_cast<size_t>(count));
        if (options.categoricalLabel) label.classNames = categories[labelCol];
        for (size_t r = first; r < records.size(); ++r) {
            const Record& rec = records[r];
            const std::string& cell = rec.fields[static_cast<size_t>(labelCol)];
            float v = 0.0f;
            if (options.categoricalLabel) {
                v = static_cast<float>(categoryIndex(labelCol, trim(cell)));
            } else if (!parseNumber(cell, &v) || !std::isfinite(v)) {
                const std::string what = trim(cell).empty() ? "is empty" : "\"" + cell + "\" is not a number";
                return csvParseError(path, rec.line, static_cast<int>(labelCol + 1),
                                  "Label column " + std::to_string(labelCol + 1) + ": " + what +
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
