// YAML pieces shared by the hardware model files and the op-cost files they are built from:
// a figure with its source, a dtype key, and a check that every key is known.
#pragma once

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <string>
#include <string_view>

#include "core/dtype.hpp"
#include "hap/hardware_model.hpp"

namespace hb {

// {value: <number>, source: <text>}
Figure yaml_figure(const std::string& file, const YAML::Node& node, const std::string& field);
DType yaml_dtype(const std::string& file, const YAML::Node& node, const std::string& field);
// Rejects keys the schema does not know, so a typo never silently drops a figure.
void yaml_check_keys(const std::string& file, const YAML::Node& map, const std::string& where,
                     std::initializer_list<std::string_view> allowed);
// The child `key` of `parent`, or an error naming the field `where + key`.
YAML::Node yaml_require(const std::string& file, const YAML::Node& parent, const std::string& key,
                        const std::string& where);
std::string yaml_optional_string(const std::string& file, const YAML::Node& parent,
                                 const std::string& key, const std::string& where);

}  // namespace hb
