// SPDX-License-Identifier: Apache-2.0
// Typed node attributes: values, and the specs (type, default, range, choices, doc) that the op
// table declares for each attribute. The editor's inspector is generated from the specs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "engine/core/error.h"

namespace kiln::engine {

enum class AttrType { Bool, Int, Float, String, IntList };

using AttrValue = std::variant<bool, int64_t, double, std::string, std::vector<int64_t>>;

struct AttrSpec {
    std::string name;      // Keras attribute name, e.g. "units", "kernel_size"
    AttrType type;
    AttrValue defaultValue;
    bool required = false; // no default: the user must set it
    std::optional<double> min;   // inclusive bounds for Int/Float and each IntList element
    std::optional<double> max;
    std::vector<std::string> choices;  // allowed values for String
    int listLength = 0;    // IntList: required length (0 = any); a bare Int is broadcast to it
    std::string doc;       // one line
};

// Attribute values of one node, keyed by name, after validation against the specs.
class AttrMap {
public:
    void set(const std::string& name, AttrValue v) { m_values[name] = std::move(v); }
    bool has(const std::string& name) const { return m_values.count(name) != 0; }
    const std::map<std::string, AttrValue>& values() const { return m_values; }

    // Typed getters: the op table guarantees types after validation.
    bool getBool(const std::string& name) const;
    int64_t getInt(const std::string& name) const;
    double getFloat(const std::string& name) const;
    const std::string& getString(const std::string& name) const;
    const std::vector<int64_t>& getInts(const std::string& name) const;

    bool operator==(const AttrMap&) const = default;

private:
    std::map<std::string, AttrValue> m_values;
};

const char* attrTypeName(AttrType t);
std::string attrValueToString(const AttrValue& v);

// Checks `value` against `spec`, converting where lossless (an Int for a Float, an Int broadcast to
// an IntList of listLength). Errors name the node and the attribute.
Result<AttrValue> coerceAttr(const AttrSpec& spec, const AttrValue& value, const std::string& node);

}  // namespace kiln::engine
