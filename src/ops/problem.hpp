// A resolved case: the case as written, its proto, attributes with defaults applied, and
// the input and output argument specs. Everything downstream works from a Problem.
#pragma once

#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "spec/case_spec.hpp"
#include "spec/proto.hpp"

namespace hb {

struct Problem {
    const Proto* proto = nullptr;
    CaseSpec spec;
    AttrMap attrs;                 // every proto attribute, defaults applied
    std::vector<ArgSpec> inputs;   // proto order
    std::vector<ArgSpec> outputs;  // proto order, from the operator's shape inference

    const std::string& op() const { return spec.op; }
    std::int64_t case_id() const { return spec.case_id; }
    double attr_float(const std::string& name) const;
    std::int64_t attr_int(const std::string& name) const;
    bool attr_bool(const std::string& name) const;
    std::string attr_string(const std::string& name) const;
    const AttrValue& attr(const std::string& name) const;
    const ArgSpec& input(const std::string& name) const;
    // Error message prefix: "exp case 3: "
    std::string context() const;
    // Everything that decides the case's inputs and outputs, as exact text (floats in hex):
    // operator, case id, each input's dtype, shapes and value range, every attribute. Two
    // problems with the same canonical text are the same case (cache keys).
    std::string canonical() const;
};

}  // namespace hb
