#include "ops/work_model.hpp"

namespace hb {

namespace {
struct ClassName {
    OpClass c;
    std::string_view name;
};
constexpr ClassName class_names[] = {
    {OpClass::add, "add"},   {OpClass::mul, "mul"},   {OpClass::fma, "fma"},
    {OpClass::div, "div"},   {OpClass::sqrt, "sqrt"}, {OpClass::exp, "exp"},
    {OpClass::log, "log"},   {OpClass::tanh, "tanh"}, {OpClass::erf, "erf"},
    {OpClass::pow, "pow"},   {OpClass::cmp, "cmp"},   {OpClass::select, "select"},
    {OpClass::cast, "cast"}, {OpClass::abs, "abs"},
};
}  // namespace

std::string_view op_class_name(OpClass c) {
    for (const auto& e : class_names)
        if (e.c == c) return e.name;
    return "?";
}

bool parse_op_class(std::string_view name, OpClass& out) {
    for (const auto& e : class_names)
        if (e.name == name) {
            out = e.c;
            return true;
        }
    return false;
}

}  // namespace hb
