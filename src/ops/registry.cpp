#include "ops/registry.hpp"

#include <algorithm>
#include <map>

#include "ops/register.hpp"

namespace hb {

namespace {
std::map<std::string, const Operator*>& table() {
    static std::map<std::string, const Operator*> operators;
    return operators;
}
}  // namespace

bool register_operator(const Operator* op) {
    table()[op->name()] = op;
    return true;
}

const Operator* find_operator(const std::string& name) {
    auto it = table().find(name);
    return it == table().end() ? nullptr : it->second;
}

std::vector<const Operator*> all_operators() {
    std::vector<const Operator*> out;
    for (const auto& [name, op] : table()) out.push_back(op);
    std::stable_sort(out.begin(), out.end(),
                     [](const Operator* a, const Operator* b) { return a->level() < b->level(); });
    return out;
}

std::string known_operator_names() {
    std::string out;
    for (const auto* op : all_operators()) out += (out.empty() ? "" : ", ") + op->name();
    return out;
}

}  // namespace hb
