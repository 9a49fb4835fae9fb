#include "spec/case_spec.hpp"

#include "core/attr.hpp"

namespace hb {

bool ValueRange::operator==(const ValueRange& o) const {
    auto same = [](double a, double b) { return a == b || (a != a && b != b); };
    return same(lo, o.lo) && same(hi, o.hi);
}

std::string ValueRange::to_string() const {
    std::string text = "[";  // appended: GCC 12 warns (-Wrestrict, a false positive) on the + chain
    text.append(AttrValue::of_float(lo).to_string()).append(", ").append(AttrValue::of_float(hi).to_string()).append("]");
    return text;
}

std::int64_t CaseSpec::total_input_elements() const {
    std::int64_t total = 0;
    for (const auto& in : inputs)
        if (in.present)
            for (const auto& s : in.shapes) total += numel(s);
    return total;
}

std::string CaseSpec::where() const {
    return file + ":" + std::to_string(line) + " (" + op + " case " + std::to_string(case_id) + ")";
}

bool CaseSpec::same_problem(const CaseSpec& o) const {
    if (inputs.size() != o.inputs.size() || !(attrs == o.attrs)) return false;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const CaseInput& x = inputs[i];
        const CaseInput& y = o.inputs[i];
        if (x.present != y.present || x.is_list != y.is_list || x.shapes != y.shapes || x.dtype != y.dtype ||
            x.range.has_value() != y.range.has_value() || (x.range && !(*x.range == *y.range)))
            return false;
    }
    return true;
}

}  // namespace hb
