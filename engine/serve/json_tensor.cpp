// SPDX-License-Identifier: Apache-2.0
// JSON <-> tensor conversion for the REST API, following TF Serving's json_tensor behaviour for
// float models: request parsing and validation (row and columnar predict, examples for classify
// and regress, {"b64": ...} images) and response writing.
#include "engine/serve/json_tensor.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <nlohmann/json.hpp>

#include "engine/core/json_checked.h"
#include "engine/serve/predict_reader.h"
#include "engine/serve/status.h"

namespace kiln::engine::serve {
using nlohmann::json;

namespace {

Error invalid(const std::string& message) { return serveError(TfCode::InvalidArgument, message); }

std::string shapeText(const std::vector<int64_t>& dims) {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
    return s + "]";
}

const char* kindName(const json& v) {
    switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "a list";
    case json::value_t::object: return "an object";
    case json::value_t::binary: return "binary data";
    default: return "a number";
    }
}

bool isB64(const json& v) { return v.is_object() && v.size() == 1 && v.contains("b64"); }

// Fills `out` (itemSize floats) from `v`, which must have exactly the item shape of `spec`.
// With `out` null it only checks the shape and types (images only that "b64" is a string): the
// validation pass that runs before a request's tensors are allocated.
Status fillItem(const json& v, const TensorSpec& spec, float* out, const std::string& where, const RequestLimits& limits) {
    if (isB64(v)) {
        const json& b = v["b64"];
        if (!b.is_string()) return invalid(where + ": input \"" + spec.name + "\": \"b64\" must be a string");
        if (!out) return okStatus();
        std::string bytes;
        if (!decodeBase64(b.get_ref<const std::string&>(), bytes))
            return invalid(where + ": input \"" + spec.name + "\": \"b64\" is not valid base64");
        return decodeImageInto(bytes, spec, out, where, limits.maxImagePixels);
    }
    const std::vector<int64_t> dims = spec.itemShape();
    // Iterative walk over the nesting, checking each level's length.
    struct Frame {
        const json* node;
        size_t next;
    };
    std::vector<Frame> stack;
    std::vector<size_t> index;
    int64_t written = 0;
    auto position = [&]() {
        std::string p;
        for (size_t i : index) p += "[" + std::to_string(i) + "]";
        return p;
    };
    auto visit = [&](const json& node) -> Status {
        const size_t depth = stack.size();
        if (depth < dims.size()) {
            if (!node.is_array())
                return invalid(where + position() + ": input \"" + spec.name + "\" expects shape " + shapeText(dims) +
                               " per instance; found " + kindName(node) + " where a list of " +
                               std::to_string(dims[depth]) + " values belongs");
            if (static_cast<int64_t>(node.size()) != dims[depth])
                return invalid(where + position() + ": input \"" + spec.name + "\" expects shape " + shapeText(dims) +
                               " per instance; dimension " + std::to_string(depth) + " has " +
                               std::to_string(node.size()) + " values instead of " + std::to_string(dims[depth]));
            stack.push_back({&node, 0});
            return okStatus();
        }
        if (spec.dtype == "DT_INT32" ? !node.is_number_integer() : !node.is_number())
            return invalid(where + position() + ": input \"" + spec.name + "\" (" + spec.dtype + ") needs " +
                           (spec.dtype == "DT_INT32" ? "an integer" : "a number") + ", found " + kindName(node));
        if (out) out[written] = node.get<float>();
        ++written;
        return okStatus();
    };
    KILN_TRY(visit(v));
    while (!stack.empty()) {
        Frame& f = stack.back();
        if (f.next == f.node->size()) {
            stack.pop_back();
            if (!index.empty()) index.pop_back();
            continue;
        }
        const json& child = (*f.node)[f.next];
        index.push_back(f.next);
        ++f.next;
        const size_t before = stack.size();
        KILN_TRY(visit(child));
        if (stack.size() == before) index.pop_back();  // a leaf
    }
    return okStatus();
}

Result<json> parseBody(std::string_view body, const ModelSignature& sig, const RequestLimits& limits) {
    JsonLimits jl;
    jl.maxDepth = limits.maxJsonDepth;
    jl.maxValues = jsonValueBudget(sig, limits);
    auto parsed = parseJsonChecked(body, jl, "request body");
    if (!parsed) return invalid("JSON Parse error: " + parsed.error().message);
    return parsed;
}

// Refuses a request whose tensors would exceed the element budget, before they are allocated.
Status checkBudget(int64_t batch, const ModelSignature& sig, const RequestLimits& limits, const char* what) {
    if (batch > limits.maxBatch)
        return invalid(std::string("more than ") + std::to_string(limits.maxBatch) + " " + what + " in one request (" +
                       std::to_string(batch) + ")");
    int64_t perItem = 0;
    for (const auto& s : sig.inputs) perItem += s.itemSize();
    if (perItem > 0 && batch > limits.maxElements / perItem)
        return invalid("the request has " + std::to_string(batch) + " " + what + " of " + std::to_string(perItem) +
                       " input values each, more than the limit of " + std::to_string(limits.maxElements) +
                       " values per request");
    return okStatus();
}

Status checkSignatureName(const json& j) {
    if (!j.contains("signature_name")) return okStatus();
    const json& s = j["signature_name"];
    if (!s.is_string()) return invalid("'signature_name' key must be a string value.");
    const std::string name = s.get<std::string>();
    if (!name.empty() && name != "serving_default")
        return invalid("Serving signature name: \"" + name + "\" not found in signature def");
    return okStatus();
}

// The batch of one input's column (the columnar form): a list of instances, or a single b64
// object (batch 1).
Result<int64_t> columnBatch(const json& v, const TensorSpec& spec, const std::string& where) {
    if (isB64(v)) return int64_t(1);
    if (!v.is_array()) return invalid(where + ": input \"" + spec.name + "\" needs a list with the batch first, found " + kindName(v));
    if (v.empty()) return invalid(where + ": input \"" + spec.name + "\" has an empty batch");
    return static_cast<int64_t>(v.size());
}

// Checks (out null) or fills one column of `batch` items.
Status fillColumn(const json& v, const TensorSpec& spec, float* out, const std::string& where, const RequestLimits& limits) {
    if (isB64(v)) return fillItem(v, spec, out, where, limits);
    const int64_t item = spec.itemSize();
    for (size_t i = 0; i < v.size(); ++i)
        KILN_TRY(fillItem(v[i], spec, out ? out + static_cast<int64_t>(i) * item : nullptr, where + "[" + std::to_string(i) + "]",
                          limits));
    return okStatus();
}

std::string formatFloat(float v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
    char buf[32];
    auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
    std::string s(buf, ptr);
    if (s.find_first_of(".eE") == std::string::npos) s += ".0";
    return s;
}

// Writes the item at `data` with shape `dims` as nested lists (a bare number for a scalar item).
void writeNested(std::string& out, const float* data, const std::vector<int64_t>& dims, size_t depth = 0) {
    if (depth == dims.size()) {
        out += formatFloat(*data);
        return;
    }
    int64_t stride = 1;
    for (size_t i = depth + 1; i < dims.size(); ++i) stride *= dims[i];
    out += '[';
    for (int64_t i = 0; i < dims[depth]; ++i) {
        if (i) out += ", ";
        writeNested(out, data + i * stride, dims, depth + 1);
    }
    out += ']';
}

std::string quote(const std::string& s) { return json(s).dump(-1, ' ', false, json::error_handler_t::replace); }

std::vector<float> classScores(const float* row, int64_t n, ModelSignature::Scores mode) {
    std::vector<float> p(row, row + n);
    if (mode == ModelSignature::Scores::Softmax) {
        float m = -INFINITY;
        for (float x : p) m = std::max(m, x);
        double sum = 0;
        for (float& x : p) sum += (x = std::exp(x - m));
        for (float& x : p) x = static_cast<float>(x / sum);
    } else if (mode == ModelSignature::Scores::Sigmoid) {
        for (float& x : p) x = 1.0f / (1.0f + std::exp(-x));
    }
    if (n == 1) return {1.0f - p[0], p[0]};  // a binary classifier's single unit: P(class 1)
    return p;
}

}  // namespace

// Per row: an instance object, and per input one list for every prefix of its item shape plus
// the numbers, plus one (a "b64" object's string, or the key). A classify 'context' may add a
// row's worth, and the top level a few keys.
uint64_t jsonValueBudget(const ModelSignature& sig, const RequestLimits& limits) {
    uint64_t perRow = 1;
    int64_t perItem = 0;
    for (const auto& s : sig.inputs) {
        uint64_t lists = 0, prefix = 1;
        for (int64_t d : s.itemShape()) {
            lists += prefix;
            prefix *= static_cast<uint64_t>(std::max<int64_t>(d, 1));
        }
        perRow += lists + static_cast<uint64_t>(s.itemSize()) + 1;
        perItem += s.itemSize();
    }
    const int64_t rows = std::min(limits.maxBatch, perItem > 0 ? limits.maxElements / perItem : limits.maxBatch);
    return static_cast<uint64_t>(rows) * perRow + perRow + 64;
}

bool decodeBase64(std::string_view in, std::string& out) {
    out.clear();
    out.reserve(in.size() / 4 * 3 + 3);
    uint32_t acc = 0;
    int bits = 0;
    size_t padding = 0;
    for (char c : in) {
        int v;
        if (c >= 'A' && c <= 'Z') v = c - 'A';
        else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
        else if (c >= '0' && c <= '9') v = c - '0' + 52;
        else if (c == '+' || c == '-') v = 62;
        else if (c == '/' || c == '_') v = 63;
        else if (c == '=') {
            ++padding;
            continue;
        } else if (c == '\n' || c == '\r') continue;
        else return false;
        if (padding) return false;  // data after padding
        acc = (acc << 6) | static_cast<uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((acc >> bits) & 0xff);
        }
    }
    return padding <= 2 && bits < 6;
}

Result<PredictRequestData> parsePredictRequest(std::string_view body, const ModelSignature& sig, const RequestLimits& limits,
                                               const AdmitFn& admit) {
    if (auto plain = readPlainPredict(body, sig, limits, admit)) return std::move(*plain);
    return parsePredictRequestTree(body, sig, limits, admit);
}

Result<PredictRequestData> parsePredictRequestTree(std::string_view body, const ModelSignature& sig, const RequestLimits& limits,
                                                   const AdmitFn& admit) {
    KILN_ASSIGN(json j, parseBody(body, sig, limits));
    if (!j.is_object()) return invalid("The request body must be a JSON object");
    KILN_TRY(checkSignatureName(j));
    const bool hasInstances = j.contains("instances");
    const bool hasInputs = j.contains("inputs");
    if (hasInstances && hasInputs) return invalid("Not both 'instances' and 'inputs' keys may be given");
    if (!hasInstances && !hasInputs) return invalid("Missing 'inputs' or 'instances' key");
    PredictRequestData req;
    if (hasInstances) {
        const json& inst = j["instances"];
        if (!inst.is_array()) return invalid("'instances' must be a list, found " + std::string(kindName(inst)));
        if (inst.empty()) return invalid("'instances' is an empty list");
        req.batch = static_cast<int64_t>(inst.size());
        KILN_TRY(checkBudget(req.batch, sig, limits, "instances"));
        const bool named = sig.inputs.size() > 1 || (inst[0].is_object() && !isB64(inst[0]));
        // Two passes over the instances: the first (no tensors yet) checks every shape and type,
        // the second allocates and fills, so a malformed request costs no allocation.
        auto pass = [&](bool write) -> Status {
            auto dst = [&](size_t k, size_t i) -> float* {
                return write ? req.inputs[k].data<float>() + static_cast<int64_t>(i) * sig.inputs[k].itemSize() : nullptr;
            };
            for (size_t i = 0; i < inst.size(); ++i) {
                const std::string where = "instances[" + std::to_string(i) + "]";
                const json& e = inst[i];
                if (!named) {
                    KILN_TRY(fillItem(e, sig.inputs[0], dst(0, i), where, limits));
                    continue;
                }
                if (!e.is_object() || isB64(e))
                    return invalid(where + ": the model has several inputs, so every instance must be an object keyed by input name (" +
                                   [&] {
                                       std::string names;
                                       for (const auto& s : sig.inputs) names += (names.empty() ? "" : ", ") + s.name;
                                       return names;
                                   }() + ")");
                for (const auto& [key, value] : e.items())
                    if (sig.findInput(key) < 0) return invalid(where + ": \"" + key + "\" is not an input of the model");
                for (size_t k = 0; k < sig.inputs.size(); ++k) {
                    const TensorSpec& spec = sig.inputs[k];
                    if (!e.contains(spec.name)) return invalid(where + ": input \"" + spec.name + "\" is missing");
                    KILN_TRY(fillItem(e[spec.name], spec, dst(k, i), where + "." + spec.name, limits));
                }
            }
            return okStatus();
        };
        KILN_TRY(pass(false));
        if (admit) KILN_TRY(admit(req.batch));
        for (const auto& spec : sig.inputs) req.inputs.emplace_back(Shape(spec.shape).withBatch(req.batch));
        KILN_TRY(pass(true));
        return req;
    }
    req.columnar = true;
    const json& in = j["inputs"];
    const bool named = in.is_object() && !isB64(in);
    if (!named && sig.inputs.size() > 1)
        return invalid("'inputs' must be an object keyed by input name: the model has " + std::to_string(sig.inputs.size()) + " inputs");
    // The column of each input, its batch checked against the first input's and the budget before
    // anything is allocated.
    std::vector<const json*> columns;
    std::vector<std::string> wheres;
    for (const auto& spec : sig.inputs) {
        if (named && !in.contains(spec.name)) return invalid("inputs: input \"" + spec.name + "\" is missing");
        columns.push_back(named ? &in[spec.name] : &in);
        wheres.push_back(named ? "inputs." + spec.name : "inputs");
        KILN_ASSIGN(int64_t b, columnBatch(*columns.back(), spec, wheres.back()));
        if (columns.size() > 1 && b != req.batch)
            return invalid("inputs: input \"" + spec.name + "\" has a batch of " + std::to_string(b) + ", input \"" +
                           sig.inputs[0].name + "\" of " + std::to_string(req.batch) + "; they must agree");
        req.batch = b;
    }
    KILN_TRY(checkBudget(req.batch, sig, limits, "rows"));
    for (size_t k = 0; k < sig.inputs.size(); ++k) KILN_TRY(fillColumn(*columns[k], sig.inputs[k], nullptr, wheres[k], limits));
    if (admit) KILN_TRY(admit(req.batch));
    for (size_t k = 0; k < sig.inputs.size(); ++k) {
        Tensor t(Shape(sig.inputs[k].shape).withBatch(req.batch));
        KILN_TRY(fillColumn(*columns[k], sig.inputs[k], t.data<float>(), wheres[k], limits));
        req.inputs.push_back(std::move(t));
    }
    return req;
}

Result<std::vector<Tensor>> parseExamplesRequest(std::string_view body, const ModelSignature& sig, const RequestLimits& limits,
                                                 const AdmitFn& admit) {
    KILN_ASSIGN(json j, parseBody(body, sig, limits));
    if (!j.is_object()) return invalid("The request body must be a JSON object");
    KILN_TRY(checkSignatureName(j));
    if (!j.contains("examples")) return invalid("Missing 'examples' key");
    const json& ex = j["examples"];
    if (!ex.is_array() || ex.empty()) return invalid("'examples' must be a non-empty list");
    const auto batch = static_cast<int64_t>(ex.size());
    KILN_TRY(checkBudget(batch, sig, limits, "examples"));
    // The request tree is only ever referenced, never copied.
    static const json kNoContext = json::object();
    const json* context = &kNoContext;
    if (j.contains("context")) {
        context = &j["context"];
        if (!context->is_object()) return invalid("'context' must be an object of features");
    }
    std::vector<Tensor> inputs;
    // As for predict: a checking pass, then allocation, then the filling pass.
    auto pass = [&](bool write) -> Status {
        for (size_t i = 0; i < ex.size(); ++i) {
            const std::string where = "examples[" + std::to_string(i) + "]";
            const json& e = ex[i];
            if (!e.is_object()) return invalid(where + " must be an object of features, found " + kindName(e));
            for (const auto& [key, value] : e.items())
                if (context->contains(key)) return invalid(where + ": feature \"" + key + "\" is also in 'context'");
            for (size_t k = 0; k < sig.inputs.size(); ++k) {
                const TensorSpec& spec = sig.inputs[k];
                const json* f = e.contains(spec.name) ? &e[spec.name] : context->contains(spec.name) ? &(*context)[spec.name] : nullptr;
                if (!f) return invalid(where + ": feature \"" + spec.name + "\" (a model input) is missing");
                float* dst = write ? inputs[k].data<float>() + static_cast<int64_t>(i) * spec.itemSize() : nullptr;
                const std::string fw = where + "." + spec.name;
                if (isB64(*f)) {
                    KILN_TRY(fillItem(*f, spec, dst, fw, limits));
                    continue;
                }
                // A tf.train.Example feature is a flat list (or one value): fill the item in order.
                const size_t count = f->is_array() ? f->size() : 1;
                if (static_cast<int64_t>(count) != spec.itemSize())
                    return invalid(fw + ": feature has " + std::to_string(count) + " values, input \"" + spec.name + "\" takes " +
                                   std::to_string(spec.itemSize()));
                for (size_t n = 0; n < count; ++n) {
                    const json& v = f->is_array() ? (*f)[n] : *f;
                    if (!v.is_number()) return invalid(fw + "[" + std::to_string(n) + "]: needs a number, found " + kindName(v));
                    if (dst) dst[n] = v.get<float>();
                }
            }
        }
        return okStatus();
    };
    KILN_TRY(pass(false));
    if (admit) KILN_TRY(admit(batch));
    for (const auto& spec : sig.inputs) inputs.emplace_back(Shape(spec.shape).withBatch(batch));
    KILN_TRY(pass(true));
    return inputs;
}

std::string formatPredictResponse(const std::vector<Tensor>& outputs, const ModelSignature& sig, bool columnar) {
    std::string out;
    const int64_t batch = outputs.empty() ? 0 : outputs[0].shape()[0];
    if (!columnar) {
        out = "{\n    \"predictions\": [";
        for (int64_t b = 0; b < batch; ++b) {
            if (b) out += ", ";
            if (outputs.size() == 1) {
                writeNested(out, outputs[0].data<float>() + b * sig.outputs[0].itemSize(), sig.outputs[0].itemShape());
                continue;
            }
            out += '{';
            for (size_t k = 0; k < outputs.size(); ++k) {
                out += (k ? ", " : "") + quote(sig.outputs[k].name) + ": ";
                writeNested(out, outputs[k].data<float>() + b * sig.outputs[k].itemSize(), sig.outputs[k].itemShape());
            }
            out += '}';
        }
        return out + "]\n}";
    }
    out = "{\n    \"outputs\": ";
    auto whole = [&](size_t k) {
        std::vector<int64_t> dims = sig.outputs[k].itemShape();
        dims.insert(dims.begin(), batch);
        writeNested(out, outputs[k].data<float>(), dims);
    };
    if (outputs.size() == 1) {
        whole(0);
    } else {
        out += '{';
        for (size_t k = 0; k < outputs.size(); ++k) {
            out += (k ? ", " : "") + quote(sig.outputs[k].name) + ": ";
            whole(k);
        }
        out += '}';
    }
    return out + "\n}";
}

std::string formatClassifyResponse(const std::vector<Tensor>& outputs, const ModelSignature& sig) {
    std::string out = "{\n    \"results\": [";
    const int64_t batch = outputs[0].shape()[0];
    const int64_t n = sig.outputs[0].itemSize();
    for (int64_t b = 0; b < batch; ++b) {
        if (b) out += ", ";
        const auto scores = classScores(outputs[0].data<float>() + b * n, n, sig.scores);
        out += '[';
        for (size_t c = 0; c < scores.size(); ++c) {
            const std::string label = c < sig.classNames.size() ? sig.classNames[c] : std::to_string(c);
            out += (c ? ", [" : "[") + quote(label) + ", " + formatFloat(scores[c]) + "]";
        }
        out += ']';
    }
    return out + "]\n}";
}

std::string formatRegressResponse(const std::vector<Tensor>& outputs, const ModelSignature& sig) {
    std::string out = "{\n    \"results\": [";
    const int64_t batch = outputs[0].shape()[0];
    for (int64_t b = 0; b < batch; ++b) out += (b ? ", " : "") + formatFloat(outputs[0].data<float>()[b]);
    return out + "]\n}";
}

// Messages may quote request bytes that are not UTF-8: those are replaced, never thrown on.
std::string errorBody(const std::string& message) {
    return json{{"error", message}}.dump(4, ' ', false, json::error_handler_t::replace);
}

}  // namespace kiln::engine::serve
