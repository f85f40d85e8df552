// SPDX-License-Identifier: Apache-2.0
// One-pass :predict reader: a flat scan of the fixed body shape (an odometer over the item's
// dimensions instead of recursion), digits gathered eight bytes at a time, separators matched
// against the body's first spelling of each, numbers converted during the scan, values written
// into a per-thread buffer until the batch is known and admitted.
#include "engine/serve/predict_reader.h"

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string_view>

namespace kiln::engine::serve {

namespace {

// Kept between requests up to this many floats (1 MiB); a larger request's buffer is freed once
// the request is read.
constexpr size_t kKeptScratchFloats = size_t(1) << 18;
// Item ranks the reader takes; deeper items go to the general parser (which applies the depth
// limit with its own message).
constexpr size_t kMaxItemRank = 62;

// A per-thread buffer for the values read before the batch is known. Grown without zero-filling
// (every value is written before it is read).
struct Scratch {
    std::unique_ptr<float[]> data;
    size_t capacity = 0;
    float* reserve(size_t floats) {
        if (floats > capacity) {
            size_t grown = std::max(floats, capacity * 2);
            std::unique_ptr<float[]> bigger(new float[grown]);
            if (capacity) std::memcpy(bigger.get(), data.get(), capacity * sizeof(float));
            data = std::move(bigger);
            capacity = grown;
        }
        return data.get();
    }
    void trim() {
        if (capacity > kKeptScratchFloats) {
            data.reset();
            capacity = 0;
        }
    }
};

inline bool isSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Skips JSON whitespace (space, tab, CR, LF) from p.
inline const char* skipSpace(const char* p, const char* end) {
    while (p < end && isSpace(*p)) ++p;
    return p;
}

// Skips whitespace, then takes `c`.
inline bool expect(const char*& p, const char* end, char c) {
    p = skipSpace(p, end);
    if (p < end && *p == c) {
        ++p;
        return true;
    }
    return false;
}

// A string of printable ASCII without escapes (anything else is the general parser's job).
bool plainString(const char*& p, const char* end, std::string_view& out) {
    if (!expect(p, end, '"')) return false;
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

// The eight-byte digit and separator tests read the first character as the lowest byte.
static_assert(std::endian::native == std::endian::little);

constexpr uint64_t kPow10Int[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

// Gathers decimal digits from p into m (wrapping past 19 digits; the caller counts them). Eight
// bytes at a time while eight remain: the leading digits among them are found and converted at
// once (m * 10^n + their value, the same wrapping sum as one digit at a time), the rest one by one.
inline const char* digits(const char* p, const char* end, uint64_t& m) {
    constexpr uint64_t kHigh = 0xF0F0F0F0F0F0F0F0, kZeros = 0x3030303030303030, kSix = 0x0606060606060606;
    while (end - p >= 8) {
        uint64_t x;
        std::memcpy(&x, p, 8);  // byte 0 is the first character (little-endian)
        // Per byte: zero for '0'..'9'. A byte's "+ 6" carries into the next only from 0xFA up, a
        // non-digit, so every byte before the first non-digit is told right.
        const uint64_t other = ((x & kHigh) ^ kZeros) | (((x + kSix) & kHigh) ^ kZeros);
        const int n = other ? __builtin_ctzll(other) >> 3 : 8;
        if (n == 0) return p;
        // The n digits' values, moved up so that the bytes below them read as leading zeros
        // (digits never borrow, so the subtraction leaves the first n bytes exact).
        uint64_t v = x - kZeros;
        if (n < 8) v <<= 8 * (8 - n);
        v = v * 10 + (v >> 8);  // pairs of digits
        v = (((v & 0x000000FF000000FF) * (100 + (uint64_t{1000000} << 32))) +
             (((v >> 16) & 0x000000FF000000FF) * (1 + (uint64_t{10000} << 32)))) >>
            32;  // all eight
        m = m * kPow10Int[n] + v;
        p += n;
        if (n < 8) return p;
    }
    while (p < end) {
        const auto d = static_cast<unsigned>(static_cast<unsigned char>(*p) - '0');
        if (d > 9) break;
        m = m * 10 + d;
        ++p;
    }
    return p;
}

// A JSON number at p (after whitespace), converted as the general parser converts it: integers
// (up to 18 characters, so they fit an int64 exactly) straight to float, other forms to the
// nearest double and then to float. Out-of-range doubles and floats are refused here.
//
// When the digits (at most 19 of them, so they fit a uint64) form an integer of at most 2^53 and
// the power of ten is within 10^±22, both are exact doubles and one multiplication or division
// gives the correctly rounded double (what strtod and from_chars return): the common case
// (numbers like 0.1234). Longer digit strings and larger exponents go through from_chars.
inline bool number(const char*& pp, const char* end, float& out) {
    static constexpr double kPow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const char* p = skipSpace(pp, end);
    const char* start = p;
    const bool negative = p < end && *p == '-';
    if (negative) ++p;
    if (p == end) return false;
    uint64_t mantissa = 0;
    const char* intStart = p;
    if (*p == '0') {
        ++p;
    } else if (*p >= '1' && *p <= '9') {
        p = digits(p, end, mantissa);
    } else {
        return false;
    }
    int64_t count = p - intStart;  // digits gathered into mantissa (leading zeros add nothing)
    int scale = 0;                 // the value is mantissa * 10^scale
    bool integral = true;
    if (p < end && *p == '.') {
        integral = false;
        const char* fraction = ++p;
        p = digits(p, end, mantissa);
        if (p == fraction) return false;
        count += p - fraction;
        scale = -static_cast<int>(std::min<int64_t>(p - fraction, 100000));
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        integral = false;
        ++p;
        bool minus = false;
        if (p < end && (*p == '+' || *p == '-')) minus = *p++ == '-';
        const char* expDigits = p;
        int exponent = 0;
        while (p < end && *p >= '0' && *p <= '9') {
            if (exponent < 10000) exponent = exponent * 10 + (*p - '0');
            ++p;
        }
        if (p == expDigits) return false;
        scale += minus ? -exponent : exponent;
    }
    pp = p;
    if (integral) {
        if (p - start > 18) return false;
        const auto v = static_cast<int64_t>(mantissa);
        out = static_cast<float>(negative ? -v : v);
        return true;
    }
    if (count <= 19 && mantissa <= (uint64_t(1) << 53) && scale >= -22 && scale <= 22) {
        double d = static_cast<double>(static_cast<int64_t>(mantissa));  // at most 2^53: a signed conversion is exact
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

// Whether the bytes at p are `known`, a separator read earlier in the same body (so p > its
// start, and eight bytes from its start are readable whenever eight from p are).
inline bool sameSeparator(const char* p, const char* end, std::string_view known) {
    const size_t n = known.size();
    if (n <= 8 && end - p >= 8) {
        uint64_t a, b;
        std::memcpy(&a, p, 8);
        std::memcpy(&b, known.data(), 8);
        const uint64_t mask = n == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * n)) - 1;
        return ((a ^ b) & mask) == 0;
    }
    return static_cast<size_t>(end - p) >= n && std::memcmp(p, known.data(), n) == 0;
}

// One item of shape dims[0..rank) into out: rank opening brackets, the numbers in row-major order
// with the commas and brackets between them that the shape implies, rank closing brackets.
// `at` is the odometer (one index per dimension), all zero on entry and on a successful exit.
//
// Between two numbers come `closed` closing brackets, a comma and as many opening brackets, where
// `closed` is the number of dimensions the first number completes. The bytes of the first such
// separator of each depth (whitespace included) are kept in separators[closed]: a body written
// by one client spells the same depth the same way throughout, so later ones are recognised by
// one comparison, and any other spelling is read token by token as before.
bool readItem(const char*& p, const char* end, const int64_t* dims, size_t rank, int64_t* at, float* out,
              std::string_view* separators) {
    for (size_t k = 0; k < rank; ++k)
        if (!expect(p, end, '[')) return false;
    while (true) {
        if (!number(p, end, *out++)) return false;
        // Advance the odometer past every dimension this number completes.
        size_t k = rank;
        while (k > 0 && ++at[k - 1] == dims[k - 1]) {
            at[k - 1] = 0;
            --k;
        }
        const size_t closed = rank - k;
        if (k == 0) {
            for (size_t j = 0; j < closed; ++j)
                if (!expect(p, end, ']')) return false;
            return true;
        }
        std::string_view& known = separators[closed];
        if (!known.empty() && sameSeparator(p, end, known)) {
            p += known.size();
            continue;
        }
        const char* start = p;
        for (size_t j = 0; j < closed; ++j)
            if (!expect(p, end, ']')) return false;
        if (!expect(p, end, ',')) return false;
        for (size_t j = 0; j < closed; ++j)
            if (!expect(p, end, '[')) return false;
        if (known.empty()) known = std::string_view(start, static_cast<size_t>(p - start));
    }
}

}  // namespace

std::optional<Result<PredictRequestData>> readPlainPredict(std::string_view body, const ModelSignature& sig,
                                                           const RequestLimits& limits, const AdmitFn& admit) {
    if (sig.inputs.size() != 1 || sig.inputs[0].dtype != "DT_FLOAT") return std::nullopt;
    const TensorSpec& spec = sig.inputs[0];
    if (spec.shape.empty() || spec.shape.size() - 1 > kMaxItemRank) return std::nullopt;
    const size_t rank = spec.shape.size() - 1;
    const int64_t* dims = spec.shape.data() + 1;
    const int64_t item = spec.itemSize();
    // The body's nesting: the object, the list of instances, then the item's lists.
    if (item <= 0 || static_cast<int64_t>(rank) + 2 > limits.maxJsonDepth) return std::nullopt;
    for (size_t d = 0; d < rank; ++d)
        if (dims[d] <= 0) return std::nullopt;
    const int64_t maxRows = std::min(limits.maxBatch, limits.maxElements / item);

    thread_local Scratch scratch;
    struct Trim {
        ~Trim() { scratch.trim(); }
    } trim;
    std::array<int64_t, kMaxItemRank> at{};
    std::array<std::string_view, kMaxItemRank + 1> separators{};

    const char* p = body.data();
    const char* const end = p + body.size();
    bool seenSignature = false, seenData = false, columnar = false;
    int64_t batch = 0;
    if (!expect(p, end, '{')) return std::nullopt;
    do {
        std::string_view key;
        if (!plainString(p, end, key) || !expect(p, end, ':')) return std::nullopt;
        if (key == "signature_name") {
            std::string_view name;
            if (seenSignature || !plainString(p, end, name)) return std::nullopt;
            if (!name.empty() && name != "serving_default") return std::nullopt;
            seenSignature = true;
        } else if (key == "instances" || key == "inputs") {
            if (seenData || !expect(p, end, '[')) return std::nullopt;
            seenData = true;
            columnar = key == "inputs";
            do {
                if (batch >= maxRows) return std::nullopt;  // over a limit: the general parser says which
                float* out = scratch.reserve(static_cast<size_t>((batch + 1) * item)) + batch * item;
                if (!readItem(p, end, dims, rank, at.data(), out, separators.data())) return std::nullopt;
                ++batch;
            } while (expect(p, end, ','));
            if (!expect(p, end, ']')) return std::nullopt;
        } else {
            return std::nullopt;
        }
    } while (expect(p, end, ','));
    if (!expect(p, end, '}')) return std::nullopt;
    if (skipSpace(p, end) != end || !seenData) return std::nullopt;

    if (admit) {
        Status admitted = admit(batch);
        if (!admitted) return Result<PredictRequestData>(std::move(admitted.error()));
    }
    PredictRequestData req;
    req.columnar = columnar;
    req.batch = batch;
    req.inputs.emplace_back(Shape(spec.shape).withBatch(batch));
    std::memcpy(req.inputs[0].data<float>(), scratch.data.get(), static_cast<size_t>(batch * item) * sizeof(float));
    return Result<PredictRequestData>(std::move(req));
}

}  // namespace kiln::engine::serve
