// SPDX-License-Identifier: Apache-2.0
// JSON <-> tensor conversion for the REST API: parsing and validating predict / classify / regress
// bodies against a model signature, and writing responses as TF Serving does. Plain functions on
// bytes, with no server behind them (the fuzz targets call them directly).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/tensor.h"
#include "engine/serve/servable.h"

namespace kiln::engine::serve {

// The request parts of a predict call, validated against a signature.
struct PredictRequestData {
    bool columnar = false;          // "inputs" (columnar) rather than "instances" (row)
    std::vector<Tensor> inputs;     // one [batch, item...] tensor per signature input
    int64_t batch = 0;
};

// Parses and validates a :predict body against `sig`. Errors are INVALID_ARGUMENT with messages
// naming the input and the index ("instances[3]: input \"image\": ...").
Result<PredictRequestData> parsePredictRequest(std::string_view body, const ModelSignature& sig);
// Parses a :classify / :regress body ({"examples": [{feature: value}], "context"?}); features
// are matched to inputs by name.
Result<std::vector<Tensor>> parseExamplesRequest(std::string_view body, const ModelSignature& sig);

// JSON writers for responses (floats shortest round-trip, whole numbers with ".0", NaN and
// Infinity as bare tokens, as TF Serving writes them).
std::string formatPredictResponse(const std::vector<Tensor>& outputs, const ModelSignature& sig, bool columnar);
std::string formatClassifyResponse(const std::vector<Tensor>& outputs, const ModelSignature& sig);
std::string formatRegressResponse(const std::vector<Tensor>& outputs, const ModelSignature& sig);
std::string errorBody(const std::string& message);

// Decodes standard or URL-safe base64 (padding optional). Returns false on bad input.
bool decodeBase64(std::string_view in, std::string& out);
// Decodes an encoded image (PNG, JPEG, BMP, ...) into a [H, W, C] item of `spec` with its
// preprocessing applied; `where` prefixes error messages.
Status decodeImageInto(const std::string& bytes, const TensorSpec& spec, float* out, const std::string& where);

}  // namespace kiln::engine::serve
