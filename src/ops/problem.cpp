#include "ops/problem.hpp"

#include <fmt/format.h>

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

std::string Problem::canonical() const {
    std::string text = fmt::format("op={} case={}\n", spec.op, spec.case_id);
    for (std::size_t a = 0; a < inputs.size(); ++a) {
        const ArgSpec& arg = inputs[a];
        text += fmt::format("input {} present={} list={}", arg.name, arg.present, arg.is_list);
        for (const auto& t : arg.tensors) {
            text += fmt::format(" {}[", dtype_name(t.dtype));
            for (auto d : t.shape) text += fmt::format("{},", d);
            text += "]";
        }
        const auto& range = a < spec.inputs.size() ? spec.inputs[a].range : std::nullopt;
        text += range ? fmt::format(" range=[{:a},{:a}]\n", range->lo, range->hi) : std::string(" range=default\n");
    }
    for (const auto& [name, value] : attrs) {
        text += "attr " + name + "=";
        switch (value.type) {
            case AttrType::f: text += fmt::format("{:a}", value.f); break;
            case AttrType::float_list:
                for (double f : value.floats) text += fmt::format("{:a},", f);
                break;
            default: text += value.to_string(); break;
        }
        text += "\n";
    }
    return text;
}

}  // namespace hb
