#include "hap/cpu_op_costs.hpp"

#include <cmath>

#include "core/build_info.hpp"
#include "hap/model_yaml.hpp"
#include "core/yaml_util.hpp"

namespace hb {

namespace {
void check_positive(const std::string& file, const YAML::Node& node, const Figure& f, const std::string& field) {
    if (!std::isfinite(f.value) || f.value <= 0) yaml_fail(file, node, field + ": must be a positive finite number");
}
}  // namespace

std::string default_cpu_op_costs_path() { return source_dir() + "/hardware/op-costs/cpu.yaml"; }

CpuOpCosts load_cpu_op_costs(const std::string& path) {
    const YAML::Node root = yaml_load_file(path);
    if (!root.IsMap()) yaml_fail(path, root, "an op-cost file must be a YAML map");
    yaml_check_keys(path, root, "op costs", {"flops_per_mac", "runs_as", "runs_as_source", "vector_flops_per_element"});
    CpuOpCosts costs;
    costs.source_path = path;
    const YAML::Node mac = yaml_require(path, root, "flops_per_mac", "");
    costs.flops_per_mac = yaml_figure(path, mac, "flops_per_mac");
    check_positive(path, mac, costs.flops_per_mac, "flops_per_mac");
    if (const YAML::Node runs_as = root["runs_as"]) {
        if (!runs_as.IsMap()) yaml_fail(path, runs_as, "runs_as: expected a map from dtype to dtype");
        for (const auto& kv : runs_as)
            costs.runs_as[yaml_dtype(path, kv.first, "runs_as")] = yaml_dtype(path, kv.second, "runs_as");
        costs.runs_as_source = yaml_string(path, yaml_require(path, root, "runs_as_source", ""), "runs_as_source");
    }
    const YAML::Node per_element = yaml_require(path, root, "vector_flops_per_element", "");
    if (!per_element.IsMap()) yaml_fail(path, per_element, "vector_flops_per_element: expected a map");
    for (const auto& kv : per_element) {
        OpClass c;
        const std::string name = yaml_string(path, kv.first, "vector_flops_per_element");
        if (!parse_op_class(name, c)) yaml_fail(path, kv.first, "vector_flops_per_element: unknown op class '" + name + "'");
        const std::string field = "vector_flops_per_element." + name;
        costs.vector_flops_per_element[c] = yaml_figure(path, kv.second, field);
        check_positive(path, kv.second, costs.vector_flops_per_element[c], field);
    }
    // A class without a cost would make the calibrated model refuse every operator using it.
    for (OpClass c : all_op_classes)
        if (!costs.vector_flops_per_element.count(c))
            yaml_fail(path, per_element, "vector_flops_per_element: missing op class '" + std::string(op_class_name(c)) + "'");
    return costs;
}

}  // namespace hb
