// yaml-cpp helpers that turn every malformed field into an error naming file, line and field.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "core/error.hpp"
#include "core/attr.hpp"

namespace hb {

std::string yaml_where(const std::string& file, const YAML::Node& node);
[[noreturn]] void yaml_fail(const std::string& file, const YAML::Node& node,
                            const std::string& message);
YAML::Node yaml_load_file(const std::string& path);

double yaml_number(const std::string& file, const YAML::Node& node, const std::string& field);
std::int64_t yaml_int(const std::string& file, const YAML::Node& node, const std::string& field);
std::string yaml_string(const std::string& file, const YAML::Node& node, const std::string& field);
// A scalar or list as an attribute value; the declared type (when known) guides parsing.
AttrValue yaml_attr(const std::string& file, const YAML::Node& node, const std::string& field,
                    AttrType declared);

}  // namespace hb
