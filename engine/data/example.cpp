// SPDX-License-Identifier: Apache-2.0
// Hand-written protobuf wire encoding of tf.train.Example. Field numbers: Example.features = 1;
// Features.feature = 1 (map entry: key = 1, value = 2); Feature: bytes_list = 1, float_list = 2,
// int64_list = 3; each *List.value = 1.
#include "engine/data/example.h"

#include <cstring>

namespace kiln::engine::data {
namespace {

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLen = 2, kFixed32 = 5 };

void putVarint(std::string& out, uint64_t v) {
    while (v >= 0x80) {
        out.push_back(static_cast<char>((v & 0x7F) | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<char>(v));
}

void putTag(std::string& out, uint32_t field, WireType type) { putVarint(out, (field << 3) | type); }

void putLen(std::string& out, uint32_t field, std::string_view bytes) {
    putTag(out, field, kLen);
    putVarint(out, bytes.size());
    out.append(bytes);
}

std::string encodeFeature(const Feature& f) {
    std::string list;
    uint32_t field = 0;
    switch (f.kind) {
    case Feature::Kind::None: return {};
    case Feature::Kind::Bytes:
        field = 1;
        for (const auto& b : f.bytes) putLen(list, 1, b);
        break;
    case Feature::Kind::Float: {
        field = 2;
        if (!f.floats.empty()) {
            std::string packed(f.floats.size() * 4, '\0');
            for (size_t i = 0; i < f.floats.size(); ++i) {
                uint32_t u;
                std::memcpy(&u, &f.floats[i], 4);
                for (int k = 0; k < 4; ++k) packed[i * 4 + static_cast<size_t>(k)] = static_cast<char>((u >> (8 * k)) & 0xFF);
            }
            putLen(list, 1, packed);
        }
        break;
    }
    case Feature::Kind::Int64: {
        field = 3;
        if (!f.ints.empty()) {
            std::string packed;
            for (int64_t v : f.ints) putVarint(packed, static_cast<uint64_t>(v));
            putLen(list, 1, packed);
        }
        break;
    }
    }
    std::string out;
    putLen(out, field, list);
    return out;
}

// A bounded cursor over one message; every read checks the remaining length.
class Cursor {
public:
    Cursor(std::string_view bytes, size_t base) : m_b(bytes), m_base(base) {}
    bool done() const { return m_pos >= m_b.size(); }
    size_t offset() const { return m_base + m_pos; }

    bool varint(uint64_t& v) {
        v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (m_pos >= m_b.size()) return false;
            auto byte = static_cast<uint8_t>(m_b[m_pos++]);
            v |= static_cast<uint64_t>(byte & 0x7F) << shift;
            if (!(byte & 0x80)) return true;
        }
        return false;  // more than 10 bytes
    }
    bool fixed(size_t n, uint64_t& v) {
        if (m_b.size() - m_pos < n) return false;
        v = 0;
        for (size_t i = n; i-- > 0;) v = (v << 8) | static_cast<uint8_t>(m_b[m_pos + i]);
        m_pos += n;
        return true;
    }
    bool len(std::string_view& out, size_t& start) {
        uint64_t n;
        if (!varint(n) || n > m_b.size() - m_pos) return false;
        start = offset();
        out = m_b.substr(m_pos, static_cast<size_t>(n));
        m_pos += static_cast<size_t>(n);
        return true;
    }
    // Skips a field of the given wire type; false when it does not fit or the type is unknown.
    bool skip(uint32_t type) {
        uint64_t v;
        std::string_view s;
        size_t st;
        switch (type) {
        case kVarint: return varint(v);
        case kFixed64: return fixed(8, v);
        case kLen: return len(s, st);
        case kFixed32: return fixed(4, v);
        default: return false;
        }
    }

private:
    std::string_view m_b;
    size_t m_base;
    size_t m_pos = 0;
};

Error malformed(const std::string& feature, size_t offset, const std::string& reason) {
    std::string msg = "malformed tf.train.Example";
    if (!feature.empty()) msg += ": feature \"" + feature + "\"";
    msg += ": " + reason + " at byte " + std::to_string(offset);
    Error e(ErrorCode::DataError, msg);
    if (!feature.empty()) e.with("feature", feature);
    e.with("offset", std::to_string(offset)).with("reason", reason);
    return e;
}

Status decodeList(std::string_view bytes, size_t base, Feature& f, const std::string& key) {
    Cursor c(bytes, base);
    while (!c.done()) {
        size_t at = c.offset();
        uint64_t tag;
        if (!c.varint(tag)) return malformed(key, at, "bad field tag");
        auto field = static_cast<uint32_t>(tag >> 3);
        auto type = static_cast<uint32_t>(tag & 7);
        if (field != 1) {
            if (!c.skip(type)) return malformed(key, at, "unreadable unknown field");
            continue;
        }
        switch (f.kind) {
        case Feature::Kind::Bytes: {
            std::string_view s;
            size_t st;
            if (type != kLen || !c.len(s, st)) return malformed(key, at, "bad bytes value");
            f.bytes.emplace_back(s);
            break;
        }
        case Feature::Kind::Float: {
            uint64_t u;
            if (type == kFixed32) {
                if (!c.fixed(4, u)) return malformed(key, at, "truncated float value");
                float v;
                auto u32 = static_cast<uint32_t>(u);
                std::memcpy(&v, &u32, 4);
                f.floats.push_back(v);
            } else if (type == kLen) {
                std::string_view s;
                size_t st;
                if (!c.len(s, st)) return malformed(key, at, "truncated packed float list");
                if (s.size() % 4) return malformed(key, st, "packed float list length is not a multiple of 4");
                for (size_t i = 0; i < s.size(); i += 4) {
                    uint32_t u32 = 0;
                    for (size_t k = 4; k-- > 0;) u32 = (u32 << 8) | static_cast<uint8_t>(s[i + k]);
                    float v;
                    std::memcpy(&v, &u32, 4);
                    f.floats.push_back(v);
                }
            } else {
                return malformed(key, at, "float value with wire type " + std::to_string(type));
            }
            break;
        }
        case Feature::Kind::Int64: {
            uint64_t u;
            if (type == kVarint) {
                if (!c.varint(u)) return malformed(key, at, "bad int64 value");
                f.ints.push_back(static_cast<int64_t>(u));
            } else if (type == kLen) {
                std::string_view s;
                size_t st;
                if (!c.len(s, st)) return malformed(key, at, "truncated packed int64 list");
                Cursor p(s, st);
                while (!p.done()) {
                    size_t vat = p.offset();
                    if (!p.varint(u)) return malformed(key, vat, "bad varint in packed int64 list");
                    f.ints.push_back(static_cast<int64_t>(u));
                }
            } else {
                return malformed(key, at, "int64 value with wire type " + std::to_string(type));
            }
            break;
        }
        case Feature::Kind::None: break;
        }
    }
    return {};
}

Status decodeFeature(std::string_view bytes, size_t base, Feature& f, const std::string& key) {
    Cursor c(bytes, base);
    while (!c.done()) {
        size_t at = c.offset();
        uint64_t tag;
        if (!c.varint(tag)) return malformed(key, at, "bad field tag");
        auto field = static_cast<uint32_t>(tag >> 3);
        auto type = static_cast<uint32_t>(tag & 7);
        if (field < 1 || field > 3) {
            if (!c.skip(type)) return malformed(key, at, "unreadable unknown field");
            continue;
        }
        std::string_view list;
        size_t st;
        if (type != kLen || !c.len(list, st)) return malformed(key, at, "bad list");
        // oneof: a later list replaces an earlier one of another kind; the same kind merges.
        auto kind = field == 1 ? Feature::Kind::Bytes : field == 2 ? Feature::Kind::Float : Feature::Kind::Int64;
        if (f.kind != kind) f = Feature{kind, {}, {}, {}};
        KILN_TRY(decodeList(list, st, f, key));
    }
    return {};
}

}  // namespace

Feature Feature::ofBytes(std::vector<std::string> v) { return {Kind::Bytes, std::move(v), {}, {}}; }
Feature Feature::ofFloats(std::vector<float> v) { return {Kind::Float, {}, std::move(v), {}}; }
Feature Feature::ofInt64s(std::vector<int64_t> v) { return {Kind::Int64, {}, {}, std::move(v)}; }

size_t Feature::size() const {
    switch (kind) {
    case Kind::Bytes: return bytes.size();
    case Kind::Float: return floats.size();
    case Kind::Int64: return ints.size();
    case Kind::None: return 0;
    }
    return 0;
}

const char* featureKindName(Feature::Kind kind) {
    switch (kind) {
    case Feature::Kind::None: return "none";
    case Feature::Kind::Bytes: return "bytes";
    case Feature::Kind::Float: return "float";
    case Feature::Kind::Int64: return "int64";
    }
    return "none";
}

const Feature* Example::find(std::string_view key) const {
    auto it = features.find(std::string(key));
    return it == features.end() ? nullptr : &it->second;
}

std::string encodeExample(const Example& example) {
    std::string features;
    for (const auto& [key, f] : example.features) {
        std::string entry;
        putLen(entry, 1, key);
        putLen(entry, 2, encodeFeature(f));
        putLen(features, 1, entry);
    }
    std::string out;
    putLen(out, 1, features);
    return out;
}

Result<Example> decodeExample(std::string_view bytes) {
    Example ex;
    Cursor top(bytes, 0);
    while (!top.done()) {
        size_t at = top.offset();
        uint64_t tag;
        if (!top.varint(tag)) return malformed({}, at, "bad field tag");
        auto type = static_cast<uint32_t>(tag & 7);
        if ((tag >> 3) != 1) {
            if (!top.skip(type)) return malformed({}, at, "unreadable unknown field");
            continue;
        }
        std::string_view features;
        size_t fst;
        if (type != kLen || !top.len(features, fst)) return malformed({}, at, "bad features field");
        Cursor fc(features, fst);
        while (!fc.done()) {
            size_t eat = fc.offset();
            uint64_t etag;
            if (!fc.varint(etag)) return malformed({}, eat, "bad field tag");
            auto etype = static_cast<uint32_t>(etag & 7);
            if ((etag >> 3) != 1) {
                if (!fc.skip(etype)) return malformed({}, eat, "unreadable unknown field");
                continue;
            }
            std::string_view entry;
            size_t est;
            if (etype != kLen || !fc.len(entry, est)) return malformed({}, eat, "bad feature map entry");
            // Map entry: key (1) and value (2) in any order; a missing key is "".
            std::string key;
            std::string_view value;
            size_t vst = est;
            bool haveValue = false;
            Cursor ec(entry, est);
            while (!ec.done()) {
                size_t kat = ec.offset();
                uint64_t ktag;
                if (!ec.varint(ktag)) return malformed(key, kat, "bad field tag");
                auto ktype = static_cast<uint32_t>(ktag & 7);
                auto kfield = ktag >> 3;
                if (kfield == 1 || kfield == 2) {
                    std::string_view s;
                    size_t sst;
                    if (ktype != kLen || !ec.len(s, sst))
                        return malformed(key, kat, kfield == 1 ? "bad feature name" : "bad feature value");
                    if (kfield == 1) {
                        key.assign(s);
                    } else {
                        value = s;
                        vst = sst;
                        haveValue = true;
                    }
                } else if (!ec.skip(ktype)) {
                    return malformed(key, kat, "unreadable unknown field");
                }
            }
            Feature f;
            if (haveValue) KILN_TRY(decodeFeature(value, vst, f, key));
            ex.features[key] = std::move(f);
        }
    }
    return ex;
}

}  // namespace kiln::engine::data
