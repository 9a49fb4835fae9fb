// One case of an operator as written in cases.yaml: shapes, dtypes, attributes, value ranges.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/shape.hpp"
#include "core/attr.hpp"

namespace hb {

struct ValueRange {
    double lo = 0;
    double hi = 1;
    bool operator==(const ValueRange& o) const;
    std::string to_string() const;  // "[-1, 1]"
};

// One input as given by a case: absent (null), one tensor, or a list of tensors.
struct CaseInput {
    bool present = true;
    bool is_list = false;
    std::vector<Shape> shapes;
    DType dtype = DType::f32;
    std::optional<ValueRange> range;  // none: the dtype's default range
};

struct CaseSpec {
    std::string op;
    std::int64_t case_id = 0;
    std::vector<CaseInput> inputs;  // one per proto input, in proto order
    AttrMap attrs;                  // as written in the case (defaults not yet applied)
    std::string note;
    std::string file;
    int line = 0;

    std::int64_t total_input_elements() const;
    std::string where() const;  // "suite/level1/exp/cases.cpu.yaml:12 (case 3)"
    // The same problem: inputs (presence, shapes, dtypes, ranges) and attributes; the id,
    // note and file do not count.
    bool same_problem(const CaseSpec& other) const;
};

}  // namespace hb
