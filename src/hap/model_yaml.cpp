#include "hap/model_yaml.hpp"

#include <algorithm>

#include "core/yaml_util.hpp"

namespace hb {

void yaml_check_keys(const std::string& file, const YAML::Node& map, const std::string& where,
                     std::initializer_list<std::string_view> allowed) {
    for (const auto& kv : map) {
        const std::string key = kv.first.Scalar();
        if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
            std::string list;
            for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
            yaml_fail(file, kv.first, where + ": unknown field '" + key + "' (allowed: " + list + ")");
        }
    }
}

YAML::Node yaml_require(const std::string& file, const YAML::Node& parent, const std::string& key,
                        const std::string& where) {
    YAML::Node node = parent[key];
    if (!node || node.IsNull()) yaml_fail(file, parent, "missing field '" + where + key + "'");
    return node;
}

std::string yaml_optional_string(const std::string& file, const YAML::Node& parent,
                                 const std::string& key, const std::string& where) {
    YAML::Node node = parent[key];
    if (!node || node.IsNull()) return {};
    return yaml_string(file, node, where + key);
}

Figure yaml_figure(const std::string& file, const YAML::Node& node, const std::string& field) {
    if (!node.IsMap()) yaml_fail(file, node, field + ": expected {value: <number>, source: <text>}");
    yaml_check_keys(file, node, field, {"value", "source"});
    Figure f;
    f.value = yaml_number(file, yaml_require(file, node, "value", field + "."), field + ".value");
    f.source = yaml_string(file, yaml_require(file, node, "source", field + "."), field + ".source");
    return f;
}

DType yaml_dtype(const std::string& file, const YAML::Node& node, const std::string& field) {
    DType t;
    const std::string text = yaml_string(file, node, field);
    if (!try_parse_dtype(text, t)) yaml_fail(file, node, field + ": unknown dtype '" + text + "'");
    return t;
}

}  // namespace hb
