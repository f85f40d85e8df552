// SPDX-License-Identifier: Apache-2.0
// The one-pass reader for kiln-serve's common :predict body: one float input given as nested
// lists of numbers, read straight into floats without building a JSON tree.
#pragma once

#include <optional>
#include <string_view>

#include "engine/serve/json_tensor.h"

namespace kiln::engine::serve {

// Reads `{"instances": [...]}` or `{"inputs": [...]}` (optionally with "signature_name") for a
// signature with a single DT_FLOAT input, each instance nested lists of exactly the input's item
// shape. Numbers follow JSON's grammar and convert to the same float as the general parser
// (parsePredictRequestTree) gives: text to the nearest double, then to float.
//
// Returns nullopt for every body outside that form or not valid JSON (other keys, objects,
// strings with escapes, b64 images, a wrong length, a number the general parser might treat
// differently, a batch over `limits`): the caller then parses it with the general parser, which
// answers exactly as it always has, errors included. Returns the request, or the error of `admit`
// (called with the batch before the input tensor is allocated), otherwise.
std::optional<Result<PredictRequestData>> readPlainPredict(std::string_view body, const ModelSignature& sig,
                                                           const RequestLimits& limits, const AdmitFn& admit);

}  // namespace kiln::engine::serve
