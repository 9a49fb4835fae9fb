#include "ops/problem.hpp"

#include "core/error.hpp"

namespace hb {

const AttrValue& Problem::attr(const std::string& name) const {
    auto it = attrs.find(name);
    if (it == attrs.end()) throw Error(context() + "attribute '" + name + "' is not set");
    return it->second;
}

double Problem::attr_float(const std::string& name) const { return attr(name).as_float(); }
std::int64_t Problem::attr_int(const std::string& name) const { return attr(name).as_int(); }
bool Problem::attr_bool(const std::string& name) const { return attr(name).as_bool(); }

std::string Problem::attr_string(const std::string& name) const {
    const auto& a = attr(name);
    if (a.type != AttrType::s) throw Error(context() + "attribute '" + name + "' is not a string");
    return a.s;
}

const ArgSpec& Problem::input(const std::string& name) const {
    for (const auto& a : inputs)
        if (a.name == name) return a;
    throw Error(context() + "no input named '" + name + "'");
}

std::string Problem::context() const { return spec.op + " case " + std::to_string(spec.case_id) + ": "; }

}  // namespace hb
