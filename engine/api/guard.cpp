// SPDX-License-Identifier: Apache-2.0
// errorFromException: the one place that names what an escaped exception becomes.
#include "engine/api/guard.h"

#include <new>
#include <stdexcept>

namespace kiln::engine::api {

Error errorFromException(const std::exception_ptr& caught, const std::string& during) {
    try {
        std::rethrow_exception(caught);
    } catch (const std::bad_alloc& e) {
        return Error(ErrorCode::OutOfMemory, "out of memory while " + during + " (" + e.what() + ")")
            .with("during", during)
            .with("what", e.what());
    } catch (const std::exception& e) {
        return Error(ErrorCode::Internal, during + " stopped on an unexpected exception: " + e.what())
            .with("during", during)
            .with("what", e.what());
    } catch (...) {
        return Error(ErrorCode::Internal, during + " stopped on an unknown exception")
            .with("during", during)
            .with("what", "unknown exception");
    }
}

}  // namespace kiln::engine::api
