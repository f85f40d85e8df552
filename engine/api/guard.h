// SPDX-License-Identifier: Apache-2.0
// Exceptions never cross engine/api: an entry point runs its body through guarded(), which turns
// anything thrown below it (std::bad_alloc, a library's exception, a plugin written in C++ that
// throws through the C interface) into an Error with a code, so that no front end dies of it.
#pragma once

#include <exception>
#include <string>
#include <utility>

#include "engine/core/error.h"

namespace kiln::engine::api {

// The Error for an exception caught at the api's edge: OutOfMemory for std::bad_alloc, else
// Internal, with the parameters "during" (what the engine was doing, e.g. "training") and "what"
// (the exception's text, "unknown exception" when it is not a std::exception).
Error errorFromException(const std::exception_ptr& caught, const std::string& during);

// body() with every exception turned into an Error (errorFromException). R is a Result<T>.
template <typename F>
auto guarded(const std::string& during, F&& body) noexcept -> decltype(body()) {
    try {
        return std::forward<F>(body)();
    } catch (...) {
        return errorFromException(std::current_exception(), during);
    }
}

}  // namespace kiln::engine::api
