#include "eval/case_export.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "core/build_info.hpp"
#include "core/error.hpp"
#include "core/npy.hpp"
#include "core/rng.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "suite/inputs.hpp"
#include "spec/profile.hpp"
#include "suite/split.hpp"
#include "suite/task_dir.hpp"
#include "verify/precision_gate.hpp"
#include "verify/thresholds.hpp"

namespace fs = std::filesystem;

namespace hb {

namespace {

nlohmann::json json_number(double x) {
    if (std::isfinite(x)) return x;
    if (std::isnan(x)) return "nan";
    return x > 0 ? "inf" : "-inf";
}

double number_from_json(const nlohmann::json& j, const std::string& where) {
    if (j.is_number()) return j.get<double>();
    if (j.is_string()) {
        const std::string s = j.get<std::string>();
        if (s == "nan") return std::nan("");
        if (s == "inf") return INFINITY;
        if (s == "-inf") return -INFINITY;
    }
    throw Error(where + ": expected a number (or \"inf\", \"-inf\", \"nan\"), got " + j.dump());
}

nlohmann::json attr_to_json(const AttrValue& a) {
    switch (a.type) {
        case AttrType::none: return nullptr;
        case AttrType::f: return json_number(a.f);
        case AttrType::i: return a.i;
        case AttrType::b: return a.b;
        case AttrType::s: return a.s;
        case AttrType::int_list: return a.ints;
        case AttrType::float_list: {
            auto list = nlohmann::json::array();
            for (double f : a.floats) list.push_back(json_number(f));
            return list;
        }
    }
    return nullptr;
}

AttrValue attr_from_json(const nlohmann::json& j, AttrType declared, const std::string& where) {
    AttrType type = declared;
    if (j.is_null()) return AttrValue{};
    if (type == AttrType::none) {  // the proto leaves the type open: take the JSON's
        if (j.is_boolean()) type = AttrType::b;
        else if (j.is_number_integer()) type = AttrType::i;
        else if (j.is_number() || (j.is_string() && (j == "inf" || j == "-inf" || j == "nan"))) type = AttrType::f;
        else if (j.is_string()) type = AttrType::s;
        else if (j.is_array()) type = std::all_of(j.begin(), j.end(), [](const auto& e) { return e.is_number_integer(); })
                                          ? AttrType::int_list : AttrType::float_list;
    }
    try {
        switch (type) {
            case AttrType::none: break;
            case AttrType::f: return AttrValue::of_float(number_from_json(j, where));
            case AttrType::i: return AttrValue::of_int(j.get<std::int64_t>());
            case AttrType::b: return AttrValue::of_bool(j.get<bool>());
            case AttrType::s: return AttrValue::of_string(j.get<std::string>());
            case AttrType::int_list: {
                AttrValue a;
                a.type = AttrType::int_list;
                a.ints = j.get<std::vector<std::int64_t>>();
                return a;
            }
            case AttrType::float_list: {
                AttrValue a;
                a.type = AttrType::float_list;
                if (!j.is_array()) throw Error(where + ": expected a list of numbers");
                for (const auto& e : j) a.floats.push_back(number_from_json(e, where));
                return a;
            }
        }
    } catch (const nlohmann::json::exception& e) {
        throw Error(where + ": " + e.what());
    }
    throw Error(where + ": cannot read attribute value " + j.dump());
}

CompareMode compare_mode_of(const OutputDef& def, const Thresholds& th) {
    if (def.index_gather) return CompareMode::index_gather;
    if (!def.compare) return CompareMode::skipped;
    if (th.integer()) return CompareMode::integer;
    return th.bit_exact() ? CompareMode::bit_exact : CompareMode::relative;
}

std::string case_ids_of(const std::vector<CaseSpec>& specs) {
    std::string ids;
    for (const auto& s : specs) ids += (ids.empty() ? "" : ", ") + std::to_string(s.case_id);
    return ids;
}

}  // namespace

std::string case_tensor_file(const std::string& prefix, const std::string& arg_name, bool is_list,
                             std::size_t index) {
    return is_list ? fmt::format("{}_{}_{}.npy", prefix, arg_name, index) : fmt::format("{}_{}.npy", prefix, arg_name);
}

nlohmann::json attrs_to_json(const AttrMap& attrs) {
    auto out = nlohmann::json::object();
    for (const auto& [name, value] : attrs) out[name] = attr_to_json(value);
    return out;
}

AttrMap attrs_from_json(const nlohmann::json& attrs, const Proto& proto, const std::string& where) {
    if (!attrs.is_object()) throw Error(where + ": attrs must be an object");
    AttrMap out;
    for (const auto& [name, value] : attrs.items()) {
        const AttrDef* def = proto.find_attr(name);
        if (!def) throw Error(where + ": attribute '" + name + "' is not in " + proto.file);
        out[name] = attr_from_json(value, def->type, where + ": attribute '" + name + "'");
    }
    return out;
}

CaseExport export_case(const CaseExportOptions& options) {
    if (options.dir.empty()) throw Error("export needs a directory to write to (--dir)");
    const bool hidden = options.split.split == "hidden";
    SplitChoice split = options.split;
    split.case_ids.clear();
    const CaseSelection selection = select_cases(options.tasks_dir, options.profile, {options.op}, split);
    const SelectedOperator& selected = selection.operators.at(0);
    const TaskEntry& entry = *selected.entry;
    const Operator* op = selected.op;
    if (!op) throw Error("hapbench does not implement " + entry.op + " (known: " + known_operator_names() + ")");
    const std::vector<CaseSpec>& specs = selected.cases;
    const auto spec = std::find_if(specs.begin(), specs.end(),
                                   [&](const CaseSpec& s) { return s.case_id == options.case_id; });
    if (spec == specs.end())
        throw Error(fmt::format("{} has no case {} in the {} split (case ids: {})", entry.op, options.case_id,
                                options.split.split, case_ids_of(specs)));

    // The same steps, in the same order, as one case of `hapbench eval`.
    const Problem problem = resolve_problem(entry.proto, *op, *spec);
    const std::vector<Arg> inputs = generate_inputs(problem, *op, options.eval_seed);
    const ValueArgs<double> input_values = values_from_args(inputs);
    ValueArgs<double> golden = values_for_specs<double>(problem.outputs);
    op->golden(problem, input_values, golden);
    ValueArgs<double> same_precision = values_for_specs<double>(problem.outputs);
    op->same_precision(problem, input_values, same_precision);

    CaseExport result;
    result.dir = options.dir;
    std::error_code ec;
    fs::create_directories(options.dir, ec);
    if (ec || !fs::is_directory(options.dir))
        throw Error("cannot create the export directory " + options.dir + (ec ? ": " + ec.message() : ""));
    auto write = [&](const std::string& file, const NpyArray& array) {
        write_npy((fs::path(options.dir) / file).string(), array);
        result.files.push_back(file);
    };

    auto inputs_json = nlohmann::json::array();
    for (std::size_t a = 0; a < inputs.size(); ++a) {
        const Arg& arg = inputs[a];
        const CaseInput& written = spec->inputs.at(a);
        auto tensors = nlohmann::json::array();
        for (std::size_t t = 0; t < arg.tensors.size(); ++t) {
            const Tensor& tensor = arg.tensors[t];
            const std::string file = case_tensor_file("in", arg.name, arg.is_list, t);
            write(file, NpyArray::from_raw(tensor.data(), tensor.spec.dtype, tensor.spec.shape));
            tensors.push_back({{"dtype", std::string(dtype_name(tensor.spec.dtype))}, {"shape", tensor.spec.shape}, {"file", file}});
        }
        nlohmann::json range = nullptr;
        if (written.range) range = {json_number(written.range->lo), json_number(written.range->hi)};
        inputs_json.push_back({{"name", arg.name}, {"is_list", arg.is_list}, {"present", arg.present},
                               {"value_range", range}, {"tensors", tensors}});
    }

    auto outputs_json = nlohmann::json::array();
    for (std::size_t a = 0; a < problem.outputs.size(); ++a) {
        const ArgSpec& out = problem.outputs[a];
        const OutputDef& def = entry.proto.outputs.at(a);
        auto tensors = nlohmann::json::array();
        for (std::size_t t = 0; t < out.tensors.size(); ++t) {
            const TensorSpec& ts = out.tensors[t];
            const Thresholds th = thresholds_for(ts.dtype, entry.proto.tau_overrides);
            const std::string golden_file = case_tensor_file("golden", out.name, out.is_list, t);
            const std::string same_file = case_tensor_file("same_precision", out.name, out.is_list, t);
            // An output of data-dependent length is written as its result, the written prefix
            // (the form a candidate's file has); case.json records the capacity.
            Shape shape = ts.shape;
            std::vector<double> golden_values = golden[a].tensors[t].v, same_values = same_precision[a].tensors[t].v;
            if (out.variable_length && !shape.empty()) {
                const std::int64_t length = golden[a].tensors[t].written_length;
                const std::size_t prefix = static_cast<std::size_t>(numel(shape) / std::max<std::int64_t>(1, shape[0]) * length);
                shape[0] = length;
                golden_values.resize(prefix);
                same_values.resize(prefix);
            }
            write(golden_file, NpyArray::from_values(golden_values, DType::f64, shape));
            // Already rounded to the output dtype, so storing it in that dtype is exact, and
            // the file has the very form a candidate output must have.
            write(same_file, NpyArray::from_values(same_values, ts.dtype, shape));
            nlohmann::json tensor = {{"label", out.is_list ? fmt::format("{}[{}]", out.name, t) : out.name},
                                     {"dtype", std::string(dtype_name(ts.dtype))},
                                     {"shape", shape},
                                     {"golden", golden_file},
                                     {"same_precision", same_file},
                                     {"compare", std::string(compare_mode_name(compare_mode_of(def, th)))},
                                     {"thresholds", to_json(th)}};
            if (out.variable_length) tensor["capacity"] = ts.shape.empty() ? 1 : ts.shape[0];
            tensors.push_back(std::move(tensor));
        }
        outputs_json.push_back({{"name", out.name}, {"is_list", out.is_list}, {"present", out.present},
                                {"variable_length", out.variable_length}, {"tensors", tensors}});
    }

    fs::copy_file(entry.proto.file, fs::path(options.dir) / kCaseProto, fs::copy_options::overwrite_existing, ec);
    if (ec) throw Error("cannot copy " + entry.proto.file + " to " + options.dir + ": " + ec.message());
    result.files.push_back(kCaseProto);

    auto tau_overrides = nlohmann::json::object();
    for (const auto& [dtype, tau] : entry.proto.tau_overrides) tau_overrides[std::string(dtype_name(dtype))] = tau;
    result.case_json = {
        {"format", "hapbench-case"},
        {"format_version", kCaseFormatVersion},
        {"hapbench_version", hapbench_version()},
        {"operator", entry.op},
        {"level", entry.level},
        {"case_id", spec->case_id},
        {"note", spec->note},
        {"split", options.split.split},
        {"split_id", hidden ? nlohmann::json(split_id(options.split, options.profile)) : nlohmann::json(nullptr)},
        {"hidden_count", hidden ? nlohmann::json(options.split.hidden_count) : nlohmann::json(nullptr)},
        {"profile", options.profile},
        {"tasks_dir", selection.tasks.root},
        {"cases_file", hidden ? nlohmann::json(nullptr) : nlohmann::json(entry.cases_file)},
        {"suite_hash", selection.tasks.suite_hash},
        {"eval_seed", options.eval_seed},
        {"case_seed", case_seed(spec->case_id, options.eval_seed)},
        {"proto", kCaseProto},
        {"tau_overrides", tau_overrides},
        {"attrs", attrs_to_json(problem.attrs)},
        {"inputs", inputs_json},
        {"outputs", outputs_json},
    };
    const std::string json_path = (fs::path(options.dir) / kCaseJson).string();
    std::ofstream f(json_path);
    if (!f) throw Error("cannot write " + json_path);
    f << result.case_json.dump(2) << "\n";
    if (!f) throw Error("cannot write " + json_path);
    result.files.push_back(kCaseJson);
    return result;
}

}  // namespace hb
