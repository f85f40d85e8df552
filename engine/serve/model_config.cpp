// SPDX-License-Identifier: Apache-2.0
// A small protobuf text-format reader (tokenizer + recursive descent) and the interpretation of
// ModelServerConfig and BatchingParameters on top of it.
#include "engine/serve/model_config.h"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <charconv>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace kiln::engine::serve {
namespace {

constexpr int kMaxDepth = 64;  // nesting limit: deeper input is an error, never a stack overflow

struct Token {
    enum class Kind { End, Ident, Number, String, Punct };
    Kind kind = Kind::End;
    std::string text;  // strings: unescaped value
    int line = 1;
    int column = 1;
};

class Lexer {
public:
    Lexer(std::string_view text, const std::string& file) : m_text(text), m_file(file) {}

    Result<Token> next() {
        skipSpaceAndComments();
        Token t;
        t.line = m_line;
        t.column = m_column;
        if (m_pos >= m_text.size()) return t;
        const char c = m_text[m_pos];
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            t.kind = Token::Kind::Ident;
            while (m_pos < m_text.size() && (std::isalnum(static_cast<unsigned char>(m_text[m_pos])) ||
                                             m_text[m_pos] == '_' || m_text[m_pos] == '.'))
                t.text += advance();
            return t;
        }
        if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' ||
            (c == '.' && m_pos + 1 < m_text.size() && std::isdigit(static_cast<unsigned char>(m_text[m_pos + 1])))) {
            t.kind = Token::Kind::Number;
            t.text += advance();
            while (m_pos < m_text.size() && (std::isalnum(static_cast<unsigned char>(m_text[m_pos])) ||
                                             m_text[m_pos] == '.' || m_text[m_pos] == '_' ||
                                             ((m_text[m_pos] == '-' || m_text[m_pos] == '+') &&
                                              (t.text.back() == 'e' || t.text.back() == 'E'))))
                t.text += advance();
            if (t.text == "-" || t.text == "+") return error(t, "a sign must be followed by a number");
            return t;
        }
        if (c == '"' || c == '\'') {
            t.kind = Token::Kind::String;
            const char quote = advance();
            while (true) {
                if (m_pos >= m_text.size() || m_text[m_pos] == '\n') return error(t, "unterminated string");
                char ch = advance();
                if (ch == quote) break;
                if (ch != '\\') {
                    t.text += ch;
                    continue;
                }
                if (m_pos >= m_text.size()) return error(t, "unterminated string");
                const char e = advance();
                switch (e) {
                case 'n': t.text += '\n'; break;
                case 't': t.text += '\t'; break;
                case 'r': t.text += '\r'; break;
                case 'a': t.text += '\a'; break;
                case 'b': t.text += '\b'; break;
                case 'f': t.text += '\f'; break;
                case 'v': t.text += '\v'; break;
                case '\\': case '\'': case '"': case '?': t.text += e; break;
                case 'x': {
                    int v = 0, n = 0;
                    while (n < 2 && m_pos < m_text.size() && std::isxdigit(static_cast<unsigned char>(m_text[m_pos]))) {
                        const char h = advance();
                        v = v * 16 + (std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
                        ++n;
                    }
                    if (n == 0) return error(t, "\\x needs hexadecimal digits");
                    t.text += static_cast<char>(v);
                    break;
                }
                default:
                    if (e >= '0' && e <= '7') {
                        int v = e - '0', n = 1;
                        while (n < 3 && m_pos < m_text.size() && m_text[m_pos] >= '0' && m_text[m_pos] <= '7') {
                            v = v * 8 + (advance() - '0');
                            ++n;
                        }
                        t.text += static_cast<char>(v & 0xff);
                    } else {
                        return error(t, std::string("unknown escape \\") + e);
                    }
                }
            }
            return t;
        }
        if (std::strchr("{}<>:[],;", c)) {
            t.kind = Token::Kind::Punct;
            t.text = std::string(1, advance());
            return t;
        }
        return error(t, std::string("unexpected character '") + (std::isprint(static_cast<unsigned char>(c)) ? std::string(1, c) : "\\x" + hex(c)) + "'");
    }

    Error makeError(int line, int column, const std::string& reason) const {
        Error e(ErrorCode::ParseError, reason);
        e.withFile(m_file, line, column).with("file", m_file).with("line", std::to_string(line))
            .with("column", std::to_string(column)).with("reason", reason);
        return e;
    }

private:
    static std::string hex(char c) {
        static const char* d = "0123456789abcdef";
        const auto u = static_cast<unsigned char>(c);
        return {d[u >> 4], d[u & 15]};
    }
    Error error(const Token& t, const std::string& reason) const { return makeError(t.line, t.column, reason); }
    char advance() {
        const char c = m_text[m_pos++];
        if (c == '\n') {
            ++m_line;
            m_column = 1;
        } else {
            ++m_column;
        }
        return c;
    }
    void skipSpaceAndComments() {
        while (m_pos < m_text.size()) {
            const char c = m_text[m_pos];
            if (c == '#') {
                while (m_pos < m_text.size() && m_text[m_pos] != '\n') advance();
            } else if (std::isspace(static_cast<unsigned char>(c))) {
                advance();
            } else {
                break;
            }
        }
    }

    std::string_view m_text;
    std::string m_file;
    size_t m_pos = 0;
    int m_line = 1;
    int m_column = 1;
};

class Parser {
public:
    Parser(std::string_view text, const std::string& file) : m_lex(text, file) {}

    Result<TextMessage> parseAll() {
        KILN_TRY(shift());
        TextMessage msg;
        KILN_TRY(parseFields(msg, "", 0));
        return msg;
    }

private:
    Status shift() {
        auto t = m_lex.next();
        if (!t) return std::move(t.error());
        m_tok = std::move(t.value());
        return okStatus();
    }
    bool isPunct(const char* p) const { return m_tok.kind == Token::Kind::Punct && m_tok.text == p; }
    Error here(const std::string& reason) const { return m_lex.makeError(m_tok.line, m_tok.column, reason); }
    static std::string describe(const Token& t) {
        switch (t.kind) {
        case Token::Kind::End: return "end of file";
        case Token::Kind::String: return "a string";
        default: return "'" + t.text + "'";
        }
    }

    // Fields until `close` ("" = end of input).
    Status parseFields(TextMessage& msg, const std::string& close, int depth) {
        while (true) {
            if (close.empty() ? m_tok.kind == Token::Kind::End : isPunct(close.c_str())) return okStatus();
            if (m_tok.kind == Token::Kind::End) return here("missing '" + close + "' before the end of the file");
            if (m_tok.kind != Token::Kind::Ident) return here("expected a field name, found " + describe(m_tok));
            TextField f;
            f.name = m_tok.text;
            f.line = m_tok.line;
            f.column = m_tok.column;
            KILN_TRY(shift());
            bool colon = false;
            if (isPunct(":")) {
                colon = true;
                KILN_TRY(shift());
            }
            if (isPunct("{") || isPunct("<")) {
                KILN_TRY(parseMessageValue(f, depth));
                msg.fields.push_back(std::move(f));
            } else if (colon && isPunct("[")) {
                KILN_TRY(shift());
                while (!isPunct("]")) {
                    TextField item;
                    item.name = f.name;
                    item.line = m_tok.line;
                    item.column = m_tok.column;
                    if (isPunct("{") || isPunct("<")) {
                        KILN_TRY(parseMessageValue(item, depth));
                    } else {
                        KILN_TRY(parseScalar(item));
                    }
                    msg.fields.push_back(std::move(item));
                    if (isPunct(",")) {
                        KILN_TRY(shift());
                        if (isPunct("]")) return here("expected a value after ','");
                    } else if (!isPunct("]")) {
                        return here("expected ',' or ']' in the list of \"" + f.name + "\", found " + describe(m_tok));
                    }
                }
                KILN_TRY(shift());
            } else {
                if (!colon) return here("expected ':' or '{' after \"" + f.name + "\", found " + describe(m_tok));
                KILN_TRY(parseScalar(f));
                msg.fields.push_back(std::move(f));
            }
            if (isPunct(",") || isPunct(";")) KILN_TRY(shift());
        }
    }

    Status parseMessageValue(TextField& f, int depth) {
        if (depth + 1 > kMaxDepth) return here("messages are nested too deeply");
        const std::string close = isPunct("{") ? "}" : ">";
        KILN_TRY(shift());
        f.isMessage = true;
        KILN_TRY(parseFields(f.message, close, depth + 1));
        return shift();
    }

    Status parseScalar(TextField& f) {
        if (m_tok.kind == Token::Kind::String) {
            f.quoted = true;
            // Adjacent strings concatenate.
            while (m_tok.kind == Token::Kind::String) {
                f.scalar += m_tok.text;
                KILN_TRY(shift());
            }
            return okStatus();
        }
        if (m_tok.kind == Token::Kind::Number || m_tok.kind == Token::Kind::Ident) {
            f.scalar = m_tok.text;
            return shift();
        }
        return here("expected a value for \"" + f.name + "\", found " + describe(m_tok));
    }

    Lexer m_lex;
    Token m_tok;
};

Error fieldError(const std::string& file, const TextField& f, const std::string& reason) {
    Error e(ErrorCode::ParseError, reason);
    e.withFile(file, f.line, f.column).with("file", file).with("line", std::to_string(f.line))
        .with("column", std::to_string(f.column)).with("reason", reason);
    return e;
}

Result<int64_t> intValue(const std::string& file, const TextField& f, int64_t min, int64_t max) {
    if (f.isMessage || f.quoted) return fieldError(file, f, "\"" + f.name + "\" needs an integer");
    std::string s = f.scalar;
    int base = 10;
    bool negative = false;
    size_t i = 0;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) negative = s[i++] == '-';
    if (s.size() > i + 1 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
        base = 16;
        i += 2;
    }
    uint64_t magnitude = 0;
    const char* begin = s.data() + i;
    const char* end = s.data() + s.size();
    auto [ptr, ec] = std::from_chars(begin, end, magnitude, base);
    if (ec == std::errc::result_out_of_range && ptr == end)
        return fieldError(file, f, "\"" + f.name + "\" is out of range: " + f.scalar);
    if (begin == end || ec != std::errc() || ptr != end)
        return fieldError(file, f, "\"" + f.name + "\" needs an integer, found \"" + f.scalar + "\"");
    if (magnitude > static_cast<uint64_t>(INT64_MAX) + (negative ? 1u : 0u))
        return fieldError(file, f, "\"" + f.name + "\" is out of range: " + f.scalar);
    const int64_t v = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
    if (v < min || v > max)
        return fieldError(file, f, "\"" + f.name + "\" must be between " + std::to_string(min) + " and " +
                                       std::to_string(max) + ", found " + f.scalar);
    return v;
}

Result<std::string> stringValue(const std::string& file, const TextField& f) {
    if (f.isMessage || !f.quoted) return fieldError(file, f, "\"" + f.name + "\" needs a quoted string");
    return f.scalar;
}

Status onlyOnce(const std::string& file, const TextField& f, std::set<std::string>& seen) {
    if (!seen.insert(f.name).second) return fieldError(file, f, "\"" + f.name + "\" is given twice");
    return okStatus();
}

Status needMessage(const std::string& file, const TextField& f) {
    if (!f.isMessage) return fieldError(file, f, "\"" + f.name + "\" needs a { ... } block");
    return okStatus();
}

Result<VersionPolicy> parsePolicy(const std::string& file, const TextField& field) {
    KILN_TRY(needMessage(file, field));
    VersionPolicy p;
    if (field.message.fields.size() != 1)
        return fieldError(file, field, "model_version_policy needs exactly one of latest, all, specific");
    const TextField& choice = field.message.fields[0];
    KILN_TRY(needMessage(file, choice));
    if (choice.name == "latest") {
        p.kind = VersionPolicy::Kind::Latest;
        std::set<std::string> seen;
        for (const auto& f : choice.message.fields) {
            if (f.name != "num_versions") return fieldError(file, f, "unknown field \"" + f.name + "\" in latest");
            KILN_TRY(onlyOnce(file, f, seen));
            KILN_ASSIGN(int64_t n, intValue(file, f, 0, UINT32_MAX));
            p.numVersions = n == 0 ? 1u : static_cast<uint32_t>(n);  // 0 means 1, as in TF Serving
        }
    } else if (choice.name == "all") {
        p.kind = VersionPolicy::Kind::All;
        if (!choice.message.fields.empty())
            return fieldError(file, choice.message.fields[0], "\"all\" takes no fields");
    } else if (choice.name == "specific") {
        p.kind = VersionPolicy::Kind::Specific;
        for (const auto& f : choice.message.fields) {
            if (f.name != "versions") return fieldError(file, f, "unknown field \"" + f.name + "\" in specific");
            KILN_ASSIGN(int64_t v, intValue(file, f, 0, INT64_MAX));
            p.versions.push_back(v);
        }
        if (p.versions.empty()) return fieldError(file, choice, "specific needs at least one version");
    } else {
        return fieldError(file, choice, "unknown version policy \"" + choice.name + "\" (latest, all or specific)");
    }
    return p;
}

Result<ModelConfig> parseModel(const std::string& file, const TextField& block) {
    KILN_TRY(needMessage(file, block));
    ModelConfig m;
    m.line = block.line;
    std::set<std::string> seen;
    for (const auto& f : block.message.fields) {
        if (f.name == "name") {
            KILN_TRY(onlyOnce(file, f, seen));
            KILN_ASSIGN(m.name, stringValue(file, f));
            if (!isSafeModelName(m.name))
                return fieldError(file, f, "model name \"" + m.name + "\" is not allowed (empty, \".\", \"..\", a slash or a control character)");
        } else if (f.name == "base_path") {
            KILN_TRY(onlyOnce(file, f, seen));
            KILN_ASSIGN(m.basePath, stringValue(file, f));
            if (m.basePath.empty()) return fieldError(file, f, "base_path is empty");
        } else if (f.name == "model_platform") {
            KILN_TRY(onlyOnce(file, f, seen));
            KILN_ASSIGN(m.platform, stringValue(file, f));
            if (m.platform != "tensorflow" && m.platform != "kiln")
                return fieldError(file, f, "model_platform \"" + m.platform + "\" is not supported (tensorflow or kiln)");
        } else if (f.name == "model_version_policy") {
            KILN_TRY(onlyOnce(file, f, seen));
            KILN_ASSIGN(m.policy, parsePolicy(file, f));
        } else if (f.name == "version_labels") {
            KILN_TRY(needMessage(file, f));
            std::string key;
            int64_t value = -1;
            std::set<std::string> kv;
            for (const auto& e : f.message.fields) {
                KILN_TRY(onlyOnce(file, e, kv));
                if (e.name == "key") {
                    KILN_ASSIGN(key, stringValue(file, e));
                } else if (e.name == "value") {
                    KILN_ASSIGN(value, intValue(file, e, 0, INT64_MAX));
                } else {
                    return fieldError(file, e, "unknown field \"" + e.name + "\" in version_labels (key, value)");
                }
            }
            if (key.empty()) return fieldError(file, f, "version_labels needs a non-empty key");
            for (char c : key)
                if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
                    return fieldError(file, f, "version label \"" + key + "\" may only use letters, digits and '_'");
            if (value < 0) return fieldError(file, f, "version_labels \"" + key + "\" needs a value");
            if (!m.versionLabels.emplace(key, value).second)
                return fieldError(file, f, "version label \"" + key + "\" is given twice");
        } else if (f.name == "model_type" || f.name == "logging_config") {
            // Accepted and ignored, as the stock server ignores them for our models.
        } else {
            return fieldError(file, f, "unknown field \"" + f.name + "\" in config");
        }
    }
    if (m.name.empty()) return fieldError(file, block, "config needs a name");
    if (m.basePath.empty()) return fieldError(file, block, "config \"" + m.name + "\" needs a base_path");
    return m;
}

}  // namespace

Result<TextMessage> parseTextFormat(std::string_view text, const std::string& file) {
    return Parser(text, file).parseAll();
}

bool isSafeModelName(std::string_view name) {
    if (name.empty() || name.size() > 255 || name == "." || name == "..") return false;
    for (char c : name) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '/' || c == '\\' || u < 0x20 || u == 0x7f) return false;
    }
    return true;
}

Result<std::string> readTextFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        Error e(errno == ENOENT ? ErrorCode::FileNotFound : ErrorCode::FileRead,
                "cannot open " + path + ": " + std::strerror(errno));
        return std::move(e.withFile(path).with("path", path).with("reason", std::strerror(errno)));
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

Result<ModelServerConfig> parseModelServerConfig(std::string_view text, const std::string& file) {
    KILN_ASSIGN(TextMessage root, parseTextFormat(text, file));
    ModelServerConfig cfg;
    bool haveList = false;
    for (const auto& top : root.fields) {
        if (top.name == "custom_model_config")
            return fieldError(file, top, "custom_model_config is not supported; use model_config_list");
        if (top.name != "model_config_list")
            return fieldError(file, top, "unknown field \"" + top.name + "\" (expected model_config_list)");
        if (haveList) return fieldError(file, top, "model_config_list is given twice");
        haveList = true;
        KILN_TRY(needMessage(file, top));
        for (const auto& c : top.message.fields) {
            if (c.name != "config") return fieldError(file, c, "unknown field \"" + c.name + "\" in model_config_list");
            KILN_ASSIGN(ModelConfig m, parseModel(file, c));
            for (const auto& other : cfg.models)
                if (other.name == m.name)
                    return fieldError(file, c, "model \"" + m.name + "\" is configured twice (first on line " +
                                                   std::to_string(other.line) + ")");
            cfg.models.push_back(std::move(m));
        }
    }
    if (cfg.models.empty()) {
        Error e(ErrorCode::ParseError, "the configuration lists no models");
        return std::move(e.withFile(file, 1, 1).with("file", file).with("reason", e.message));
    }
    return cfg;
}

Result<ModelServerConfig> loadModelServerConfig(const std::string& path) {
    KILN_ASSIGN(std::string text, readTextFile(path));
    return parseModelServerConfig(text, path);
}

Result<BatchingParameters> parseBatchingParameters(std::string_view text, const std::string& file) {
    KILN_ASSIGN(TextMessage root, parseTextFormat(text, file));
    BatchingParameters p;
    std::set<std::string> seen;
    for (const auto& f : root.fields) {
        // Wrapper types (google.protobuf.Int64Value) are written `{ value: N }`; accept a bare N too.
        auto wrapped = [&](int64_t min, int64_t max) -> Result<int64_t> {
            if (!f.isMessage) return intValue(file, f, min, max);
            if (f.message.fields.size() != 1 || f.message.fields[0].name != "value")
                return fieldError(file, f, "\"" + f.name + "\" needs { value: N }");
            return intValue(file, f.message.fields[0], min, max);
        };
        if (f.name == "allowed_batch_sizes") {
            KILN_ASSIGN(int64_t v, intValue(file, f, 1, 1 << 20));
            if (!p.allowedBatchSizes.empty() && v <= p.allowedBatchSizes.back())
                return fieldError(file, f, "allowed_batch_sizes must increase");
            p.allowedBatchSizes.push_back(v);
            continue;
        }
        KILN_TRY(onlyOnce(file, f, seen));
        if (f.name == "max_batch_size") {
            KILN_ASSIGN(p.maxBatchSize, wrapped(1, 1 << 20));
        } else if (f.name == "batch_timeout_micros") {
            KILN_ASSIGN(p.batchTimeoutMicros, wrapped(0, 60'000'000));
        } else if (f.name == "max_enqueued_batches") {
            KILN_ASSIGN(p.maxEnqueuedBatches, wrapped(1, 1'000'000'000));
        } else if (f.name == "num_batch_threads") {
            KILN_ASSIGN(p.numBatchThreads, wrapped(1, 256));
        } else if (f.name == "pad_variable_length_inputs" || f.name == "thread_pool_name" ||
                   f.name == "enable_large_batch_splitting" || f.name == "max_execution_batch_size") {
            // TF Serving options without an effect here: inputs have fixed shapes, batches run whole.
        } else {
            return fieldError(file, f, "unknown batching parameter \"" + f.name + "\"");
        }
    }
    if (!p.allowedBatchSizes.empty() && p.allowedBatchSizes.back() != p.maxBatchSize) {
        Error e(ErrorCode::ParseError, "the last allowed_batch_sizes entry must equal max_batch_size");
        return std::move(e.withFile(file).with("file", file).with("reason", e.message));
    }
    return p;
}

Result<BatchingParameters> loadBatchingParameters(const std::string& path) {
    KILN_ASSIGN(std::string text, readTextFile(path));
    return parseBatchingParameters(text, path);
}

}  // namespace kiln::engine::serve
