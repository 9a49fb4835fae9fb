#include "suite/case_rules.hpp"

#include <fmt/format.h>

#include <map>
#include <set>

#include "ops/operator.hpp"
#include "spec/case_sampler.hpp"

namespace hb {

std::vector<std::string> check_case_rules(const std::vector<CaseSpec>& cases, const Proto& proto, const Operator& op,
                                          const Profile& suite_profile) {
    const Profile profile = op.case_profile(suite_profile);
    std::vector<std::string> problems;
    const std::string who = proto.op + ": ";
    if (cases.empty()) return {who + "no cases"};
    std::map<Regime, int> regimes;
    std::set<RangeGroup> groups;
    std::set<DType> dtypes;
    std::map<std::int64_t, std::int64_t> size_owner;
    int non_aligned = 0;
    for (const auto& c : cases) {
        const std::string id = fmt::format("case {}", c.case_id);
        const auto total = c.total_input_elements();
        if (total < profile.min_elements || total > profile.max_elements)
            problems.push_back(who + fmt::format("{} has {} input elements, outside the {} profile's [{}, {}]", id, total,
                                                 profile.name, profile.min_elements, profile.max_elements));
        ++regimes[profile.regime_of(total)];
        bool aligned = true;
        for (const auto& in : c.inputs)
            if (in.present)
                for (const auto& s : in.shapes) aligned = aligned && is_aligned(s, in.dtype);
        if (!aligned) ++non_aligned;
        for (const auto& in : c.inputs) {
            if (!in.present) continue;
            if (in.range) {
                const auto boundary = op.boundary_range(in.dtype);
                groups.insert(*in.range == boundary ? RangeGroup::type_boundary : classify_range(*in.range, in.dtype));
            }
        }
        if (c.inputs.at(0).present) dtypes.insert(c.inputs.at(0).dtype);
        if (auto [it, fresh] = size_owner.emplace(total, c.case_id); !fresh)
            problems.push_back(who + fmt::format("{} has the same total element count ({}) as case {}", id, total, it->second));
    }
    const int n = static_cast<int>(cases.size());
    for (Regime r : {Regime::small, Regime::medium, Regime::large})
        if (regimes[r] < std::max(1, n / 5))
            problems.push_back(who + fmt::format("only {} {} cases (want at least {} of {})", regimes[r], regime_name(r),
                                                 std::max(1, n / 5), n));
    if (non_aligned * 2 < n)
        problems.push_back(who + fmt::format("only {} of {} cases are non-aligned (want at least half)", non_aligned, n));
    for (RangeGroup g : {RangeGroup::symmetric_small, RangeGroup::type_boundary, RangeGroup::special_inf,
                         RangeGroup::special_nan, RangeGroup::zero})
        if (!groups.count(g) && n >= 8) problems.push_back(who + "no case uses a " + range_group_name(g) + " value range");
    for (DType d : proto.inputs.at(0).dtypes)
        if (!dtypes.count(d) && n >= static_cast<int>(proto.inputs.at(0).dtypes.size()))
            problems.push_back(who + "no case uses dtype " + std::string(dtype_name(d)));
    return problems;
}

}  // namespace hb
