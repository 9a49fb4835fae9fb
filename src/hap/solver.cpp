#include "hap/solver.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"

namespace hb {

namespace {

constexpr double us_per_s = 1e6;

double parallel_item_count(const WorkModel& work) {
    if (!std::isfinite(work.parallel_items) || work.parallel_items < 1) return 1;
    return std::ceil(work.parallel_items);
}

std::string model_label(const HardwareModel& model) {
    return "hardware model '" + model.name + "'" +
           (model.source_path.empty() ? "" : " (" + model.source_path + ")");
}

const Figure& rate_or_fail(const ExecutionUnit& unit, DType dtype, const HardwareModel& model,
                           const std::string& what) {
    const Figure* rate = unit.rate_for(dtype);
    if (!rate)
        throw Error(model_label(model) + ": unit '" + unit.name + "' serves " + what + " in " +
                    std::string(dtype_name(dtype)) + " but has no flops_per_s entry for it; add one or a runs_as mapping");
    return *rate;
}

// Every piece of work must land on some unit, or T_HW would silently ignore it.
void check_coverage(const WorkModel& work, const HardwareModel& model) {
    auto any_unit = [&](auto&& pred) {
        return std::any_of(model.units.begin(), model.units.end(), pred);
    };
    if (work.bytes_read > 0 && !any_unit([](const ExecutionUnit& u) { return u.serves_kind(WorkKind::bytes_read); }))
        throw Error(model_label(model) + ": no unit serves bytes_read");
    if (work.bytes_written > 0 &&
        !any_unit([](const ExecutionUnit& u) { return u.serves_kind(WorkKind::bytes_written); }))
        throw Error(model_label(model) + ": no unit serves bytes_written");
    for (const auto& v : work.vector) {
        if (v.elements <= 0) continue;
        if (!any_unit([&](const ExecutionUnit& u) {
                return u.serves_kind(WorkKind::vector) && u.vector_flops_per_element.count(v.op_class);
            }))
            throw Error(model_label(model) + ": no unit serves vector op class '" +
                        std::string(op_class_name(v.op_class)) +
                        "'; give a vector unit a vector_flops_per_element entry for it");
    }
    for (const auto& m : work.matrix)
        if (m.macs > 0 && !any_unit([](const ExecutionUnit& u) { return u.serves_kind(WorkKind::matrix); }))
            throw Error(model_label(model) + ": no unit serves matrix MACs");
}

// Seconds of work on one instance of `unit` if it did all of the case alone.
double unit_seconds(const WorkModel& work, const ExecutionUnit& unit, const HardwareModel& model) {
    double s = 0;
    // DRAM and HBM are one bus used in both directions, so reads and writes add on a unit
    // that serves both; engines that move one direction (MTE2, MTE3) serve one kind each.
    double bytes = 0;
    if (unit.serves_kind(WorkKind::bytes_read)) bytes += work.bytes_read;
    if (unit.serves_kind(WorkKind::bytes_written)) bytes += work.bytes_written;
    if (bytes > 0) s += bytes / unit.bytes_per_s->value;
    if (unit.serves_kind(WorkKind::vector)) {
        for (const auto& v : work.vector) {
            auto cost = unit.vector_flops_per_element.find(v.op_class);
            if (cost == unit.vector_flops_per_element.end() || v.elements <= 0) continue;
            const Figure& rate = rate_or_fail(unit, v.dtype, model,
                                              "vector op class '" + std::string(op_class_name(v.op_class)) + "'");
            s += v.elements * cost->second.value / rate.value;
        }
    }
    if (unit.serves_kind(WorkKind::matrix)) {
        for (const auto& m : work.matrix) {
            if (m.macs <= 0) continue;
            const Figure& rate = rate_or_fail(unit, m.dtype, model, "matrix MACs");
            s += m.macs * unit.flops_per_mac->value / rate.value;
        }
    }
    return s;
}

// Units that share hardware form one component; its busy time is the sum of its members.
std::vector<int> share_components(const HardwareModel& model) {
    std::vector<int> parent(model.units.size());
    std::iota(parent.begin(), parent.end(), 0);
    auto find = [&](int i) {
        while (parent[i] != i) i = parent[i] = parent[parent[i]];
        return i;
    };
    for (std::size_t i = 0; i < model.units.size(); ++i)
        for (const auto& other : model.units[i].shares_with)
            for (std::size_t j = 0; j < model.units.size(); ++j)
                if (model.units[j].name == other) parent[find(static_cast<int>(i))] = find(static_cast<int>(j));
    std::vector<int> component(model.units.size());
    for (std::size_t i = 0; i < model.units.size(); ++i) component[i] = find(static_cast<int>(i));
    return component;
}

}  // namespace

std::string ImplementationChoice::describe() const { return "cores=" + std::to_string(cores_used); }

std::vector<ImplementationChoice> implementation_choices(const WorkModel& work, const HardwareModel& model) {
    // A case with fewer independent items than cores cannot use them all.
    const double items = parallel_item_count(work);
    const int max_cores = static_cast<int>(std::min<double>(model.cores, items));
    std::vector<ImplementationChoice> choices;
    // Most cores first, so that ties (a memory-bound case) report the natural choice.
    for (int d = std::max(max_cores, 1); d >= 1; --d) choices.push_back({d});
    return choices;
}

HapResult solve_for_choice(const WorkModel& work, const HardwareModel& model, const ImplementationChoice& choice) {
    const double items = parallel_item_count(work);
    const std::vector<int> component = share_components(model);
    std::vector<double> own_us(model.units.size(), 0);
    std::vector<double> component_us(model.units.size(), 0);
    HapResult r;
    r.choice = choice;
    for (std::size_t i = 0; i < model.units.size(); ++i) {
        const ExecutionUnit& u = model.units[i];
        if (u.serves.empty()) continue;
        const double s = unit_seconds(work, u, model);
        // A per-core figure is for one instance; the busiest of cores_used * instances
        // instances gets ceil(items / instances) of the items.
        double share = 1;
        if (u.scope == UnitScope::core) {
            const double instances = static_cast<double>(choice.cores_used) * u.instances_per_core;
            share = std::ceil(items / instances) / items;
        }
        own_us[i] = s * share * us_per_s;
        component_us[component[i]] += own_us[i];
        r.unit_us[u.name] = own_us[i];
    }
    // The bottleneck is the busiest component (first in file order on ties), and within it
    // the unit with the most work of its own.
    int busiest_component = -1;
    for (std::size_t i = 0; i < model.units.size(); ++i)
        if (!model.units[i].serves.empty() &&
            (busiest_component < 0 || component_us[component[i]] > component_us[busiest_component]))
            busiest_component = component[i];
    int bottleneck = -1;
    for (std::size_t i = 0; i < model.units.size(); ++i)
        if (!model.units[i].serves.empty() && component[i] == busiest_component &&
            (bottleneck < 0 || own_us[i] > own_us[bottleneck]))
            bottleneck = static_cast<int>(i);
    if (bottleneck < 0) throw Error(model_label(model) + ": no unit serves any kind of work");
    const ExecutionUnit& b = model.units[bottleneck];
    r.unfloored_us = component_us[component[bottleneck]];
    r.bottleneck_unit = b.name;
    r.bottleneck_group = b.group;
    r.t_hw_us = std::max(r.unfloored_us, model.floor_us);
    r.floored = model.floor_us > r.unfloored_us;
    return r;
}

HapResult solve(const WorkModel& work, const HardwareModel& model) {
    check_coverage(work, model);
    HapResult best;
    bool have = false;
    for (const auto& choice : implementation_choices(work, model)) {
        HapResult r = solve_for_choice(work, model, choice);
        if (!have || r.unfloored_us < best.unfloored_us) {
            best = std::move(r);
            have = true;
        }
    }
    return best;
}

}  // namespace hb
