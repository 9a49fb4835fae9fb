// Exporting one case as NumPy files (`hapbench export`): its inputs, the fp64 golden, the
// same-precision reference, a copy of the operator's proto.yaml and a case.json that
// describes them; the layout is documented in docs/case-files.md and read back by
// eval/case_compare.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/tensor.hpp"
#include "core/attr.hpp"
#include "spec/proto.hpp"
#include "suite/case_selection.hpp"

namespace hb {

inline constexpr int kCaseFormatVersion = 1;
inline constexpr const char* kCaseJson = "case.json";
inline constexpr const char* kCaseProto = "proto.yaml";

struct CaseExportOptions {
    std::string op;
    std::int64_t case_id = 0;
    std::string tasks_dir;
    std::string profile = "cpu";
    SplitChoice split;  // its case_ids are ignored: `case_id` names the case
    std::uint64_t eval_seed = 0;
    std::string dir;  // created when missing; files in it are overwritten
};

struct CaseExport {
    std::string dir;
    std::vector<std::string> files;  // every file written, relative to dir
    nlohmann::json case_json;
};

// Resolves the case exactly as `hapbench eval` does (same task reader, hidden-split
// generator, input generator, golden and same-precision reference) and writes it to
// options.dir.
CaseExport export_case(const CaseExportOptions& options);

// File name of tensor `index` of an argument: "<prefix>_<name>.npy", and for a tensor
// list "<prefix>_<name>_<index>.npy".
std::string case_tensor_file(const std::string& prefix, const std::string& arg_name, bool is_list,
                             std::size_t index);

// Attributes in case.json: null, numbers, booleans, strings and lists, typed back by the
// proto's attribute types; non-finite floats as the strings "inf", "-inf", "nan".
nlohmann::json attrs_to_json(const AttrMap& attrs);
AttrMap attrs_from_json(const nlohmann::json& attrs, const Proto& proto, const std::string& where);

}  // namespace hb
