// SPDX-License-Identifier: Apache-2.0
// Attribute getters, printing and validation against specs.
#include "engine/graph/attr.h"

#include <cmath>
#include <sstream>

namespace kiln::engine {
namespace {
const AttrValue& lookup(const std::map<std::string, AttrValue>& m, const std::string& name) {
    static const AttrValue kNone = false;
    auto it = m.find(name);
    assert(it != m.end() && "attribute missing after validation");
    return it == m.end() ? kNone : it->second;
}

std::string fmtNumber(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
}
}  // namespace

bool AttrMap::getBool(const std::string& n) const { return std::get<bool>(lookup(m_values, n)); }
int64_t AttrMap::getInt(const std::string& n) const { return std::get<int64_t>(lookup(m_values, n)); }
double AttrMap::getFloat(const std::string& n) const { return std::get<double>(lookup(m_values, n)); }
const std::string& AttrMap::getString(const std::string& n) const {
    return std::get<std::string>(lookup(m_values, n));
}
const std::vector<int64_t>& AttrMap::getInts(const std::string& n) const {
    return std::get<std::vector<int64_t>>(lookup(m_values, n));
}

const char* attrTypeName(AttrType t) {
    switch (t) {
    case AttrType::Bool: return "bool";
    case AttrType::Int: return "int";
    case AttrType::Float: return "float";
    case AttrType::String: return "string";
    case AttrType::IntList: return "int list";
    }
    return "?";
}

std::string attrValueToString(const AttrValue& v) {
    struct V {
        std::string operator()(bool b) const { return b ? "true" : "false"; }
        std::string operator()(int64_t i) const { return std::to_string(i); }
        std::string operator()(double d) const { return fmtNumber(d); }
        std::string operator()(const std::string& s) const { return '"' + s + '"'; }
        std::string operator()(const std::vector<int64_t>& l) const {
            std::string s = "[";
            for (size_t i = 0; i < l.size(); ++i) s += (i ? "," : "") + std::to_string(l[i]);
            return s + "]";
        }
    };
    return std::visit(V{}, v);
}

Result<AttrValue> coerceAttr(const AttrSpec& spec, const AttrValue& value, const std::string& node) {
    auto bad = [&](const std::string& why) {
        return Error(ErrorCode::BadAttribute,
                     "attribute \"" + spec.name + "\" of node \"" + node + "\" " + why)
            .withNode(node)
            .with("attribute", spec.name)
            .with("reason", why);
    };
    auto checkRange = [&](double x) -> std::optional<Error> {
        if (std::isnan(x)) return bad("is not a number");
        if (spec.min && x < *spec.min) return bad("must be at least " + fmtNumber(*spec.min) + ", got " + fmtNumber(x));
        if (spec.max && x > *spec.max) return bad("must be at most " + fmtNumber(*spec.max) + ", got " + fmtNumber(x));
        return std::nullopt;
    };
    AttrValue v = value;
    switch (spec.type) {
    case AttrType::Bool:
        if (!std::holds_alternative<bool>(v)) return bad("must be true or false");
        break;
    case AttrType::Int:
        if (auto* d = std::get_if<double>(&v); d && std::floor(*d) == *d) v = static_cast<int64_t>(*d);
        if (!std::holds_alternative<int64_t>(v)) return bad("must be an integer");
        if (auto e = checkRange(static_cast<double>(std::get<int64_t>(v)))) return *e;
        break;
    case AttrType::Float:
        if (auto* i = std::get_if<int64_t>(&v)) v = static_cast<double>(*i);
        if (!std::holds_alternative<double>(v)) return bad("must be a number");
        if (auto e = checkRange(std::get<double>(v))) return *e;
        break;
    case AttrType::String: {
        if (!std::holds_alternative<std::string>(v)) return bad("must be a string");
        if (!spec.choices.empty()) {
            const auto& s = std::get<std::string>(v);
            bool found = false;
            std::string list;
            for (const auto& c : spec.choices) {
                found = found || c == s;
                list += (list.empty() ? "" : ", ") + c;
            }
            if (!found) return bad("must be one of " + list + ", got \"" + s + "\"");
        }
        break;
    }
    case AttrType::IntList: {
        if (auto* i = std::get_if<int64_t>(&v); i && spec.listLength > 0)
            v = std::vector<int64_t>(static_cast<size_t>(spec.listLength), *i);
        if (!std::holds_alternative<std::vector<int64_t>>(v)) return bad("must be a list of integers");
        const auto& l = std::get<std::vector<int64_t>>(v);
        // An empty default list means "unset" (e.g. pooling strides default to the pool size);
        // writing it back explicitly must stay valid.
        bool unsetDefault = l.empty() && std::holds_alternative<std::vector<int64_t>>(spec.defaultValue) &&
                            std::get<std::vector<int64_t>>(spec.defaultValue).empty() && !spec.required;
        if (spec.listLength > 0 && static_cast<int>(l.size()) != spec.listLength && !unsetDefault)
            return bad("must have " + std::to_string(spec.listLength) + " elements, got " + std::to_string(l.size()));
        for (int64_t x : l)
            if (auto e = checkRange(static_cast<double>(x))) return *e;
        break;
    }
    }
    return v;
}

}  // namespace kiln::engine
