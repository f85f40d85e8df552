// SPDX-License-Identifier: Apache-2.0
// Names of error codes and the English one-line form of an Error.
#include "engine/core/error.h"

namespace kiln::engine {

const char* errorCodeName(ErrorCode code) {
    switch (code) {
    case ErrorCode::Ok: return "Ok";
    case ErrorCode::Internal: return "Internal";
    case ErrorCode::InvalidArgument: return "InvalidArgument";
    case ErrorCode::FileNotFound: return "FileNotFound";
    case ErrorCode::FileRead: return "FileRead";
    case ErrorCode::FileWrite: return "FileWrite";
    case ErrorCode::ParseError: return "ParseError";
    case ErrorCode::UnsupportedFormat: return "UnsupportedFormat";
    case ErrorCode::UnknownOp: return "UnknownOp";
    case ErrorCode::UnknownAttribute: return "UnknownAttribute";
    case ErrorCode::BadAttribute: return "BadAttribute";
    case ErrorCode::DuplicateNode: return "DuplicateNode";
    case ErrorCode::DanglingInput: return "DanglingInput";
    case ErrorCode::Cycle: return "Cycle";
    case ErrorCode::ArityMismatch: return "ArityMismatch";
    case ErrorCode::ShapeMismatch: return "ShapeMismatch";
    case ErrorCode::WeightsMismatch: return "WeightsMismatch";
    case ErrorCode::DataError: return "DataError";
    case ErrorCode::ConfigError: return "ConfigError";
    case ErrorCode::Unsupported: return "Unsupported";
    case ErrorCode::DeviceUnavailable: return "DeviceUnavailable";
    case ErrorCode::OutOfMemory: return "OutOfMemory";
    case ErrorCode::Cancelled: return "Cancelled";
    case ErrorCode::PluginError: return "PluginError";
    }
    return "Unknown";
}

std::string Error::param(const std::string& key) const {
    for (const auto& [k, v] : params)
        if (k == key) return v;
    return {};
}

std::string Error::toString() const {
    std::string out;
    if (!file.empty()) {
        out += file;
        if (line > 0) {
            out += ':' + std::to_string(line);
            if (column > 0) out += ':' + std::to_string(column);
        }
        out += ": ";
    }
    if (!node.empty() && message.find('"' + node + '"') == std::string::npos)
        out += "node \"" + node + "\": ";
    out += message;
    return out;
}

}  // namespace kiln::engine
