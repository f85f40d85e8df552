// SPDX-License-Identifier: Apache-2.0
// One-pass :predict reader: a recursive-descent scan of the fixed body shape with std::from_chars
// for the numbers, writing into a per-thread buffer until the batch is known and admitted.
#include "engine/serve/predict_reader.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace kiln::engine::serve {

namespace {

// A per-thread buffer for the values read before the batch is known. Kept between requests up
// to this many floats (1 MiB); a larger request's buffer is freed once the request is read.
constexpr size_t kKeptScratchFloats = size_t(1) << 18;

bool isDigit(char c) { return c >= '0' && c <= '9'; }

struct Reader {
    const char* p;
    const char* end;

    void space() {
        while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p;
    }
    bool eat(char c) {
        space();
        if (p < end && *p == c) {
            ++p;
            return true;
        }
        return false;
    }
    // A string of printable ASCII without escapes (anything else is the general parser's job).
    bool plainString(std::string_view& out) {
        if (!eat('"')) return false;
        const char* start = p;
        while (p < end && *p != '"') {
            const auto c = static_cast<unsigned char>(*p);
            if (c == '\\' || c < 0x20 || c >= 0x80) return false;
            ++p;
        }
        if (p == end) return false;
        out = std::string_view(start, static_cast<size_t>(p - start));
        ++p;
        return true;
    }
    // A JSON number, converted as the general parser converts it: integers (up to 18 digits, so
    // they fit an int64 exactly) straight to float, other forms to the nearest double and then to
    // float. Out-of-range doubles and floats are refused here.
    //
    // The grammar scan also gathers the decimal digits: when they form an integer of at most 2^53
    // and the power of ten is within 10^±22, both are exact doubles and one multiplication or
    // division gives the correctly rounded double (what strtod and from_chars return); that is
    // the common case (numbers like 0.1234) and skips a second pass over the digits.
    bool number(float& out) {
        static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                            1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
        space();
        const char* start = p;
        const bool negative = p < end && *p == '-';
        if (negative) ++p;
        if (p == end) return false;
        uint64_t mantissa = 0;
        int significant = 0;  // digits in mantissa from its first non-zero one
        int scale = 0;        // the value is mantissa * 10^scale
        bool exact = true;    // mantissa holds every digit
        auto take = [&](char c) {
            if (significant >= 19) {
                exact = false;
                return;
            }
            mantissa = mantissa * 10 + static_cast<uint64_t>(c - '0');
            if (mantissa) ++significant;
        };
        if (*p == '0') {
            ++p;
        } else if (*p >= '1' && *p <= '9') {
            while (p < end && isDigit(*p)) take(*p++);
        } else {
            return false;
        }
        bool integral = true;
        if (p < end && *p == '.') {
            integral = false;
            const char* digits = ++p;
            while (p < end && isDigit(*p)) {
                take(*p++);
                --scale;
            }
            if (p == digits) return false;
        }
        if (p < end && (*p == 'e' || *p == 'E')) {
            integral = false;
            ++p;
            bool minus = false;
            if (p < end && (*p == '+' || *p == '-')) minus = *p++ == '-';
            const char* digits = p;
            int exponent = 0;
            while (p < end && isDigit(*p)) {
                if (exponent < 10000) exponent = exponent * 10 + (*p - '0');
                ++p;
            }
            if (p == digits) return false;
            scale += minus ? -exponent : exponent;
        }
        if (integral) {
            if (p - start > 18) return false;
            const auto v = static_cast<int64_t>(mantissa);
            out = static_cast<float>(negative ? -v : v);
            return true;
        }
        if (exact && mantissa <= (uint64_t(1) << 53) && scale >= -22 && scale <= 22) {
            double d = static_cast<double>(mantissa);
            d = scale < 0 ? d / kPow10[-scale] : d * kPow10[scale];
            out = static_cast<float>(negative ? -d : d);  // at most 2^53 * 1e22, inside float's range
            return true;
        }
        double d = 0;
        const auto r = std::from_chars(start, p, d, std::chars_format::general);
        if (r.ec != std::errc() || r.ptr != p || !(std::fabs(d) <= std::numeric_limits<float>::max())) return false;
        out = static_cast<float>(d);
        return true;
    }
};

// One item of shape dims[d...] into out (advanced past it).
bool readItem(Reader& r, const std::vector<int64_t>& dims, size_t d, float*& out) {
    if (d == dims.size()) return r.number(*out++);
    if (!r.eat('[')) return false;
    for (int64_t i = 0; i < dims[d]; ++i) {
        if (i && !r.eat(',')) return false;
        if (!readItem(r, dims, d + 1, out)) return false;
    }
    return r.eat(']');
}

}  // namespace

std::optional<Result<PredictRequestData>> readPlainPredict(std::string_view body, const ModelSignature& sig,
                                                           const RequestLimits& limits, const AdmitFn& admit) {
    if (sig.inputs.size() != 1 || sig.inputs[0].dtype != "DT_FLOAT") return std::nullopt;
    const TensorSpec& spec = sig.inputs[0];
    const std::vector<int64_t> dims = spec.itemShape();
    const int64_t item = spec.itemSize();
    // The body's nesting: the object, the list of instances, then the item's lists.
    if (item <= 0 || static_cast<int64_t>(dims.size()) + 2 > limits.maxJsonDepth) return std::nullopt;
    for (int64_t d : dims)
        if (d <= 0) return std::nullopt;
    const int64_t maxRows = std::min(limits.maxBatch, limits.maxElements / item);

    thread_local std::vector<float> scratch;
    struct Trim {
        ~Trim() {
            if (scratch.capacity() > kKeptScratchFloats) std::vector<float>().swap(scratch);
        }
    } trim;

    Reader r{body.data(), body.data() + body.size()};
    bool seenSignature = false, seenData = false, columnar = false;
    int64_t batch = 0;
    if (!r.eat('{')) return std::nullopt;
    do {
        std::string_view key;
        if (!r.plainString(key) || !r.eat(':')) return std::nullopt;
        if (key == "signature_name") {
            std::string_view name;
            if (seenSignature || !r.plainString(name)) return std::nullopt;
            if (!name.empty() && name != "serving_default") return std::nullopt;
            seenSignature = true;
        } else if (key == "instances" || key == "inputs") {
            if (seenData || !r.eat('[')) return std::nullopt;
            seenData = true;
            columnar = key == "inputs";
            do {
                if (batch >= maxRows) return std::nullopt;  // over a limit: the general parser says which
                scratch.resize(static_cast<size_t>((batch + 1) * item));
                float* out = scratch.data() + batch * item;
                if (!readItem(r, dims, 0, out)) return std::nullopt;
                ++batch;
            } while (r.eat(','));
            if (!r.eat(']')) return std::nullopt;
        } else {
            return std::nullopt;
        }
    } while (r.eat(','));
    if (!r.eat('}')) return std::nullopt;
    r.space();
    if (r.p != r.end || !seenData) return std::nullopt;

    if (admit) {
        Status admitted = admit(batch);
        if (!admitted) return Result<PredictRequestData>(std::move(admitted.error()));
    }
    PredictRequestData req;
    req.columnar = columnar;
    req.batch = batch;
    req.inputs.emplace_back(Shape(spec.shape).withBatch(batch));
    std::memcpy(req.inputs[0].data<float>(), scratch.data(), static_cast<size_t>(batch * item) * sizeof(float));
    return Result<PredictRequestData>(std::move(req));
}

}  // namespace kiln::engine::serve
