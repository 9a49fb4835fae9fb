// Attribute values of a case (float, int, bool, string, int list, float list, None).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace hb {

enum class AttrType { none, f, i, b, s, int_list, float_list };

struct AttrValue {
    AttrType type = AttrType::none;
    double f = 0;
    std::int64_t i = 0;
    bool b = false;
    std::string s;
    std::vector<std::int64_t> ints;
    std::vector<double> floats;

    static AttrValue of_float(double v) { AttrValue a; a.type = AttrType::f; a.f = v; return a; }
    static AttrValue of_int(std::int64_t v) { AttrValue a; a.type = AttrType::i; a.i = v; return a; }
    static AttrValue of_bool(bool v) { AttrValue a; a.type = AttrType::b; a.b = v; return a; }
    static AttrValue of_string(std::string v) { AttrValue a; a.type = AttrType::s; a.s = std::move(v); return a; }

    double as_float() const;      // float, int or bool
    std::int64_t as_int() const;  // int, bool or integral float
    bool as_bool() const;
    std::string to_string() const;  // YAML flow form: 1.5, -1, true, none, "tanh", [1, 2]
    bool operator==(const AttrValue& other) const;
};

using AttrMap = std::map<std::string, AttrValue>;

std::string attrs_to_string(const AttrMap& attrs);  // "{base: 2.0, scale: 1.0}"
AttrType parse_attr_type(const std::string& name, bool& ok);

}  // namespace hb
