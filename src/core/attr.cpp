#include "core/attr.hpp"

#include <cmath>
#include <sstream>

#include "core/error.hpp"

namespace hb {

double AttrValue::as_float() const {
    switch (type) {
        case AttrType::f: return f;
        case AttrType::i: return static_cast<double>(i);
        case AttrType::b: return b ? 1.0 : 0.0;
        default: throw Error("attribute value " + to_string() + " is not a number");
    }
}

std::int64_t AttrValue::as_int() const {
    switch (type) {
        case AttrType::i: return i;
        case AttrType::b: return b ? 1 : 0;
        case AttrType::f:
            if (std::nearbyint(f) == f) return static_cast<std::int64_t>(f);
            [[fallthrough]];
        default: throw Error("attribute value " + to_string() + " is not an integer");
    }
}

bool AttrValue::as_bool() const {
    if (type == AttrType::b) return b;
    if (type == AttrType::i) return i != 0;
    throw Error("attribute value " + to_string() + " is not a bool");
}

namespace {
std::string format_double(double v) {
    if (std::isnan(v)) return ".nan";
    if (std::isinf(v)) return v > 0 ? ".inf" : "-.inf";
    std::ostringstream os;
    os.precision(17);
    os << v;
    std::string s = os.str();
    if (s.find_first_of(".eE") == std::string::npos) s += ".0";
    return s;
}
}  // namespace

std::string AttrValue::to_string() const {
    switch (type) {
        case AttrType::none: return "null";
        case AttrType::f: return format_double(f);
        case AttrType::i: return std::to_string(i);
        case AttrType::b: return b ? "true" : "false";
        case AttrType::s: return s;
        case AttrType::int_list: {
            std::string out = "[";
            for (std::size_t k = 0; k < ints.size(); ++k) out += (k ? ", " : "") + std::to_string(ints[k]);
            return out + "]";
        }
        case AttrType::float_list: {
            std::string out = "[";
            for (std::size_t k = 0; k < floats.size(); ++k) out += (k ? ", " : "") + format_double(floats[k]);
            return out + "]";
        }
    }
    return "?";
}

bool AttrValue::operator==(const AttrValue& o) const {
    if (type != o.type) return false;
    switch (type) {
        case AttrType::none: return true;
        case AttrType::f: return (std::isnan(f) && std::isnan(o.f)) || f == o.f;
        case AttrType::i: return i == o.i;
        case AttrType::b: return b == o.b;
        case AttrType::s: return s == o.s;
        case AttrType::int_list: return ints == o.ints;
        case AttrType::float_list: return floats == o.floats;
    }
    return false;
}

std::string attrs_to_string(const AttrMap& attrs) {
    std::string out = "{";
    bool first = true;
    for (const auto& [name, value] : attrs) {
        out += (first ? "" : ", ") + name + ": " + value.to_string();
        first = false;
    }
    return out + "}";
}

AttrType parse_attr_type(const std::string& raw, bool& ok) {
    std::string name;
    for (char c : raw) name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    ok = true;
    // The reference data spells types several ways (int, INT, int64_t, ListInt, List[int]).
    if (name == "float" || name == "double" || name == "float32") return AttrType::f;
    if (name == "int" || name == "int64" || name == "int64_t" || name == "int32") return AttrType::i;
    if (name == "bool") return AttrType::b;
    if (name == "str" || name == "string") return AttrType::s;
    if (name == "int[]" || name == "listint" || name == "list[int]" || name == "list_int")
        return AttrType::int_list;
    if (name == "float[]" || name == "listfloat" || name == "list[float]" || name == "list_float")
        return AttrType::float_list;
    if (name == "tensor") return AttrType::none;  // a tensor listed among attrs: no value
    ok = false;
    return AttrType::none;
}

}  // namespace hb
