#include "core/yaml_util.hpp"

#include <cmath>
#include <fstream>
#include <limits>

namespace hb {

std::string yaml_where(const std::string& file, const YAML::Node& node) {
    if (node.Mark().line >= 0) return file + ":" + std::to_string(node.Mark().line + 1);
    return file;
}

void yaml_fail(const std::string& file, const YAML::Node& node, const std::string& message) {
    throw Error(yaml_where(file, node) + ": " + message);
}

YAML::Node yaml_load_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw Error(path + ": cannot open file");
    try {
        return YAML::Load(in);
    } catch (const YAML::Exception& e) {
        throw Error(path + ":" + std::to_string(e.mark.line + 1) + ": invalid YAML: " + e.msg);
    }
}

namespace {
bool parse_special_float(const std::string& s, double& out) {
    std::string t;
    for (char c : s) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (t == ".nan" || t == "nan") { out = std::numeric_limits<double>::quiet_NaN(); return true; }
    if (t == ".inf" || t == "inf" || t == "+.inf" || t == "+inf") { out = INFINITY; return true; }
    if (t == "-.inf" || t == "-inf") { out = -INFINITY; return true; }
    return false;
}
}  // namespace

double yaml_number(const std::string& file, const YAML::Node& node, const std::string& field) {
    if (!node || !node.IsScalar()) yaml_fail(file, node, field + ": expected a number");
    const std::string text = node.Scalar();
    double v;
    if (parse_special_float(text, v)) return v;
    try {
        std::size_t used = 0;
        v = std::stod(text, &used);
        if (used != text.size()) throw std::invalid_argument(text);
        return v;
    } catch (const std::exception&) {
        yaml_fail(file, node, field + ": expected a number, got '" + text + "'");
    }
}

std::int64_t yaml_int(const std::string& file, const YAML::Node& node, const std::string& field) {
    if (!node || !node.IsScalar()) yaml_fail(file, node, field + ": expected an integer");
    const std::string text = node.Scalar();
    try {
        std::size_t used = 0;
        long long v = std::stoll(text, &used);
        if (used != text.size()) throw std::invalid_argument(text);
        return v;
    } catch (const std::exception&) {
        yaml_fail(file, node, field + ": expected an integer, got '" + text + "'");
    }
}

std::string yaml_string(const std::string& file, const YAML::Node& node, const std::string& field) {
    if (!node || !node.IsScalar()) yaml_fail(file, node, field + ": expected a string");
    return node.Scalar();
}

AttrValue yaml_attr(const std::string& file, const YAML::Node& node, const std::string& field,
                    AttrType declared) {
    if (!node || node.IsNull()) return AttrValue{};
    if (node.IsSequence()) {
        AttrValue v;
        bool all_int = declared != AttrType::float_list;
        for (const auto& item : node) {
            if (!item.IsScalar()) yaml_fail(file, item, field + ": nested lists are not attributes");
            double d = yaml_number(file, item, field);
            v.floats.push_back(d);
            if (item.Scalar().find_first_of(".eEn") != std::string::npos) all_int = false;
        }
        if (all_int) {
            v.type = AttrType::int_list;
            for (double d : v.floats) v.ints.push_back(static_cast<std::int64_t>(d));
            v.floats.clear();
        } else {
            v.type = AttrType::float_list;
        }
        return v;
    }
    if (!node.IsScalar()) yaml_fail(file, node, field + ": expected a scalar or a list");
    const std::string text = node.Scalar();
    std::string lower;
    for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (node.Tag() != "!" && (lower == "true" || lower == "false"))
        return AttrValue::of_bool(lower == "true");
    if (node.Tag() == "!" || declared == AttrType::s) return AttrValue::of_string(text);  // quoted
    if (lower == "none" || lower == "null" || lower == "~") return AttrValue{};
    double d;
    if (parse_special_float(text, d)) return AttrValue::of_float(d);
    try {
        std::size_t used = 0;
        long long iv = std::stoll(text, &used);
        if (used == text.size()) {
            if (declared == AttrType::f) return AttrValue::of_float(static_cast<double>(iv));
            return AttrValue::of_int(iv);
        }
        d = std::stod(text, &used);
        if (used == text.size()) {
            if (declared == AttrType::i && std::nearbyint(d) == d)
                return AttrValue::of_int(static_cast<std::int64_t>(d));
            return AttrValue::of_float(d);
        }
    } catch (const std::exception&) {
    }
    return AttrValue::of_string(text);
}

}  // namespace hb
