#include "hap/convention.hpp"

#include <algorithm>
#include <cmath>

#include "core/build_info.hpp"
#include "core/error.hpp"
#include "hap/model_yaml.hpp"
#include "ops/formula_count.hpp"
#include "core/yaml_util.hpp"

namespace hb {

namespace {

// A per-core unit's figure is one instance's; the convention prices the whole chip.
double chip_scale(const HardwareModel& model, const ExecutionUnit& unit) {
    return unit.scope == UnitScope::core ? static_cast<double>(model.cores) * unit.instances_per_core : 1.0;
}

// The unit whose rate formula work is priced at when the model states no convention rate:
// the one serving vector work that prices an add (on NVIDIA the FP32 pipe, not the SFU).
const ExecutionUnit* vector_unit(const HardwareModel& model) {
    for (const auto& u : model.units)
        if (u.serves_kind(WorkKind::vector) && u.vector_flops_per_element.count(OpClass::add)) return &u;
    return nullptr;
}

const ExecutionUnit* matrix_unit(const HardwareModel& model) {
    for (const auto& u : model.units)
        if (u.serves_kind(WorkKind::matrix)) return &u;
    return nullptr;
}

}  // namespace

std::string default_cann_bench_costs_path() { return source_dir() + "/hardware/conventions/cann-bench.yaml"; }

ConventionCosts load_convention_costs(const std::string& path) {
    const YAML::Node root = yaml_load_file(path);
    if (!root.IsMap()) yaml_fail(path, root, "a convention file must be a YAML map");
    yaml_check_keys(path, root, "convention", {"name", "description", "costs"});
    ConventionCosts costs;
    costs.source_path = path;
    costs.name = yaml_string(path, yaml_require(path, root, "name", ""), "name");
    try {
        parse_convention(costs.name);
    } catch (const Error& e) {
        yaml_fail(path, root["name"], std::string("name: ") + e.what());
    }
    const YAML::Node table = yaml_require(path, root, "costs", "");
    if (!table.IsMap()) yaml_fail(path, table, "costs: expected a map from op class to figure");
    for (const auto& kv : table) {
        OpClass c;
        const std::string name = yaml_string(path, kv.first, "costs");
        if (!parse_op_class(name, c)) yaml_fail(path, kv.first, "costs: unknown op class '" + name + "'");
        const Figure f = yaml_figure(path, kv.second, "costs." + name);
        if (!std::isfinite(f.value) || f.value <= 0) yaml_fail(path, kv.second, "costs." + name + ": must be a positive finite number");
        if (f.source.empty()) yaml_fail(path, kv.second, "costs." + name + ": every cost needs a non-empty source");
        costs.cost[c] = f;
    }
    // An operator counting a class the table does not price would have no time.
    for (OpClass c : all_op_classes)
        if (!costs.cost.count(c))
            yaml_fail(path, table, "costs: missing op class '" + std::string(op_class_name(c)) + "'");
    return costs;
}

const ConventionCosts& cann_bench_costs() {
    static const ConventionCosts costs = load_convention_costs(default_cann_bench_costs_path());
    return costs;
}

ConventionRates cann_bench_rates(const HardwareModel& model) {
    ConventionRates r;
    for (const auto& u : model.units) {
        if (!u.serves_kind(WorkKind::bytes_read)) continue;
        const Figure* rate = u.byte_rate_for(WorkKind::bytes_read);
        const double chip = rate ? rate->value * chip_scale(model, u) : 0;
        if (chip > r.read_bytes_per_s) {
            r.read_bytes_per_s = chip;
            r.read_unit = u.name;
            r.read_group = u.group;
        }
    }
    if (r.read_bytes_per_s <= 0)
        throw Error("hardware model '" + model.name + "' has no unit serving bytes_read: the cann-bench convention "
                    "charges every input's bytes at the read bandwidth");
    const ExecutionUnit* v = vector_unit(model);
    r.vector_unit = v ? v->name : "vector";
    r.vector_group = v ? v->group : "Vector";
    return r;
}

double cann_bench_vector_ops_per_s(const HardwareModel& model, DType dtype) {
    const std::string convention(convention_name(Convention::cann_bench));
    auto stated = model.convention_vector_ops_per_s.find(convention);
    if (stated != model.convention_vector_ops_per_s.end()) {
        auto it = stated->second.find(dtype);
        if (it == stated->second.end()) {
            std::string known;
            for (const auto& [t, f] : stated->second) known += (known.empty() ? "" : ", ") + std::string(dtype_name(t));
            throw Error("hardware model '" + model.name + "' states cann-bench rates for " + known + " but not for " +
                        std::string(dtype_name(dtype)) + " (conventions: cann-bench: vector_ops_per_s in " +
                        (model.source_path.empty() ? model.name : model.source_path) + ")");
        }
        return it->second.value;
    }
    const ExecutionUnit* v = vector_unit(model);
    if (!v)
        throw Error("hardware model '" + model.name + "' has no vector unit pricing an add and states no cann-bench "
                    "rates: nothing to price formula operations at");
    const Figure* rate = v->rate_for(dtype);
    if (!rate)
        throw Error("hardware model '" + model.name + "': vector unit '" + v->name + "' has no rate for " +
                    std::string(dtype_name(dtype)) + ", which the cann-bench convention needs for formula work in it");
    return rate->value * chip_scale(model, *v) / v->vector_flops_per_element.at(OpClass::add).value;
}

HapResult solve_cann_bench(const WorkModel& work, double input_bytes, const HardwareModel& model,
                           const ConventionCosts& costs) {
    if (work.formula.empty() && work.contractions.empty() && work.matrix.empty())
        throw Error("the work model counts no formula operations (WorkModel::formula) and no matrix work, which the "
                    "cann-bench convention prices: the operator must count its formula (docs/hap.md, \"Adding an "
                    "operator under both conventions\")");
    const ConventionRates rates = cann_bench_rates(model);
    HapResult r;
    const double read_us = input_bytes / rates.read_bytes_per_s * 1e6;
    r.unit_us[rates.read_unit] = read_us;
    double vector_us = 0;
    for (const auto& term : work.formula) {
        auto cost = costs.cost.find(term.op_class);
        if (cost == costs.cost.end())
            throw Error("convention '" + costs.name + "' has no cost for op class '" +
                        std::string(op_class_name(term.op_class)) + "' (" + costs.source_path + ")");
        vector_us += cost->second.value * term.elements / cann_bench_vector_ops_per_s(model, term.dtype) * 1e6;
    }
    r.unit_us[rates.vector_unit] = vector_us;
    std::string matrix_name, matrix_group;
    if (!work.matrix.empty() || !work.contractions.empty()) {
        const ExecutionUnit* m = matrix_unit(model);
        if (!m) throw Error("hardware model '" + model.name + "' has no unit serving matrix work");
        auto macs_per_s = [&](DType t) {
            const Figure* rate = m->rate_for(t);
            if (!rate)
                throw Error("hardware model '" + model.name + "': matrix unit '" + m->name + "' has no rate for " +
                            std::string(dtype_name(t)));
            return rate->value * chip_scale(model, *m) / m->flops_per_mac->value;
        };
        double matrix_us = 0;
        for (const auto& mw : work.matrix) matrix_us += mw.macs / macs_per_s(mw.dtype) * 1e6;
        for (const auto& c : work.contractions)
            matrix_us += c.batch * static_cast<double>(c.m) * static_cast<double>(c.n) * static_cast<double>(c.k) /
                         macs_per_s(c.dtype) * 1e6;
        matrix_name = m->name;
        matrix_group = m->group;
        r.unit_us[matrix_name] = matrix_us;
    }
    // The largest term binds; ties go to memory, then vector, as the published labels do.
    r.bottleneck_unit = rates.read_unit;
    r.bottleneck_group = rates.read_group;
    double worst = read_us;
    if (vector_us > worst) {
        worst = vector_us;
        r.bottleneck_unit = rates.vector_unit;
        r.bottleneck_group = rates.vector_group;
    }
    if (!matrix_name.empty() && r.unit_us[matrix_name] > worst) {
        worst = r.unit_us[matrix_name];
        r.bottleneck_unit = matrix_name;
        r.bottleneck_group = matrix_group;
    }
    r.unfloored_us = worst;
    r.floored = worst < model.floor_us;
    r.t_hw_us = std::max(worst, model.floor_us);
    r.choices_searched = 1;
    return r;
}

HapResult t_hw_under(Convention convention, const Problem& problem, const WorkModel& work,
                     const HardwareModel& model) {
    try {
        if (convention == Convention::hapbench) return solve(work, model);
        return solve_cann_bench(work, all_input_bytes(problem), model, cann_bench_costs());
    } catch (const Error& e) {
        throw Error(problem.context() + e.what(), e.code());
    }
}

}  // namespace hb
