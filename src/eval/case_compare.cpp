#include "eval/case_compare.hpp"

#include "verify/output_verdict.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/npy.hpp"
#include "eval/case_export.hpp"
#include "verify/distinct_indices.hpp"
#include "verify/written_length.hpp"

namespace fs = std::filesystem;

namespace hb {

namespace {

// Typed access to case.json that names the file and the field on every failure.
class CaseJson {
  public:
    CaseJson(const nlohmann::json& j, std::string where) : j_(j), where_(std::move(where)) {}

    const nlohmann::json& at(const std::string& key) const {
        if (!j_.is_object() || !j_.contains(key)) throw Error(where_ + ": missing field '" + key + "'");
        return j_.at(key);
    }
    template <typename T>
    T get(const std::string& key) const {
        try {
            return at(key).get<T>();
        } catch (const nlohmann::json::exception&) {
            throw Error(where_ + ": field '" + key + "' has the wrong type (" + at(key).dump() + ")");
        }
    }
    CaseJson child(const std::string& key) const { return CaseJson(at(key), where_ + "." + key); }
    CaseJson item(std::size_t i) const {
        const std::string w = where_ + "[" + std::to_string(i) + "]";
        if (!j_.is_array() || i >= j_.size()) throw Error(w + ": missing");
        return CaseJson(j_.at(i), w);
    }
    std::size_t size() const {
        if (!j_.is_array()) throw Error(where_ + ": expected a list");
        return j_.size();
    }
    DType dtype(const std::string& key) const {
        DType t;
        const std::string name = get<std::string>(key);
        if (!try_parse_dtype(name, t)) throw Error(where_ + "." + key + ": unknown dtype '" + name + "'");
        return t;
    }
    const std::string& where() const { return where_; }
    const nlohmann::json& raw() const { return j_; }

  private:
    const nlohmann::json& j_;
    std::string where_;
};

// Reads one exported array and checks it against case.json.
std::vector<double> load_exported(const std::string& dir, const std::string& file, DType dtype, const Shape& shape) {
    const std::string path = (fs::path(dir) / file).string();
    const NpyArray a = read_npy(path);
    if (a.dtype != dtype)
        throw Error(fmt::format("{}: holds {}, but case.json says {}", path, dtype_name(a.dtype), dtype_name(dtype)));
    if (a.shape != shape)
        throw Error(fmt::format("{}: has shape {}, but case.json says {}", path, shape_to_string(a.shape),
                                shape_to_string(shape)));
    return a.to_f64();
}

// One argument (input or output) of case.json: its spec, and its tensors' entries.
ArgSpec arg_spec_of(const CaseJson& arg, const std::string& expected_name) {
    ArgSpec spec;
    spec.name = arg.get<std::string>("name");
    if (spec.name != expected_name)
        throw Error(arg.where() + ": names '" + spec.name + "' where the proto has '" + expected_name + "'");
    spec.is_list = arg.get<bool>("is_list");
    spec.present = arg.get<bool>("present");
    const CaseJson tensors = arg.child("tensors");
    for (std::size_t t = 0; t < tensors.size(); ++t) {
        const CaseJson tensor = tensors.item(t);
        spec.tensors.push_back(TensorSpec{tensor.dtype("dtype"), tensor.get<Shape>("shape")});
    }
    if (spec.present && spec.tensors.empty()) throw Error(arg.where() + ": a present argument needs tensors");
    if (!spec.is_list && spec.tensors.size() > 1) throw Error(arg.where() + ": several tensors for a non-list argument");
    return spec;
}

}  // namespace

ExportedCase load_case_dir(const std::string& dir) {
    if (!fs::is_directory(dir)) throw Error("case directory '" + dir + "' does not exist");
    const std::string json_path = (fs::path(dir) / kCaseJson).string();
    std::ifstream f(json_path);
    if (!f) throw Error("cannot open " + json_path + " (is '" + dir + "' a directory written by hapbench export?)");
    ExportedCase c;
    c.dir = dir;
    try {
        c.meta = nlohmann::json::parse(f);
    } catch (const nlohmann::json::exception& e) {
        throw Error(json_path + ": not valid JSON: " + e.what());
    }
    const CaseJson meta(c.meta, json_path);
    if (meta.get<std::string>("format") != "hapbench-case")
        throw Error(json_path + ": field 'format' is not \"hapbench-case\"");
    if (const int version = meta.get<int>("format_version"); version != kCaseFormatVersion)
        throw Error(fmt::format("{}: case format version {}; this hapbench reads version {}", json_path, version,
                                kCaseFormatVersion));

    const std::string op = meta.get<std::string>("operator");
    const std::string proto_path = (fs::path(dir) / meta.get<std::string>("proto")).string();
    if (!fs::exists(proto_path)) throw Error(json_path + ": its proto file " + proto_path + " is missing");
    auto proto = std::make_shared<Proto>(load_proto(proto_path, op, meta.get<int>("level")));
    c.proto = proto;

    Problem& p = c.problem;
    p.proto = proto.get();
    p.spec.op = op;
    p.spec.case_id = meta.get<std::int64_t>("case_id");
    p.spec.file = json_path;
    p.spec.note = meta.raw().value("note", "");
    p.attrs = attrs_from_json(meta.at("attrs"), *proto, json_path + ": attrs");

    const CaseJson inputs = meta.child("inputs");
    if (inputs.size() != proto->inputs.size())
        throw Error(fmt::format("{}: {} inputs, but {} declares {}", json_path, inputs.size(), proto_path,
                                proto->inputs.size()));
    for (std::size_t a = 0; a < inputs.size(); ++a) {
        const CaseJson in = inputs.item(a);
        ArgSpec spec = arg_spec_of(in, proto->inputs[a].name);
        CaseInput written;
        written.present = spec.present;
        written.is_list = spec.is_list;
        if (!spec.tensors.empty()) written.dtype = spec.tensors[0].dtype;
        for (const auto& t : spec.tensors) written.shapes.push_back(t.shape);
        p.spec.inputs.push_back(written);

        ArgValuesT<double> values{spec.name, spec.present, {}};
        const CaseJson tensors = in.child("tensors");
        for (std::size_t t = 0; t < spec.tensors.size(); ++t)
            values.tensors.push_back({spec.tensors[t], load_exported(dir, tensors.item(t).get<std::string>("file"),
                                                                     spec.tensors[t].dtype, spec.tensors[t].shape)});
        c.inputs.push_back(std::move(values));
        p.inputs.push_back(std::move(spec));
    }

    const CaseJson outputs = meta.child("outputs");
    if (outputs.size() != proto->outputs.size())
        throw Error(fmt::format("{}: {} outputs, but {} declares {}", json_path, outputs.size(), proto_path,
                                proto->outputs.size()));
    for (std::size_t a = 0; a < outputs.size(); ++a) {
        const CaseJson out = outputs.item(a);
        ArgSpec spec = arg_spec_of(out, proto->outputs[a].name);
        spec.variable_length = out.raw().value("variable_length", false);
        ArgValuesT<double> golden{spec.name, spec.present, {}}, same{spec.name, spec.present, {}};
        const CaseJson tensors = out.child("tensors");
        for (std::size_t t = 0; t < spec.tensors.size(); ++t) {
            TensorSpec& ts = spec.tensors[t];
            const CaseJson tensor = tensors.item(t);
            TensorValues<double> g{ts, load_exported(dir, tensor.get<std::string>("golden"), DType::f64, ts.shape)};
            TensorValues<double> s{ts, load_exported(dir, tensor.get<std::string>("same_precision"), ts.dtype, ts.shape)};
            if (spec.variable_length) {
                // The files hold the written prefix; the judge works on the capacity.
                if (ts.shape.empty()) throw Error(tensor.where() + ": an output of data-dependent length needs a dim 0");
                const auto capacity = tensor.get<std::int64_t>("capacity");
                if (capacity < ts.shape[0])
                    throw Error(fmt::format("{}: capacity {} is below the golden's length {}", tensor.where(), capacity, ts.shape[0]));
                g.written_length = s.written_length = ts.shape[0];
                ts.shape[0] = capacity;
                g.spec = s.spec = ts;
                g.v.resize(static_cast<std::size_t>(ts.numel()));
                s.v.resize(static_cast<std::size_t>(ts.numel()));
            }
            golden.tensors.push_back(std::move(g));
            same.tensors.push_back(std::move(s));
        }
        c.golden.push_back(std::move(golden));
        c.same_precision.push_back(std::move(same));
        p.outputs.push_back(std::move(spec));
    }
    return c;
}

CandidateFile parse_candidate_arg(const std::string& arg) {
    const auto eq = arg.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
        throw Error("--output expects NAME=FILE (e.g. y=out_y.npy), not '" + arg + "'");
    return {arg.substr(0, eq), arg.substr(eq + 1)};
}

GateResult compare_case(const ExportedCase& exported, const std::vector<CandidateFile>& files) {
    const Problem& p = exported.problem;
    std::map<std::string, std::string> given;
    for (const auto& f : files)
        if (!given.emplace(f.output, f.path).second)
            throw Error("output '" + f.output + "' is given twice (--output " + f.output + "=...)");

    std::set<std::string> used;
    std::vector<std::string> missing, labels;
    ValueArgs<double> candidate = values_for_specs<double>(p.outputs);
    for (std::size_t a = 0; a < p.outputs.size(); ++a) {
        const ArgSpec& spec = p.outputs[a];
        if (!spec.present) continue;
        const OutputDef& def = p.proto->outputs.at(a);
        const bool optional = !def.compare && !def.index_gather;  // never looked at by the gate
        for (std::size_t t = 0; t < spec.tensors.size(); ++t) {
            const TensorSpec& ts = spec.tensors[t];
            const std::string label = spec.is_list ? fmt::format("{}[{}]", spec.name, t) : spec.name;
            const std::string alias = spec.is_list ? fmt::format("{}_{}", spec.name, t) : spec.name;
            labels.push_back(label);
            auto it = given.find(label);
            if (it == given.end()) it = given.find(alias);
            if (it == given.end()) {
                if (!optional) missing.push_back(label);
                continue;
            }
            used.insert(it->first);
            const std::string& path = it->second;
            const NpyArray a_file = read_npy(path, ts.dtype == DType::bf16 ? std::optional<DType>(DType::bf16) : std::nullopt);
            if (a_file.dtype != ts.dtype)
                throw Error(fmt::format("{}: output {} holds {}, but {} case {} produces {} (write the output in its own dtype)",
                                        path, label, dtype_name(a_file.dtype), p.op(), p.case_id(), dtype_name(ts.dtype)));
            if (spec.variable_length) {
                // Its dim 0 is the length the candidate reports (the judge checks it against
                // the capacity and the golden's); every other dim must match.
                const bool fits = a_file.shape.size() == ts.shape.size() && !ts.shape.empty() &&
                                  std::equal(a_file.shape.begin() + 1, a_file.shape.end(), ts.shape.begin() + 1);
                if (!fits) {
                    Shape expected = ts.shape;
                    if (!expected.empty()) expected[0] = 0;
                    throw Error(fmt::format("{}: output {} has shape {}, but {} case {} produces {} with dim 0 its data-dependent "
                                            "length (the number of entries written, at most {})",
                                            path, label, shape_to_string(a_file.shape), p.op(), p.case_id(),
                                            shape_to_string(expected), ts.shape.empty() ? 0 : ts.shape[0]));
                }
                auto& c = candidate[a].tensors[t];
                c.v = a_file.to_f64();
                c.written_length = a_file.shape[0];
                c.v.resize(static_cast<std::size_t>(ts.numel()));
                continue;
            }
            if (a_file.shape != ts.shape)
                throw Error(fmt::format("{}: output {} has shape {}, but {} case {} produces {}", path, label,
                                        shape_to_string(a_file.shape), p.op(), p.case_id(), shape_to_string(ts.shape)));
            candidate[a].tensors[t].v = a_file.to_f64();
        }
    }
    std::string all;
    for (const auto& l : labels) all += (all.empty() ? "" : ", ") + l;
    for (const auto& [name, path] : given)
        if (!used.count(name))
            throw Error("output '" + name + "' (" + path + ") is not an output of " + p.op() + " case " +
                        std::to_string(p.case_id()) + " (its outputs: " + all + ")");
    if (!missing.empty()) {
        std::string list;
        for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
        throw Error(fmt::format("{} case {} has {} compared output(s) but no file was given for {}; pass --output "
                                "NAME=FILE for each of: {}",
                                p.op(), p.case_id(), missing.size() + used.size(), list, all));
    }
    const OutputVerdictSummary verdict =
        judge_outputs(p, candidate, exported.golden,
                      SamePrecisionReference([&]() -> const ValueArgs<double>& { return exported.same_precision; }),
                      exported.inputs);
    if (verdict.gate) return *verdict.gate;
    GateResult refused;  // a length failed before the gate could run
    refused.reason = status_name(verdict.status) + ": " + verdict.reason;
    return refused;
}

}  // namespace hb
