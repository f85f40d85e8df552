// SPDX-License-Identifier: Apache-2.0
// Checked JSON parsing: a SAX handler that builds the tree itself and stops the parser as soon as
// a limit is crossed, so an over-deep document never exists as a tree.
#include "engine/core/json_checked.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <vector>

namespace kiln::engine {
using nlohmann::json;

namespace {

// Line and column (1-based) of byte `offset` in `text`.
std::pair<int, int> lineColumn(std::string_view text, size_t offset) {
    int line = 1, column = 1;
    for (size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return {line, column};
}

// Byte offset of the bracket that opens nesting level `depth` + 1 (strings are skipped);
// text.size() if the text never gets that deep.
size_t offsetBeyondDepth(std::string_view text, int depth) {
    int level = 0;
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\') ++i;
            else if (c == '"') inString = false;
            continue;
        }
        if (c == '"') inString = true;
        else if (c == '[' || c == '{') {
            if (++level > depth) return i;
        } else if (c == ']' || c == '}') {
            --level;
        }
    }
    return text.size();
}

class Builder {
public:
    Builder(json& root, const JsonLimits& limits) : m_root(root), m_limits(limits) {}

    bool null() { return put(json(nullptr)) != nullptr; }
    bool boolean(bool v) { return put(json(v)) != nullptr; }
    bool number_integer(json::number_integer_t v) { return put(json(v)) != nullptr; }
    bool number_unsigned(json::number_unsigned_t v) { return put(json(v)) != nullptr; }
    // The parser itself reports numbers that overflow a double (1e999) as errors.
    bool number_float(json::number_float_t v, const json::string_t&) { return put(json(v)) != nullptr; }
    bool string(json::string_t& v) { return put(json(std::move(v))) != nullptr; }
    bool binary(json::binary_t& v) { return put(json::binary(v)) != nullptr; }
    bool start_object(std::size_t) { return open(json::object()); }
    bool key(json::string_t& k) {
        m_stack.back().key = std::move(k);
        return true;
    }
    bool end_object() { return close(); }
    bool start_array(std::size_t) { return open(json::array()); }
    bool end_array() { return close(); }
    bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) {
        m_failure = Failure::Syntax;
        m_position = position;
        std::string what = ex.what();
        // "[json.exception.parse_error.101] parse error at line 1, column 3: syntax error while ..."
        const auto colon = what.find(": ");
        m_reason = colon == std::string::npos ? what : what.substr(colon + 2);
        return false;
    }

    enum class Failure { None, Syntax, Depth, Values };
    Failure failure() const { return m_failure; }
    size_t position() const { return m_position; }  // byte just past the offending token (syntax)
    const std::string& reason() const { return m_reason; }
    const std::string& path() const { return m_path; }

private:
    struct Frame {
        json* node;
        std::string key;  // objects: the key of the value being read
    };

    json* put(json&& v) {
        if (m_limits.maxValues && ++m_values > m_limits.maxValues) {
            fail(Failure::Values, "more than " + std::to_string(m_limits.maxValues) + " values");
            return nullptr;
        }
        if (m_stack.empty()) {
            m_root = std::move(v);
            return &m_root;
        }
        // Only the innermost open container is ever written to, so the pointers to its
        // ancestors on the stack stay valid.
        Frame& f = m_stack.back();
        if (f.node->is_array()) {
            f.node->push_back(std::move(v));
            return &f.node->back();
        }
        json& slot = (*f.node)[f.key];
        slot = std::move(v);
        return &slot;
    }
    bool open(json&& container) {
        if (static_cast<int>(m_stack.size()) >= m_limits.maxDepth)
            return fail(Failure::Depth, "nested deeper than " + std::to_string(m_limits.maxDepth) + " levels");
        json* node = put(std::move(container));
        if (!node) return false;
        m_stack.push_back({node, {}});
        return true;
    }
    bool close() {
        m_stack.pop_back();
        return true;
    }
    bool fail(Failure f, std::string reason) {
        m_failure = f;
        m_reason = std::move(reason);
        m_path = describePath();
        return false;
    }
    // The path of the value being read, e.g. $.context.x[0][3]; long paths keep their first
    // eight steps.
    std::string describePath() const {
        std::string p = "$";
        for (size_t i = 0; i < m_stack.size(); ++i) {
            const Frame& f = m_stack[i];
            if (i == 8) {
                p += "... (" + std::to_string(m_stack.size()) + " levels)";
                break;
            }
            if (f.node->is_array()) {
                // Outer lists already hold the value on the path; the innermost one is about to.
                const size_t index = f.node->size() - (i + 1 < m_stack.size() ? 1 : 0);
                p += "[" + std::to_string(index) + "]";
            } else {
                bool plain = !f.key.empty() && f.key.size() <= 64;
                for (char c : f.key) plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
                p += plain ? "." + f.key : "[" + json(f.key.substr(0, 64)).dump(-1, ' ', false, json::error_handler_t::replace) + "]";
            }
        }
        return p;
    }

    json& m_root;
    const JsonLimits& m_limits;
    std::vector<Frame> m_stack;
    uint64_t m_values = 0;
    Failure m_failure = Failure::None;
    size_t m_position = 0;
    std::string m_reason;
    std::string m_path;
};

}  // namespace

Result<json> parseJsonChecked(std::string_view text, const JsonLimits& limits, const std::string& sourceName) {
    auto error = [&](const std::string& message, size_t offset, const std::string& reason) {
        auto [line, column] = lineColumn(text, offset);
        Error e(ErrorCode::ParseError, message);
        e.withFile(sourceName, line, column).with("file", sourceName).with("reason", reason).with("byte", std::to_string(offset));
        return e;
    };
    if (text.size() > limits.maxBytes)
        return error("the JSON text has " + std::to_string(text.size()) + " bytes, more than the limit of " +
                         std::to_string(limits.maxBytes),
                     0, "too large");
    json root;
    Builder builder(root, limits);
    bool ok = false;
    try {
        ok = json::sax_parse(text.begin(), text.end(), &builder, json::input_format_t::json, true, false);
    } catch (const std::exception& ex) {  // allocation failures; the parser reports syntax through the handler
        return error(std::string("the JSON text could not be read: ") + ex.what(), 0, ex.what());
    }
    if (ok) return root;
    // `root` holds a partial tree no deeper than maxDepth here, so destroying it is safe.
    switch (builder.failure()) {
    case Builder::Failure::Depth: {
        const size_t at = offsetBeyondDepth(text, limits.maxDepth);
        return error("JSON " + builder.reason() + " at byte " + std::to_string(at) + " (" + builder.path() + ")", at,
                     builder.reason())
            .with("path", builder.path());
    }
    case Builder::Failure::Values:
        return error("JSON has " + builder.reason() + " (at " + builder.path() + ")", 0, builder.reason()).with("path", builder.path());
    case Builder::Failure::Syntax:
    case Builder::Failure::None: break;
    }
    const size_t at = builder.position() > 0 ? builder.position() - 1 : 0;
    return error("not valid JSON at byte " + std::to_string(at) + ": " + builder.reason(), at, builder.reason());
}

Result<json> readJsonFileChecked(const std::string& path, const JsonLimits& limits) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) return Error(ErrorCode::FileNotFound, "cannot open " + path + ": " + ec.message()).withFile(path).with("path", path);
    if (size > limits.maxBytes)
        return Error(ErrorCode::ParseError, "the file has " + std::to_string(size) + " bytes, more than the limit of " +
                                                std::to_string(limits.maxBytes) + " for JSON")
            .withFile(path)
            .with("file", path)
            .with("reason", "too large");
    std::ifstream in(path, std::ios::binary);
    if (!in) return Error(ErrorCode::FileRead, "cannot read " + path).withFile(path).with("path", path).with("reason", "cannot open");
    std::string text(static_cast<size_t>(size), '\0');
    in.read(text.data(), static_cast<std::streamsize>(size));
    text.resize(static_cast<size_t>(in.gcount()));
    return parseJsonChecked(text, limits, path);
}

}  // namespace kiln::engine
