#include "hap/hardware_model.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <set>
#include <sstream>

#include "core/build_info.hpp"
#include "core/error.hpp"
#include "hap/convention_name.hpp"
#include "hap/model_yaml.hpp"
#include "core/yaml_util.hpp"

namespace hb {

namespace {

template <typename E>
struct EnumName {
    E value;
    std::string_view name;
};

constexpr EnumName<HardwareKind> kind_names[] = {
    {HardwareKind::cpu, "cpu"}, {HardwareKind::nvidia, "nvidia"}, {HardwareKind::ascend, "ascend"}};
constexpr EnumName<PeakOrigin> origin_names[] = {{PeakOrigin::published, "published"},
                                                 {PeakOrigin::calibrated, "calibrated"}};
constexpr EnumName<UnitScope> scope_names[] = {{UnitScope::chip, "chip"}, {UnitScope::core, "core"}};
constexpr EnumName<WorkKind> work_kind_names[] = {{WorkKind::bytes_read, "bytes_read"},
                                                  {WorkKind::bytes_written, "bytes_written"},
                                                  {WorkKind::vector, "vector"},
                                                  {WorkKind::matrix, "matrix"},
                                                  {WorkKind::l1_to_l0a, "l1_to_l0a"},
                                                  {WorkKind::l1_to_l0b, "l1_to_l0b"},
                                                  {WorkKind::l0c_to_gm, "l0c_to_gm"}};

bool is_byte_kind(WorkKind k) { return k != WorkKind::vector && k != WorkKind::matrix; }

template <typename E, std::size_t N>
std::string_view name_of(const EnumName<E> (&table)[N], E value) {
    for (const auto& e : table)
        if (e.value == value) return e.name;
    return "?";
}

template <typename E, std::size_t N>
std::string choices_of(const EnumName<E> (&table)[N]) {
    std::string out;
    for (const auto& e : table) out += (out.empty() ? "" : " | ") + std::string(e.name);
    return out;
}

// Parses an enum field, naming the allowed values on error.
template <typename E, std::size_t N>
E parse_enum(const std::string& file, const YAML::Node& node, const std::string& field,
             const EnumName<E> (&table)[N]) {
    const std::string text = yaml_string(file, node, field);
    for (const auto& e : table)
        if (e.name == text) return e.value;
    yaml_fail(file, node, field + ": '" + text + "' is not one of " + choices_of(table));
}

std::string format_number(double v) {
    std::ostringstream out;
    out << v;
    return out.str();
}

// Where each field came from, so checks made after parsing still name file and line.
struct FieldLocator {
    std::string file;
    std::map<std::string, YAML::Node> nodes;  // "units[2].bytes_per_s" -> node

    std::string at(const std::string& field) const {
        auto it = nodes.find(field);
        if (it == nodes.end() || file.empty()) return file.empty() ? std::string("model") : file;
        return yaml_where(file, it->second);
    }
};

void check_model(const HardwareModel& m, const std::function<std::string(const std::string&)>& at) {
    auto fail = [&](const std::string& field, const std::string& message) {
        throw Error(at(field) + ": " + field + ": " + message);
    };
    auto check_figure = [&](const Figure& f, const std::string& field) {
        if (!std::isfinite(f.value) || f.value <= 0)
            fail(field, "must be a positive finite number, got " + format_number(f.value));
        if (f.source.empty()) fail(field, "every figure needs a non-empty source");
    };
    if (m.name.empty()) fail("name", "must not be empty");
    if (!std::isfinite(m.floor_us) || m.floor_us < 0) fail("floor_us", "must be >= 0");
    if (m.cores < 1) fail("cores", "must be at least 1");
    if (m.units.empty()) fail("units", "a model needs at least one execution unit");
    if (m.cube_vector_exchange != "on_chip" && m.cube_vector_exchange != "global_memory")
        fail("cube_vector_exchange", "'" + m.cube_vector_exchange + "' is not one of on_chip | global_memory");
    for (const auto& [name, f] : m.buffers) check_figure(f, "buffers." + name);
    for (const auto& [convention, rates] : m.convention_vector_ops_per_s) {
        const std::string field = "conventions." + convention;
        if (parse_convention(convention) == Convention::hapbench)
            fail(field, "the hapbench convention prices work with the units' own rates; only other conventions "
                        "take rates here");
        if (rates.empty()) fail(field + ".vector_ops_per_s", "needs at least one dtype");
        for (const auto& [t, f] : rates) check_figure(f, field + ".vector_ops_per_s." + std::string(dtype_name(t)));
    }
    std::set<std::string> names;
    for (std::size_t i = 0; i < m.units.size(); ++i) {
        const ExecutionUnit& u = m.units[i];
        const std::string where = "units[" + std::to_string(i) + "]";
        if (u.name.empty()) fail(where + ".name", "must not be empty");
        if (!names.insert(u.name).second) fail(where + ".name", "duplicate unit name '" + u.name + "'");
        if (u.group.empty()) fail(where + ".group", "must not be empty");
        if (u.instances_per_core < 1) fail(where + ".instances_per_core", "must be at least 1");
        if (u.source.empty()) fail(where + ".source", "every unit needs a source");
        if (u.bytes_per_s) check_figure(*u.bytes_per_s, where + ".bytes_per_s");
        for (const auto& [t, f] : u.flops_per_s)
            check_figure(f, where + ".flops_per_s." + std::string(dtype_name(t)));
        for (const auto& [c, f] : u.vector_flops_per_element)
            check_figure(f, where + ".vector_flops_per_element." + std::string(op_class_name(c)));
        if (u.flops_per_mac) check_figure(*u.flops_per_mac, where + ".flops_per_mac");
        for (const auto& [k, f] : u.bytes_per_s_for)
            check_figure(f, where + ".bytes_per_s_for." + std::string(work_kind_name(k)));
        if (u.runs_as_conversion) check_figure(*u.runs_as_conversion, where + ".runs_as_conversion");
        if (u.align_bytes) check_figure(*u.align_bytes, where + ".align_bytes");
        if (u.mac_granule) check_figure(*u.mac_granule, where + ".mac_granule");
        for (const auto& [from, to] : u.runs_as) {
            if (!u.flops_per_s.count(to))
                fail(where + ".runs_as",
                     std::string(dtype_name(from)) + " runs as " + std::string(dtype_name(to)) +
                         ", which has no entry in flops_per_s");
        }
        if (!u.runs_as.empty() && u.runs_as_source.empty())
            fail(where + ".runs_as_source", "runs_as needs a source saying why");
        for (WorkKind k : u.serves) {
            const std::string kind(work_kind_name(k));
            if (is_byte_kind(k) && !u.byte_rate_for(k))
                fail(where + ".bytes_per_s", "unit '" + u.name + "' serves " + kind +
                                                 " but has no bytes_per_s (nor a bytes_per_s_for entry for it)");
            if ((k == WorkKind::vector || k == WorkKind::matrix) && u.flops_per_s.empty())
                fail(where + ".flops_per_s", "unit '" + u.name + "' serves " + kind + " but has no flops_per_s");
            if (k == WorkKind::vector && u.vector_flops_per_element.empty())
                fail(where + ".vector_flops_per_element",
                     "unit '" + u.name + "' serves vector but lists no op class costs");
            if (k == WorkKind::matrix && !u.flops_per_mac)
                fail(where + ".flops_per_mac", "unit '" + u.name + "' serves matrix but has no flops_per_mac");
        }
    }
    for (std::size_t i = 0; i < m.units.size(); ++i) {
        for (const auto& other : m.units[i].shares_with) {
            const std::string field = "units[" + std::to_string(i) + "].shares_with";
            if (other == m.units[i].name) fail(field, "a unit cannot share with itself");
            if (!names.count(other)) {
                std::string known;
                for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
                fail(field, "unknown unit '" + other + "' (units: " + known + ")");
            }
        }
    }
}

ExecutionUnit parse_unit(const std::string& file, const YAML::Node& node, const std::string& where,
                         FieldLocator& loc) {
    if (!node.IsMap()) yaml_fail(file, node, where + ": expected a map");
    yaml_check_keys(file, node, where,
               {"name", "group", "per", "instances_per_core", "serves", "bytes_per_s", "flops_per_s",
                "runs_as", "runs_as_source", "vector_flops_per_element", "flops_per_mac",
                "shares_with", "source", "bytes_per_s_for", "runs_as_conversion", "align_bytes",
                "mac_granule"});
    const std::string w = where + ".";
    ExecutionUnit u;
    u.name = yaml_string(file, yaml_require(file, node, "name", w), w + "name");
    u.group = yaml_string(file, yaml_require(file, node, "group", w), w + "group");
    u.scope = parse_enum(file, yaml_require(file, node, "per", w), w + "per", scope_names);
    if (node["instances_per_core"])
        u.instances_per_core = static_cast<int>(
            yaml_int(file, node["instances_per_core"], w + "instances_per_core"));
    YAML::Node serves = yaml_require(file, node, "serves", w);
    if (!serves.IsSequence()) yaml_fail(file, serves, w + "serves: expected a list (may be empty)");
    for (const auto& s : serves) u.serves.push_back(parse_enum(file, s, w + "serves", work_kind_names));
    if (node["bytes_per_s"]) u.bytes_per_s = yaml_figure(file, node["bytes_per_s"], w + "bytes_per_s");
    if (YAML::Node rates = node["flops_per_s"]) {
        if (!rates.IsMap()) yaml_fail(file, rates, w + "flops_per_s: expected a map from dtype to figure");
        for (const auto& kv : rates) {
            const DType t = yaml_dtype(file, kv.first, w + "flops_per_s");
            const std::string field = w + "flops_per_s." + std::string(dtype_name(t));
            u.flops_per_s[t] = yaml_figure(file, kv.second, field);
            loc.nodes[field] = kv.second;
        }
    }
    if (YAML::Node runs_as = node["runs_as"]) {
        if (!runs_as.IsMap()) yaml_fail(file, runs_as, w + "runs_as: expected a map from dtype to dtype");
        for (const auto& kv : runs_as)
            u.runs_as[yaml_dtype(file, kv.first, w + "runs_as")] =
                yaml_dtype(file, kv.second, w + "runs_as");
        loc.nodes[w + "runs_as"] = runs_as;
    }
    u.runs_as_source = yaml_optional_string(file, node, "runs_as_source", w);
    if (YAML::Node costs = node["vector_flops_per_element"]) {
        if (!costs.IsMap())
            yaml_fail(file, costs, w + "vector_flops_per_element: expected a map from op class to figure");
        for (const auto& kv : costs) {
            OpClass c;
            const std::string cls = yaml_string(file, kv.first, w + "vector_flops_per_element");
            if (!parse_op_class(cls, c))
                yaml_fail(file, kv.first, w + "vector_flops_per_element: unknown op class '" + cls + "'");
            const std::string field = w + "vector_flops_per_element." + cls;
            u.vector_flops_per_element[c] = yaml_figure(file, kv.second, field);
            loc.nodes[field] = kv.second;
        }
        loc.nodes[w + "vector_flops_per_element"] = costs;
    }
    if (node["flops_per_mac"]) u.flops_per_mac = yaml_figure(file, node["flops_per_mac"], w + "flops_per_mac");
    if (YAML::Node rates = node["bytes_per_s_for"]) {
        if (!rates.IsMap()) yaml_fail(file, rates, w + "bytes_per_s_for: expected a map from byte kind to figure");
        for (const auto& kv : rates) {
            const WorkKind k = parse_enum(file, kv.first, w + "bytes_per_s_for", work_kind_names);
            if (!is_byte_kind(k))
                yaml_fail(file, kv.first, w + "bytes_per_s_for: '" + std::string(work_kind_name(k)) + "' is not a byte kind");
            const std::string field = w + "bytes_per_s_for." + std::string(work_kind_name(k));
            u.bytes_per_s_for[k] = yaml_figure(file, kv.second, field);
            loc.nodes[field] = kv.second;
        }
    }
    for (const char* key : {"runs_as_conversion", "align_bytes", "mac_granule"}) {
        if (!node[key]) continue;
        Figure f = yaml_figure(file, node[key], w + key);
        loc.nodes[w + key] = node[key];
        if (std::string(key) == "runs_as_conversion") u.runs_as_conversion = f;
        else if (std::string(key) == "align_bytes") u.align_bytes = f;
        else u.mac_granule = f;
    }
    if (YAML::Node shares = node["shares_with"]) {
        if (!shares.IsSequence()) yaml_fail(file, shares, w + "shares_with: expected a list of unit names");
        for (const auto& s : shares) u.shares_with.push_back(yaml_string(file, s, w + "shares_with"));
        loc.nodes[w + "shares_with"] = shares;
    }
    u.source = yaml_string(file, yaml_require(file, node, "source", w), w + "source");
    for (const char* key : {"name", "group", "instances_per_core", "bytes_per_s", "flops_per_s",
                            "flops_per_mac", "runs_as_source", "source"})
        if (node[key]) loc.nodes[w + key] = node[key];
    loc.nodes[where] = node;
    return u;
}

HardwareModel parse_root(const YAML::Node& root, const std::string& file) {
    if (!root.IsMap()) yaml_fail(file, root, "a hardware model must be a YAML map");
    yaml_check_keys(file, root, "model",
               {"name", "kind", "description", "provenance", "floor_us", "cores", "units", "buffers",
                "cube_vector_exchange", "conventions"});
    FieldLocator loc{file, {}};
    HardwareModel m;
    m.source_path = file;
    m.name = yaml_string(file, yaml_require(file, root, "name", ""), "name");
    m.kind = parse_enum(file, yaml_require(file, root, "kind", ""), "kind", kind_names);
    m.description = yaml_optional_string(file, root, "description", "");
    YAML::Node prov = yaml_require(file, root, "provenance", "");
    if (!prov.IsMap()) yaml_fail(file, prov, "provenance: expected a map");
    yaml_check_keys(file, prov, "provenance", {"origin", "date", "host", "cpu_model", "method"});
    m.provenance.origin = parse_enum(file, yaml_require(file, prov, "origin", "provenance."),
                                     "provenance.origin", origin_names);
    m.provenance.date = yaml_string(file, yaml_require(file, prov, "date", "provenance."), "provenance.date");
    m.provenance.method =
        yaml_string(file, yaml_require(file, prov, "method", "provenance."), "provenance.method");
    m.provenance.host = yaml_optional_string(file, prov, "host", "provenance.");
    m.provenance.cpu_model = yaml_optional_string(file, prov, "cpu_model", "provenance.");
    m.floor_us = yaml_number(file, yaml_require(file, root, "floor_us", ""), "floor_us");
    m.cores = static_cast<int>(yaml_int(file, yaml_require(file, root, "cores", ""), "cores"));
    if (YAML::Node buffers = root["buffers"]) {
        if (!buffers.IsMap()) yaml_fail(file, buffers, "buffers: expected a map from buffer name to figure (bytes)");
        for (const auto& kv : buffers) {
            const std::string name = yaml_string(file, kv.first, "buffers");
            m.buffers[name] = yaml_figure(file, kv.second, "buffers." + name);
            loc.nodes["buffers." + name] = kv.second;
        }
    }
    if (root["cube_vector_exchange"]) {
        m.cube_vector_exchange = yaml_string(file, root["cube_vector_exchange"], "cube_vector_exchange");
        loc.nodes["cube_vector_exchange"] = root["cube_vector_exchange"];
    }
    if (YAML::Node conventions = root["conventions"]) {
        if (!conventions.IsMap())
            yaml_fail(file, conventions, "conventions: expected a map from convention name to its rates");
        for (const auto& kv : conventions) {
            const std::string name = yaml_string(file, kv.first, "conventions");
            const std::string w = "conventions." + name;
            try {
                parse_convention(name);
            } catch (const Error& e) {
                yaml_fail(file, kv.first, w + ": " + e.what());
            }
            if (!kv.second.IsMap()) yaml_fail(file, kv.second, w + ": expected a map with vector_ops_per_s");
            yaml_check_keys(file, kv.second, w, {"vector_ops_per_s"});
            YAML::Node rates = yaml_require(file, kv.second, "vector_ops_per_s", w + ".");
            if (!rates.IsMap()) yaml_fail(file, rates, w + ".vector_ops_per_s: expected a map from dtype to figure");
            auto& out = m.convention_vector_ops_per_s[name];
            for (const auto& rate : rates) {
                const DType t = yaml_dtype(file, rate.first, w + ".vector_ops_per_s");
                const std::string field = w + ".vector_ops_per_s." + std::string(dtype_name(t));
                out[t] = yaml_figure(file, rate.second, field);
                loc.nodes[field] = rate.second;
            }
            loc.nodes[w] = kv.first;
            loc.nodes[w + ".vector_ops_per_s"] = rates;
        }
    }
    YAML::Node units = yaml_require(file, root, "units", "");
    if (!units.IsSequence()) yaml_fail(file, units, "units: expected a list of execution units");
    for (std::size_t i = 0; i < units.size(); ++i)
        m.units.push_back(parse_unit(file, units[i], "units[" + std::to_string(i) + "]", loc));
    for (const char* key : {"name", "floor_us", "cores", "units"}) loc.nodes[key] = root[key];
    check_model(m, [&](const std::string& field) { return loc.at(field); });
    return m;
}

void emit_figure(YAML::Emitter& out, const std::string& key, const Figure& f) {
    out << YAML::Key << key << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "value" << YAML::Value << f.value;
    out << YAML::Key << "source" << YAML::Value << f.source;
    out << YAML::EndMap;
}

}  // namespace

std::string_view hardware_kind_name(HardwareKind k) { return name_of(kind_names, k); }
std::string_view peak_origin_name(PeakOrigin o) { return name_of(origin_names, o); }
std::string_view unit_scope_name(UnitScope s) { return name_of(scope_names, s); }
std::string_view work_kind_name(WorkKind k) { return name_of(work_kind_names, k); }

const Figure* ExecutionUnit::byte_rate_for(WorkKind k) const {
    auto it = bytes_per_s_for.find(k);
    if (it != bytes_per_s_for.end()) return &it->second;
    return bytes_per_s ? &*bytes_per_s : nullptr;
}

bool ExecutionUnit::serves_kind(WorkKind k) const {
    return std::find(serves.begin(), serves.end(), k) != serves.end();
}

const Figure* ExecutionUnit::rate_for(DType dtype) const {
    auto it = flops_per_s.find(dtype);
    if (it != flops_per_s.end()) return &it->second;
    auto alias = runs_as.find(dtype);
    if (alias == runs_as.end()) return nullptr;
    it = flops_per_s.find(alias->second);
    return it == flops_per_s.end() ? nullptr : &it->second;
}

const ExecutionUnit* HardwareModel::find_unit(const std::string& unit_name) const {
    for (const auto& u : units)
        if (u.name == unit_name) return &u;
    return nullptr;
}

HardwareModel parse_hardware_model(const std::string& yaml_text, const std::string& origin) {
    YAML::Node root;
    try {
        root = YAML::Load(yaml_text);
    } catch (const YAML::Exception& e) {
        throw Error(origin + ":" + std::to_string(e.mark.line + 1) + ": invalid YAML: " + e.msg);
    }
    return parse_root(root, origin);
}

void validate_hardware_model(const HardwareModel& model) {
    const std::string origin = model.source_path.empty() ? "hardware model '" + model.name + "'"
                                                         : model.source_path;
    check_model(model, [&](const std::string&) { return origin; });
}

std::string hardware_model_dir() { return source_dir() + "/hardware"; }

std::vector<std::string> known_hardware_models() {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(hardware_model_dir(), ec)) {
        const auto& p = entry.path();
        if (entry.is_regular_file() && (p.extension() == ".yaml" || p.extension() == ".yml"))
            names.push_back(p.stem().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

HardwareModel load_hardware_model(const std::string& path_or_name) {
    namespace fs = std::filesystem;
    const bool looks_like_path = path_or_name.find('/') != std::string::npos ||
                                 path_or_name.ends_with(".yaml") || path_or_name.ends_with(".yml");
    std::string path = path_or_name;
    if (!looks_like_path && !fs::exists(path_or_name)) {
        path = hardware_model_dir() + "/" + path_or_name + ".yaml";
        if (!fs::exists(path)) {
            std::string known;
            for (const auto& n : known_hardware_models()) known += (known.empty() ? "" : ", ") + n;
            throw Error("unknown hardware model '" + path_or_name + "'; known models (in " +
                        hardware_model_dir() + "): " + (known.empty() ? "none" : known) +
                        "; or give the path of a model file");
        }
    }
    return parse_root(yaml_load_file(path), path);
}

std::string to_yaml(const HardwareModel& m) {
    YAML::Emitter out;
    out.SetDoublePrecision(17);
    out << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << m.name;
    out << YAML::Key << "kind" << YAML::Value << std::string(hardware_kind_name(m.kind));
    if (!m.description.empty()) out << YAML::Key << "description" << YAML::Value << m.description;
    out << YAML::Key << "provenance" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "origin" << YAML::Value << std::string(peak_origin_name(m.provenance.origin));
    out << YAML::Key << "date" << YAML::Value << m.provenance.date;
    if (!m.provenance.host.empty()) out << YAML::Key << "host" << YAML::Value << m.provenance.host;
    if (!m.provenance.cpu_model.empty())
        out << YAML::Key << "cpu_model" << YAML::Value << m.provenance.cpu_model;
    out << YAML::Key << "method" << YAML::Value << m.provenance.method;
    out << YAML::EndMap;
    out << YAML::Key << "floor_us" << YAML::Value << m.floor_us;
    out << YAML::Key << "cores" << YAML::Value << m.cores;
    if (m.cube_vector_exchange != "on_chip")
        out << YAML::Key << "cube_vector_exchange" << YAML::Value << m.cube_vector_exchange;
    if (!m.buffers.empty()) {
        out << YAML::Key << "buffers" << YAML::Value << YAML::BeginMap;
        for (const auto& [name, f] : m.buffers) emit_figure(out, name, f);
        out << YAML::EndMap;
    }
    if (!m.convention_vector_ops_per_s.empty()) {
        out << YAML::Key << "conventions" << YAML::Value << YAML::BeginMap;
        for (const auto& [convention, rates] : m.convention_vector_ops_per_s) {
            out << YAML::Key << convention << YAML::Value << YAML::BeginMap;
            out << YAML::Key << "vector_ops_per_s" << YAML::Value << YAML::BeginMap;
            for (const auto& [t, f] : rates) emit_figure(out, std::string(dtype_name(t)), f);
            out << YAML::EndMap << YAML::EndMap;
        }
        out << YAML::EndMap;
    }
    out << YAML::Key << "units" << YAML::Value << YAML::BeginSeq;
    for (const auto& u : m.units) {
        out << YAML::BeginMap;
        out << YAML::Key << "name" << YAML::Value << u.name;
        out << YAML::Key << "group" << YAML::Value << u.group;
        out << YAML::Key << "per" << YAML::Value << std::string(unit_scope_name(u.scope));
        if (u.instances_per_core != 1)
            out << YAML::Key << "instances_per_core" << YAML::Value << u.instances_per_core;
        out << YAML::Key << "serves" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (WorkKind k : u.serves) out << std::string(work_kind_name(k));
        out << YAML::EndSeq;
        if (u.bytes_per_s) emit_figure(out, "bytes_per_s", *u.bytes_per_s);
        if (!u.flops_per_s.empty()) {
            out << YAML::Key << "flops_per_s" << YAML::Value << YAML::BeginMap;
            for (const auto& [t, f] : u.flops_per_s) emit_figure(out, std::string(dtype_name(t)), f);
            out << YAML::EndMap;
        }
        if (!u.runs_as.empty()) {
            out << YAML::Key << "runs_as" << YAML::Value << YAML::BeginMap;
            for (const auto& [from, to] : u.runs_as)
                out << YAML::Key << std::string(dtype_name(from)) << YAML::Value << std::string(dtype_name(to));
            out << YAML::EndMap;
            out << YAML::Key << "runs_as_source" << YAML::Value << u.runs_as_source;
        }
        if (!u.vector_flops_per_element.empty()) {
            out << YAML::Key << "vector_flops_per_element" << YAML::Value << YAML::BeginMap;
            for (const auto& [c, f] : u.vector_flops_per_element) emit_figure(out, std::string(op_class_name(c)), f);
            out << YAML::EndMap;
        }
        if (u.flops_per_mac) emit_figure(out, "flops_per_mac", *u.flops_per_mac);
        if (!u.bytes_per_s_for.empty()) {
            out << YAML::Key << "bytes_per_s_for" << YAML::Value << YAML::BeginMap;
            for (const auto& [k, f] : u.bytes_per_s_for) emit_figure(out, std::string(work_kind_name(k)), f);
            out << YAML::EndMap;
        }
        if (u.runs_as_conversion) emit_figure(out, "runs_as_conversion", *u.runs_as_conversion);
        if (u.align_bytes) emit_figure(out, "align_bytes", *u.align_bytes);
        if (u.mac_granule) emit_figure(out, "mac_granule", *u.mac_granule);
        if (!u.shares_with.empty()) {
            out << YAML::Key << "shares_with" << YAML::Value << YAML::Flow << YAML::BeginSeq;
            for (const auto& s : u.shares_with) out << s;
            out << YAML::EndSeq;
        }
        out << YAML::Key << "source" << YAML::Value << u.source;
        out << YAML::EndMap;
    }
    out << YAML::EndSeq;
    out << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

}  // namespace hb
