// SPDX-License-Identifier: Apache-2.0
// JSON <-> tensor conversion for the REST API: parsing and validating predict / classify / regress
// bodies against a model signature, and writing responses as TF Serving does. Plain functions on
// bytes, with no server behind them (the fuzz targets call them directly).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/tensor.h"
#include "engine/serve/servable.h"

namespace kiln::engine::serve {

// Per-request limits, all checked before any tensor of the request is allocated.
struct RequestLimits {
    int64_t maxBatch = int64_t(1) << 16;        // instances / examples / rows
    int64_t maxElements = int64_t(16) << 20;    // input values over all inputs (float32: 64 MiB)
    int maxJsonDepth = 64;                      // nesting of the request body
    int64_t maxImagePixels = int64_t(4096) * 4096;  // width x height of one {"b64": ...} image
};

// Called once a request's batch is known and every value checked, right before its tensors are
// allocated; an error it returns ends the request (kiln-serve's in-flight cap, inflight_budget.h).
using AdmitFn = std::function<Status(int64_t batch)>;

// The most JSON values (numbers, lists, objects, ...) a valid request for `sig` within `limits`
// can hold; a body with more is refused while it is parsed, which bounds the parsed tree's size.
uint64_t jsonValueBudget(const ModelSignature& sig, const RequestLimits& limits);

// The request parts of a predict call, validated against a signature.
struct PredictRequestData {
    bool columnar = false;          // "inputs" (columnar) rather than "instances" (row)
    std::vector<Tensor> inputs;     // one [batch, item...] tensor per signature input
    int64_t batch = 0;
};

// Parses and validates a :predict body against `sig`. Errors are INVALID_ARGUMENT with messages
// naming the input and the index ("instances[3]: input \"image\": ...").
// The batch times the signature's item sizes must stay within `limits` before anything is
// allocated; a body nested deeper than limits.maxJsonDepth is refused while it is parsed.
Result<PredictRequestData> parsePredictRequest(std::string_view body, const ModelSignature& sig,
                                               const RequestLimits& limits = {}, const AdmitFn& admit = {});
// The general parser behind parsePredictRequest, on a checked JSON tree: every form of the API.
// parsePredictRequest first tries readPlainPredict (predict_reader.h), which reads the common
// form in one pass and leaves everything else, errors included, to this one; both give the same
// tensors for a body both accept.
Result<PredictRequestData> parsePredictRequestTree(std::string_view body, const ModelSignature& sig,
                                                   const RequestLimits& limits = {}, const AdmitFn& admit = {});
// Parses a :classify / :regress body ({"examples": [{feature: value}], "context"?}); features
// are matched to inputs by name.
Result<std::vector<Tensor>> parseExamplesRequest(std::string_view body, const ModelSignature& sig,
                                                 const RequestLimits& limits = {}, const AdmitFn& admit = {});

// JSON writers for responses (floats shortest round-trip, whole numbers with ".0", NaN and
// Infinity as bare tokens, as TF Serving writes them).
std::string formatPredictResponse(const std::vector<Tensor>& outputs, const ModelSignature& sig, bool columnar);
std::string formatClassifyResponse(const std::vector<Tensor>& outputs, const ModelSignature& sig);
std::string formatRegressResponse(const std::vector<Tensor>& outputs, const ModelSignature& sig);
std::string errorBody(const std::string& message);

// Decodes standard or URL-safe base64 (padding optional). Returns false on bad input.
bool decodeBase64(std::string_view in, std::string& out);
// The format and size of an encoded image, read from its header without decoding it. Only PNG,
// JPEG and BMP are accepted (by their magic bytes).
struct ImageHeader {
    const char* format = "";
    int64_t width = 0;
    int64_t height = 0;
};
Result<ImageHeader> readImageHeader(std::string_view bytes);
// Decodes an encoded PNG, JPEG or BMP image into a [H, W, C] item of `spec` with its
// preprocessing applied; images over `maxPixels` (from the header) are refused before decoding.
// `where` prefixes error messages.
Status decodeImageInto(const std::string& bytes, const TensorSpec& spec, float* out, const std::string& where,
                       int64_t maxPixels);

}  // namespace kiln::engine::serve
