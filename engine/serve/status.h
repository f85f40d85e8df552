// SPDX-License-Identifier: Apache-2.0
// TF Serving's status codes (tensorflow.error.Code, identical to gRPC's) carried on engine Errors,
// and their HTTP mapping for the REST API.
#pragma once

#include <string>

#include "engine/core/error.h"

namespace kiln::engine::serve {

enum class TfCode {
    Ok = 0,
    Cancelled = 1,
    Unknown = 2,
    InvalidArgument = 3,
    DeadlineExceeded = 4,
    NotFound = 5,
    AlreadyExists = 6,
    PermissionDenied = 7,
    ResourceExhausted = 8,
    FailedPrecondition = 9,
    Aborted = 10,
    OutOfRange = 11,
    Unimplemented = 12,
    Internal = 13,
    Unavailable = 14,
    DataLoss = 15,
    Unauthenticated = 16,
};

const char* tfCodeName(TfCode code);  // "INVALID_ARGUMENT"
int httpStatusFor(TfCode code);       // 400, 404, ...

// An Error whose TF code is recorded in the parameter "tf_code".
Error serveError(TfCode code, std::string message);
// The TF code of any Error: the recorded one, else derived from the engine's code.
TfCode tfCodeOf(const Error& e);

}  // namespace kiln::engine::serve
