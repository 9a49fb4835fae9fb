#include "spec/proto.hpp"

#include "core/yaml_util.hpp"

namespace hb {

const AttrDef* Proto::find_attr(const std::string& name) const {
    for (const auto& a : attrs)
        if (a.name == name) return &a;
    return nullptr;
}

namespace {

std::vector<DType> parse_dtype_list(const std::string& file, const YAML::Node& node,
                                    const std::string& field) {
    std::vector<DType> out;
    if (!node) return out;
    if (!node.IsSequence()) yaml_fail(file, node, field + ": expected a list of dtypes");
    for (const auto& item : node) {
        DType t;
        const std::string name = yaml_string(file, item, field);
        if (!try_parse_dtype(name, t)) yaml_fail(file, item, field + ": unknown dtype '" + name + "'");
        out.push_back(t);
    }
    return out;
}

bool yaml_bool(const std::string& file, const YAML::Node& node, const std::string& field,
               bool fallback) {
    if (!node) return fallback;
    try {
        return node.as<bool>();
    } catch (const YAML::Exception&) {
        yaml_fail(file, node, field + ": expected true or false");
    }
}

}  // namespace

Proto load_proto(const std::string& path, const std::string& op_dir_name, int level) {
    YAML::Node root = yaml_load_file(path);
    const YAML::Node op = root["operator"];
    if (!op || !op.IsMap()) yaml_fail(path, root, "missing top-level 'operator' mapping");
    Proto proto;
    proto.op = op_dir_name;
    proto.level = level;
    proto.file = path;
    proto.display_name = op["name"] ? yaml_string(path, op["name"], "operator.name") : op_dir_name;
    if (op["category"]) proto.category = yaml_string(path, op["category"], "operator.category");
    if (op["schema"]) proto.schema = yaml_string(path, op["schema"], "operator.schema");

    if (const auto attrs = op["attrs"]; attrs && !attrs.IsNull()) {
        if (!attrs.IsSequence()) yaml_fail(path, attrs, "operator.attrs: expected a list");
        for (const auto& a : attrs) {
            AttrDef def;
            def.name = yaml_string(path, a["name"], "operator.attrs[].name");
            const std::string field = "operator.attrs." + def.name;
            if (a["type"]) {
                bool ok = false;
                def.type = parse_attr_type(yaml_string(path, a["type"], field + ".type"), ok);
                if (!ok) yaml_fail(path, a["type"], field + ".type: unknown attribute type '" + a["type"].Scalar() + "'");
            }
            def.required = yaml_bool(path, a["required"], field + ".required", false);
            if (a["default"]) def.default_value = yaml_attr(path, a["default"], field + ".default", def.type);
            proto.attrs.push_back(std::move(def));
        }
    }

    const auto inputs = op["inputs"];
    if (!inputs || !inputs.IsSequence()) yaml_fail(path, op, "operator.inputs: expected a list");
    for (const auto& in : inputs) {
        InputDef def;
        def.name = yaml_string(path, in["name"], "operator.inputs[].name");
        const std::string field = "operator.inputs." + def.name;
        def.dtypes = parse_dtype_list(path, in["dtype"], field + ".dtype");
        def.is_list = yaml_bool(path, in["is_list"], field + ".is_list", false);
        def.optional = yaml_bool(path, in["optional"], field + ".optional", false);
        proto.inputs.push_back(std::move(def));
    }

    const auto outputs = op["outputs"];
    if (!outputs || !outputs.IsSequence()) yaml_fail(path, op, "operator.outputs: expected a list");
    for (const auto& out : outputs) {
        OutputDef def;
        def.name = yaml_string(path, out["name"], "operator.outputs[].name");
        const std::string field = "operator.outputs." + def.name;
        def.dtypes = parse_dtype_list(path, out["dtype"], field + ".dtype");
        def.is_list = yaml_bool(path, out["is_list"], field + ".is_list", false);
        def.compare = yaml_bool(path, out["compare"], field + ".compare", true);
        if (const auto ig = out["index_gather"]) {
            IndexGather g;
            g.input = yaml_string(path, ig["input"], field + ".index_gather.input");
            if (ig["dim_attr"]) g.dim_attr = yaml_string(path, ig["dim_attr"], field + ".index_gather.dim_attr");
            if (ig["value_output"]) g.value_output = yaml_string(path, ig["value_output"], field + ".index_gather.value_output");
            if (ig["value_reduce"]) g.value_reduce = yaml_string(path, ig["value_reduce"], field + ".index_gather.value_reduce");
            if (ig["keepdim_attr"]) g.keepdim_attr = yaml_string(path, ig["keepdim_attr"], field + ".index_gather.keepdim_attr");
            g.distinct = yaml_bool(path, ig["distinct"], field + ".index_gather.distinct", false);
            def.index_gather = g;
        }
        proto.outputs.push_back(std::move(def));
    }

    // The schema is authoritative for argument kinds: `Tensor[] w` is a list, `Tensor? b`
    // optional (the reference data leaves is_list/optional out for some of them).
    if (!proto.schema.empty()) {
        const auto open = proto.schema.find('('), close = proto.schema.find(')');
        if (open != std::string::npos && close != std::string::npos && close > open) {
            std::string args = proto.schema.substr(open + 1, close - open - 1);
            std::size_t start = 0;
            while (start < args.size()) {
                std::size_t end = args.find(',', start);
                if (end == std::string::npos) end = args.size();
                std::string arg = args.substr(start, end - start);
                start = end + 1;
                const auto first = arg.find_first_not_of(' ');
                if (first == std::string::npos) continue;
                arg = arg.substr(first);
                const auto space = arg.find(' ');
                if (space == std::string::npos || arg.rfind("Tensor", 0) != 0) continue;
                const std::string type = arg.substr(0, space);
                std::string name = arg.substr(space + 1);
                name = name.substr(0, name.find_first_of(" ="));
                for (auto& in : proto.inputs) {
                    if (in.name != name) continue;
                    if (type.find("[]") != std::string::npos) in.is_list = true;
                    if (type.back() == '?') in.optional = true;
                }
            }
        }
    }

    if (const auto taus = op["precision_thresholds"]; taus && !taus.IsNull()) {
        if (!taus.IsMap()) yaml_fail(path, taus, "operator.precision_thresholds: expected a mapping dtype: tau");
        for (const auto& kv : taus) {
            const std::string name = kv.first.Scalar();
            DType t;
            if (!try_parse_dtype(name, t))
                yaml_fail(path, kv.first, "operator.precision_thresholds: unknown dtype '" + name + "'");
            const double tau = yaml_number(path, kv.second, "operator.precision_thresholds." + name);
            if (!(tau >= 0)) yaml_fail(path, kv.second, "operator.precision_thresholds." + name + ": must be >= 0");
            proto.tau_overrides[t] = tau;
        }
    }
    return proto;
}

}  // namespace hb
