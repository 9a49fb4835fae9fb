// An operator's interface as declared in its proto.yaml (reference task-directory layout).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/attr.hpp"

namespace hb {

struct AttrDef {
    std::string name;
    AttrType type = AttrType::none;
    bool required = false;
    std::optional<AttrValue> default_value;
};

struct InputDef {
    std::string name;
    std::vector<DType> dtypes;
    bool is_list = false;
    bool optional = false;
};

// Validation of index outputs whose order among ties is free: the values the indices
// select from `input` along `dim_attr` must equal `value_output`, or the `value_reduce`
// ("amax", "amin") of the input along that dim. `distinct`: the indices of one slice must
// name distinct elements (a selection such as top_k takes each element once; cummin's
// indices repeat legitimately).
struct IndexGather {
    std::string input;
    std::string dim_attr;
    std::string value_output;
    std::string value_reduce;
    std::string keepdim_attr;
    bool distinct = false;
};

struct OutputDef {
    std::string name;
    std::vector<DType> dtypes;
    bool is_list = false;
    bool compare = true;
    std::optional<IndexGather> index_gather;
};

struct Proto {
    std::string op;            // task directory name, e.g. "swi_glu"
    std::string display_name;  // operator.name, e.g. "SwiGlu"
    std::string category;
    int level = 0;
    std::string schema;
    std::vector<AttrDef> attrs;
    std::vector<InputDef> inputs;
    std::vector<OutputDef> outputs;
    std::map<DType, double> tau_overrides;  // precision_thresholds
    std::string file;

    const AttrDef* find_attr(const std::string& name) const;
};

Proto load_proto(const std::string& path, const std::string& op_dir_name, int level);

}  // namespace hb
