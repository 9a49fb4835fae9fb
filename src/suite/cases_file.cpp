#include "suite/cases_file.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include "core/yaml_util.hpp"

namespace hb {

namespace {

Shape parse_shape(const std::string& file, const YAML::Node& node, const std::string& field) {
    if (!node.IsSequence()) yaml_fail(file, node, field + ": expected a shape like [1024, 1024]");
    Shape shape;
    for (const auto& d : node) {
        const auto v = yaml_int(file, d, field);
        if (v < 0) yaml_fail(file, d, field + ": negative dimension " + std::to_string(v));
        shape.push_back(v);
    }
    return shape;
}

bool is_pair_of_numbers(const YAML::Node& node) {
    return node.IsSequence() && node.size() == 2 && node[0].IsScalar() && node[1].IsScalar();
}

ValueRange parse_range(const std::string& file, const YAML::Node& node, const std::string& field) {
    if (!is_pair_of_numbers(node)) yaml_fail(file, node, field + ": expected [min, max]");
    ValueRange r{yaml_number(file, node[0], field), yaml_number(file, node[1], field)};
    if (r.lo > r.hi) yaml_fail(file, node, field + ": min " + node[0].Scalar() + " is above max " + node[1].Scalar());
    return r;
}

CaseSpec parse_case(const std::string& file, const YAML::Node& node, const Proto& proto) {
    CaseSpec c;
    c.op = proto.op;
    c.file = file;
    c.line = node.Mark().line + 1;
    if (!node.IsMap()) yaml_fail(file, node, "a case must be a mapping");
    c.case_id = yaml_int(file, node["case_id"], "case_id");
    const std::string ctx = "case " + std::to_string(c.case_id) + ": ";
    if (node["note"]) c.note = node["note"].as<std::string>("");

    // input_shape: one entry per proto input; a list input is a list of shapes; null or a
    // missing trailing entry is an absent optional input.
    const auto shapes = node["input_shape"];
    if (!shapes || !shapes.IsSequence()) yaml_fail(file, node, ctx + "input_shape: expected a list");
    if (shapes.size() > proto.inputs.size())
        yaml_fail(file, shapes, ctx + "input_shape has " + std::to_string(shapes.size()) +
                                    " entries but " + proto.op + " has " + std::to_string(proto.inputs.size()) + " inputs");
    c.inputs.resize(proto.inputs.size());
    for (std::size_t i = 0; i < proto.inputs.size(); ++i) {
        const auto& def = proto.inputs[i];
        auto& in = c.inputs[i];
        in.is_list = def.is_list;
        const std::string field = ctx + "input_shape[" + std::to_string(i) + "] (" + def.name + ")";
        if (i >= shapes.size() || shapes[i].IsNull()) {
            if (!def.optional) yaml_fail(file, shapes, field + ": required input is missing");
            in.present = false;
            continue;
        }
        const auto s = shapes[i];
        const bool nested = s.IsSequence() && s.size() > 0 && s[0].IsSequence();
        if (def.is_list) {
            if (!nested) yaml_fail(file, s, field + ": a tensor-list input needs a list of shapes");
            for (const auto& one : s) in.shapes.push_back(parse_shape(file, one, field));
        } else {
            if (nested) yaml_fail(file, s, field + ": a list of shapes given for a single tensor");
            in.shapes.push_back(parse_shape(file, s, field));
        }
    }

    // dtype: one per input, or a single one for all; null for absent inputs.
    const auto dtypes = node["dtype"];
    if (!dtypes || !dtypes.IsSequence() || dtypes.size() == 0)
        yaml_fail(file, node, ctx + "dtype: expected a list of dtypes");
    for (std::size_t i = 0; i < c.inputs.size(); ++i) {
        auto d = dtypes.size() == 1 ? dtypes[0] : (i < dtypes.size() ? dtypes[i] : YAML::Node());
        // A list input may give its members' dtype as a list; members share one dtype.
        if (d && d.IsSequence() && d.size() > 0) d = d[0];
        auto& in = c.inputs[i];
        if (!in.present) continue;
        const std::string field = ctx + "dtype[" + std::to_string(i) + "] (" + proto.inputs[i].name + ")";
        if (!d || d.IsNull()) yaml_fail(file, dtypes, field + ": missing for a present input");
        const std::string name = yaml_string(file, d, field);
        if (!try_parse_dtype(name, in.dtype)) yaml_fail(file, d, field + ": unknown dtype '" + name + "'");
        const auto& allowed = proto.inputs[i].dtypes;
        if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), in.dtype) == allowed.end())
            yaml_fail(file, d, field + ": " + name + " is not among the dtypes proto.yaml allows");
    }

    // attrs: names must be declared; required ones present.
    if (const auto attrs = node["attrs"]; attrs && !attrs.IsNull()) {
        if (!attrs.IsMap()) yaml_fail(file, attrs, ctx + "attrs: expected a mapping");
        for (const auto& kv : attrs) {
            const std::string name = kv.first.Scalar();
            const AttrDef* def = proto.find_attr(name);
            // The reference data also writes `input_name: null` among the attrs for an
            // optional input that is absent; that says nothing new.
            const bool names_optional_input = std::any_of(proto.inputs.begin(), proto.inputs.end(),
                [&](const InputDef& in) { return in.name == name && in.optional; });
            if (!def && names_optional_input && kv.second.IsNull()) continue;
            if (!def) {
                std::string known;
                for (const auto& a : proto.attrs) known += (known.empty() ? "" : ", ") + a.name;
                yaml_fail(file, kv.first, ctx + "attrs." + name + ": unknown attribute (known: " +
                                              (known.empty() ? "none" : known) + ")");
            }
            c.attrs[name] = yaml_attr(file, kv.second, ctx + "attrs." + name, def->type);
        }
    }
    for (const auto& def : proto.attrs)
        if (def.required && !def.default_value && !c.attrs.count(def.name))
            yaml_fail(file, node, ctx + "attrs." + def.name + ": required attribute is missing");

    // value_range: one [min, max] for every input; or a list with one entry per proto input
    // (null for an absent one); or a shorter list, one per present input in order, the last
    // repeating when fewer are given.
    if (const auto vr = node["value_range"]; vr && !vr.IsNull()) {
        if (is_pair_of_numbers(vr)) {
            const ValueRange r = parse_range(file, vr, ctx + "value_range");
            for (auto& in : c.inputs)
                if (in.present) in.range = r;
        } else if (vr.IsSequence() && vr.size() > 0) {
            std::vector<std::optional<ValueRange>> ranges;
            for (std::size_t k = 0; k < vr.size(); ++k) {
                YAML::Node entry = vr[k];
                // A list input may give one range per member; members share the first.
                if (entry.IsSequence() && entry.size() > 0 && entry[0].IsSequence()) entry = entry[0];
                if (entry.IsNull()) ranges.emplace_back();
                else ranges.push_back(parse_range(file, entry, ctx + "value_range[" + std::to_string(k) + "]"));
            }
            if (ranges.size() == c.inputs.size()) {
                for (std::size_t i = 0; i < c.inputs.size(); ++i)
                    if (c.inputs[i].present) c.inputs[i].range = ranges[i];
            } else {
                std::size_t next = 0;
                for (auto& in : c.inputs) {
                    if (!in.present) continue;
                    in.range = ranges[std::min(next, ranges.size() - 1)];
                    ++next;
                }
            }
        } else {
            yaml_fail(file, vr, ctx + "value_range: expected [min, max] or a list of them");
        }
    }
    return c;
}

}  // namespace

std::vector<CaseSpec> load_cases(const std::string& path, const Proto& proto) {
    YAML::Node root = yaml_load_file(path);
    const auto cases = root["cases"];
    if (!cases || !cases.IsSequence()) yaml_fail(path, root, "missing top-level 'cases' list");
    std::vector<CaseSpec> out;
    std::set<std::int64_t> seen;
    for (const auto& node : cases) {
        out.push_back(parse_case(path, node, proto));
        if (!seen.insert(out.back().case_id).second)
            yaml_fail(path, node, "case_id " + std::to_string(out.back().case_id) + " appears twice");
    }
    return out;
}

namespace {
std::string shape_flow(const Shape& s) { return shape_to_string(s); }
}  // namespace

std::string cases_to_yaml(const std::vector<CaseSpec>& cases, const Proto& proto,
                          const std::string& header_comment) {
    std::ostringstream os;
    std::istringstream header(header_comment);
    for (std::string line; std::getline(header, line);) os << "# " << line << "\n";
    os << "cases:\n";
    for (const auto& c : cases) {
        os << "- operator: " << proto.display_name << "\n";
        os << "  case_id: " << c.case_id << "\n";
        os << "  input_shape:\n";
        for (const auto& in : c.inputs) {
            if (!in.present) {
                os << "  - null\n";
            } else if (in.is_list) {
                for (std::size_t k = 0; k < in.shapes.size(); ++k)
                    os << (k == 0 ? "  - - " : "    - ") << shape_flow(in.shapes[k]) << "\n";
            } else {
                os << "  - " << shape_flow(in.shapes[0]) << "\n";
            }
        }
        os << "  dtype: [";
        for (std::size_t i = 0; i < c.inputs.size(); ++i)
            os << (i ? ", " : "") << (c.inputs[i].present ? std::string(dtype_name(c.inputs[i].dtype)) : "null");
        os << "]\n";
        os << "  attrs: " << attrs_to_string(c.attrs) << "\n";
        bool all_same = true;
        for (const auto& in : c.inputs)
            if (in.present && in.range != c.inputs[0].range) all_same = false;
        if (all_same && c.inputs[0].range) {
            os << "  value_range: " << c.inputs[0].range->to_string() << "\n";
        } else {
            os << "  value_range:\n";
            for (const auto& in : c.inputs)
                if (in.present) os << "  - " << (in.range ? in.range->to_string() : "[0, 1]") << "\n";
        }
        os << "  note: \"" << c.note << "\"\n";
    }
    return os.str();
}

}  // namespace hb
