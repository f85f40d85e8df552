// SPDX-License-Identifier: Apache-2.0
// Error values and Result<T>: everything a user can cause comes back as an Error, never an abort.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace kiln::engine {

// Stable codes: the UI and kiln-train compose localized text from the code and its parameters;
// `message` is the English fallback.
enum class ErrorCode {
    Ok = 0,
    Internal,          // a bug in Kiln
    InvalidArgument,   // a bad option or value
    FileNotFound,      // {path}
    FileRead,          // {path, reason}
    FileWrite,         // {path, reason}
    ParseError,        // {file, line, column, reason}
    UnsupportedFormat, // {file, format, version}
    UnknownOp,         // {node, op}
    UnknownAttribute,  // {node, attribute}
    BadAttribute,      // {node, attribute, reason}
    DuplicateNode,     // {node}
    DanglingInput,     // {node, input}
    Cycle,             // {node}
    ArityMismatch,     // {node, expected, got}
    ShapeMismatch,     // {node, reason}
    WeightsMismatch,   // {file, tensor, reason}
    DataError,         // {file, reason}
    ConfigError,       // {field, reason}
    Unsupported,       // {what}
    DeviceUnavailable, // {device}
    OutOfMemory,       // {bytes}
    Cancelled,
    PluginError,       // {path, reason[, expected, found, op]}: loading or running a plugin
};

const char* errorCodeName(ErrorCode code);

struct Error {
    ErrorCode code = ErrorCode::Internal;
    std::string message;  // English, complete sentence
    std::string node;     // graph node name, if any
    std::string file;     // file path, if any
    int line = 0;         // 1-based, 0 when unknown
    int column = 0;
    // Named parameters for localized composition, e.g. {"attribute","units"}.
    std::vector<std::pair<std::string, std::string>> params;

    Error() = default;
    Error(ErrorCode c, std::string msg) : code(c), message(std::move(msg)) {}

    Error& withNode(std::string n) { node = std::move(n); return *this; }
    Error& withFile(std::string f, int l = 0, int c = 0) {
        file = std::move(f); line = l; column = c; return *this;
    }
    Error& with(std::string key, std::string value) {
        params.emplace_back(std::move(key), std::move(value));
        return *this;
    }
    std::string param(const std::string& key) const;
    // "file:line: node "x": message" — the English one-line form used by logs and kiln-train.
    std::string toString() const;
};

template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : m_v(std::in_place_index<0>, std::move(value)) {}
    Result(Error error) : m_v(std::in_place_index<1>, std::move(error)) {}

    bool ok() const { return m_v.index() == 0; }
    explicit operator bool() const { return ok(); }
    T& value() & { assert(ok()); return std::get<0>(m_v); }
    const T& value() const& { assert(ok()); return std::get<0>(m_v); }
    T&& value() && { assert(ok()); return std::get<0>(std::move(m_v)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    const Error& error() const { assert(!ok()); return std::get<1>(m_v); }
    Error& error() { assert(!ok()); return std::get<1>(m_v); }

private:
    std::variant<T, Error> m_v;
};

template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error error) : m_error(std::move(error)) {}
    bool ok() const { return !m_error.has_value(); }
    explicit operator bool() const { return ok(); }
    const Error& error() const { assert(!ok()); return *m_error; }
    Error& error() { assert(!ok()); return *m_error; }

private:
    std::optional<Error> m_error;
};

using Status = Result<void>;

inline Status okStatus() { return {}; }

}  // namespace kiln::engine

// Propagate an error from an expression yielding Result<...>.
#define KILN_TRY(expr)                                        \
    do {                                                      \
        auto&& kiln_try_r_ = (expr);                          \
        if (!kiln_try_r_.ok()) return std::move(kiln_try_r_.error()); \
    } while (0)

#define KILN_CONCAT_INNER(a, b) a##b
#define KILN_CONCAT(a, b) KILN_CONCAT_INNER(a, b)
// Declare `decl` from a Result<T> or return its error.
#define KILN_ASSIGN(decl, expr)                                            \
    auto KILN_CONCAT(kiln_assign_r_, __LINE__) = (expr);                   \
    if (!KILN_CONCAT(kiln_assign_r_, __LINE__).ok())                       \
        return std::move(KILN_CONCAT(kiln_assign_r_, __LINE__).error());   \
    decl = std::move(KILN_CONCAT(kiln_assign_r_, __LINE__)).value()
