// SPDX-License-Identifier: Apache-2.0
// A plugin written in C++ whose loss throws a C++ exception through Kiln's C interface instead of
// returning an error: throw.ThrowingLoss throws std::runtime_error on every batch (it accepts any
// shapes, so the model compiles and training starts). Kiln must turn it into an error event.
#include <stdexcept>

#include <kiln/plugin.h>

namespace {

int anyShapes(const KilnOpContext* /*ctx*/, char* /*error*/, size_t /*errorSize*/) {
    return 0;
}

int throwingLoss(const KilnLossArgs* /*args*/) {
    throw std::runtime_error("the throwing loss throws on every batch");
}

const KilnLossDesc kLosses[] = {
    {"throw.ThrowingLoss", "throws a C++ exception", nullptr, 0, anyShapes, throwingLoss},
};

const KilnPluginDesc kPlugin = {KILN_PLUGIN_ABI_VERSION, "throw", "0", nullptr, 0, kLosses, 1, nullptr, 0};

}  // namespace

extern "C" KILN_PLUGIN_EXPORT const KilnPluginDesc* kiln_plugin_describe(void) {
    return &kPlugin;
}
