#include "hap/convention_name.hpp"

#include "core/error.hpp"

namespace hb {

namespace {
struct ConventionName {
    Convention convention;
    std::string_view name;
};
constexpr ConventionName convention_names[] = {{Convention::hapbench, "hapbench"},
                                               {Convention::cann_bench, "cann-bench"}};
}  // namespace

std::string_view convention_name(Convention c) {
    for (const auto& e : convention_names)
        if (e.convention == c) return e.name;
    return "?";
}

std::string known_convention_names() {
    std::string out;
    for (const auto& e : convention_names) out += (out.empty() ? "" : ", ") + std::string(e.name);
    return out;
}

Convention parse_convention(std::string_view name) {
    for (const auto& e : convention_names)
        if (e.name == name) return e.convention;
    throw Error("unknown T_HW convention '" + std::string(name) + "' (known: " + known_convention_names() +
                "; docs/hap.md explains both)");
}

}  // namespace hb
