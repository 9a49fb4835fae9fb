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

}  // namespace hb
