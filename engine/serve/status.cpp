// SPDX-License-Identifier: Apache-2.0
// TF status codes: names, HTTP mapping, and the bridge from engine error codes.
#include "engine/serve/status.h"

namespace kiln::engine::serve {

const char* tfCodeName(TfCode code) {
    switch (code) {
    case TfCode::Ok: return "OK";
    case TfCode::Cancelled: return "CANCELLED";
    case TfCode::Unknown: return "UNKNOWN";
    case TfCode::InvalidArgument: return "INVALID_ARGUMENT";
    case TfCode::DeadlineExceeded: return "DEADLINE_EXCEEDED";
    case TfCode::NotFound: return "NOT_FOUND";
    case TfCode::AlreadyExists: return "ALREADY_EXISTS";
    case TfCode::PermissionDenied: return "PERMISSION_DENIED";
    case TfCode::ResourceExhausted: return "RESOURCE_EXHAUSTED";
    case TfCode::FailedPrecondition: return "FAILED_PRECONDITION";
    case TfCode::Aborted: return "ABORTED";
    case TfCode::OutOfRange: return "OUT_OF_RANGE";
    case TfCode::Unimplemented: return "UNIMPLEMENTED";
    case TfCode::Internal: return "INTERNAL";
    case TfCode::Unavailable: return "UNAVAILABLE";
    case TfCode::DataLoss: return "DATA_LOSS";
    case TfCode::Unauthenticated: return "UNAUTHENTICATED";
    }
    return "UNKNOWN";
}

int httpStatusFor(TfCode code) {
    switch (code) {
    case TfCode::Ok: return 200;
    case TfCode::Cancelled: return 499;
    case TfCode::InvalidArgument:
    case TfCode::FailedPrecondition:
    case TfCode::OutOfRange: return 400;
    case TfCode::DeadlineExceeded: return 504;
    case TfCode::NotFound: return 404;
    case TfCode::AlreadyExists:
    case TfCode::Aborted: return 409;
    case TfCode::PermissionDenied: return 403;
    case TfCode::ResourceExhausted: return 429;
    case TfCode::Unimplemented: return 501;
    case TfCode::Unavailable: return 503;
    case TfCode::Unauthenticated: return 401;
    default: return 500;
    }
}

Error serveError(TfCode code, std::string message) {
    ErrorCode engineCode = ErrorCode::InvalidArgument;
    switch (code) {
    case TfCode::NotFound: engineCode = ErrorCode::FileNotFound; break;
    case TfCode::Internal:
    case TfCode::Unknown:
    case TfCode::DataLoss: engineCode = ErrorCode::Internal; break;
    case TfCode::Unimplemented: engineCode = ErrorCode::Unsupported; break;
    case TfCode::Cancelled: engineCode = ErrorCode::Cancelled; break;
    case TfCode::ResourceExhausted: engineCode = ErrorCode::OutOfMemory; break;
    default: break;
    }
    Error e(engineCode, std::move(message));
    e.with("tf_code", tfCodeName(code));
    return e;
}

TfCode tfCodeOf(const Error& e) {
    const std::string recorded = e.param("tf_code");
    if (!recorded.empty()) {
        for (int c = 0; c <= 16; ++c)
            if (recorded == tfCodeName(static_cast<TfCode>(c))) return static_cast<TfCode>(c);
    }
    switch (e.code) {
    case ErrorCode::Ok: return TfCode::Ok;
    case ErrorCode::FileNotFound: return TfCode::NotFound;
    case ErrorCode::Internal:
    case ErrorCode::FileRead:
    case ErrorCode::FileWrite: return TfCode::Internal;
    case ErrorCode::Unsupported: return TfCode::Unimplemented;
    case ErrorCode::OutOfMemory: return TfCode::ResourceExhausted;
    case ErrorCode::Cancelled: return TfCode::Cancelled;
    case ErrorCode::DeviceUnavailable: return TfCode::Unavailable;
    default: return TfCode::InvalidArgument;
    }
}

}  // namespace kiln::engine::serve
