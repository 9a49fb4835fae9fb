#include "suite/split.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "ops/operator.hpp"
#include "spec/case_sampler.hpp"

namespace hb {

namespace {

constexpr RangeGroup all_groups[] = {RangeGroup::symmetric_small, RangeGroup::type_boundary,
                                     RangeGroup::special_inf,     RangeGroup::special_nan,
                                     RangeGroup::zero,            RangeGroup::symmetric_medium,
                                     RangeGroup::symmetric_large, RangeGroup::asymmetric};

ValueRange concrete_range(RangeGroup g, DType dtype, const Operator& op, Rng& rng) {
    auto pick = [&](std::initializer_list<double> v) {
        return *(v.begin() + rng.uniform_int(0, static_cast<std::int64_t>(v.size()) - 1));
    };
    switch (g) {
        case RangeGroup::symmetric_small: { double a = pick({0.1, 0.25, 0.5, 1, 2, 3}); return {-a, a}; }
        case RangeGroup::symmetric_medium: { double a = pick({10, 20, 50, 100, 200}); return {-a, a}; }
        case RangeGroup::symmetric_large: { double a = pick({1000, 2000, 5000, 10000}); return {-a, a}; }
        case RangeGroup::asymmetric: {
            static const ValueRange options[] = {{-1, 2}, {-5, 10}, {-2, 5}, {-0.5, 3}, {-3, 1}, {-10, 4}};
            return options[rng.uniform_int(0, 5)];
        }
        case RangeGroup::type_boundary: return op.boundary_range(dtype);
        case RangeGroup::special_inf: return {-INFINITY, INFINITY};
        case RangeGroup::special_nan: return {NAN, NAN};
        case RangeGroup::zero: return {0, 0};
    }
    return {0, 1};
}

std::string human_count(std::int64_t n) {
    char buf[32];
    if (n >= 1'000'000) std::snprintf(buf, sizeof buf, "%.1fM", n / 1e6);
    else if (n >= 1000) std::snprintf(buf, sizeof buf, "%.0fK", n / 1e3);
    else std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(n));
    return buf;
}

std::string identity_key(const CaseSpec& c) {
    std::string key = attrs_to_string(c.attrs);
    for (const auto& in : c.inputs) {
        key += "|";
        if (!in.present) continue;
        key += std::string(dtype_name(in.dtype)) + (in.range ? in.range->to_string() : "");
    }
    return key;
}

}  // namespace

std::vector<CaseSpec> generate_cases(const Operator& op, const Proto& proto, const Profile& suite_profile,
                                     std::uint64_t seed, int count, std::int64_t first_case_id) {
    if (count <= 0) return {};
    const Profile profile = op.case_profile(suite_profile);
    Rng rng(seed ^ 0x68617062656e6368ull);  // "hapbench"
    const auto& dtypes = proto.inputs.at(0).dtypes;
    if (dtypes.empty()) throw Error(proto.file + ": the first input lists no dtypes");

    // Plan the batch so that its composition meets the rules: regimes in thirds, at most
    // 40% aligned, every dtype and every value-range group present.
    std::vector<Regime> regimes;
    for (int i = 0; i < count; ++i) regimes.push_back(static_cast<Regime>(i % 3));
    std::vector<char> aligned(static_cast<std::size_t>(count), 0);
    if (op.can_align())
        for (int i = 0; i < count * 2 / 5; ++i) aligned[static_cast<std::size_t>(i)] = 1;
    std::vector<DType> dtype_plan;
    for (int i = 0; i < count; ++i) dtype_plan.push_back(dtypes[static_cast<std::size_t>(i) % dtypes.size()]);
    std::vector<RangeGroup> group_plan;
    for (int i = 0; i < count; ++i) group_plan.push_back(all_groups[static_cast<std::size_t>(i) % std::size(all_groups)]);
    auto shuffle = [&](auto& v) {
        for (std::size_t i = v.size(); i > 1; --i)
            std::swap(v[i - 1], v[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(i) - 1))]);
    };
    shuffle(regimes);
    shuffle(aligned);
    shuffle(dtype_plan);
    shuffle(group_plan);
    // An aligned case in a regime too small for any aligned case of the operator trades its
    // alignment with a non-aligned case of a regime that can hold one (the first such).
    auto regime_top = [&](Regime r) {
        return r == Regime::small ? profile.small_below : r == Regime::medium ? profile.medium_below : profile.max_elements;
    };
    for (std::size_t i = 0; i < aligned.size(); ++i) {
        if (!aligned[i] || regime_top(regimes[i]) > op.min_aligned_elements(dtype_plan[i])) continue;
        for (std::size_t j = 0; j < aligned.size(); ++j)
            if (!aligned[j] && regime_top(regimes[j]) > op.min_aligned_elements(dtype_plan[j])) {
                std::swap(aligned[i], aligned[j]);
                break;
            }
    }

    std::vector<CaseSpec> out;
    std::set<std::int64_t> sizes_seen;
    std::set<std::string> identities_seen;
    for (int i = 0; i < count; ++i) {
        const auto idx = static_cast<std::size_t>(i);
        CaseSpec best;
        bool accepted = false;
        for (int attempt = 0; attempt < 64 && !accepted; ++attempt) {
            CaseDraw draw;
            draw.regime = regimes[idx];
            draw.aligned = aligned[idx] != 0;
            draw.dtype = dtype_plan[idx];
            draw.range_group = group_plan[idx];
            draw.index = i;
            draw.range = concrete_range(draw.range_group, draw.dtype, op, rng);
            const double lo = draw.regime == Regime::small ? profile.min_elements
                              : draw.regime == Regime::medium ? profile.small_below : profile.medium_below;
            const double hi = draw.regime == Regime::small ? profile.small_below
                              : draw.regime == Regime::medium ? profile.medium_below : profile.max_elements;
            draw.target_elements = static_cast<std::int64_t>(std::exp(rng.uniform(std::log(lo * 1.05), std::log(hi * 0.9))));

            CaseSpec c;
            c.op = proto.op;
            c.case_id = first_case_id + i;
            c.inputs.resize(proto.inputs.size());
            for (std::size_t k = 0; k < proto.inputs.size(); ++k) {
                c.inputs[k].is_list = proto.inputs[k].is_list;
                c.inputs[k].present = !proto.inputs[k].optional;
                c.inputs[k].dtype = draw.dtype;
                c.inputs[k].range = draw.range;
            }
            CaseSampler sampler(rng, profile, draw);
            op.sample_case(sampler, c);
            const auto total = c.total_input_elements();
            bool aligned_now = true;
            for (const auto& in : c.inputs)
                if (in.present)
                    for (const auto& s : in.shapes) aligned_now = aligned_now && is_aligned(s, in.dtype);
            c.note = regime_name(profile.regime_of(total)) + "-" + std::string(dtype_name(draw.dtype)) + "-" +
                     human_count(total) + "-" + (aligned_now ? "aligned" : "non-aligned") + "-" +
                     range_group_name(draw.range_group);
            best = c;
            accepted = total >= profile.min_elements && total <= profile.max_elements &&
                       !sizes_seen.count(total) && aligned_now == draw.aligned &&
                       // Prefer a new (attributes, dtypes, ranges) combination; operators with
                       // few attributes run out of them, so it is a preference, not a rule.
                       (attempt >= 32 || !identities_seen.count(identity_key(c)));
        }
        if (!accepted)
            throw Error(op.name() + ": could not draw a case that meets the suite rules for case " +
                        std::to_string(first_case_id + i), ExitCode::internal);
        sizes_seen.insert(best.total_input_elements());
        identities_seen.insert(identity_key(best));
        out.push_back(std::move(best));
    }
    return out;
}

}  // namespace hb
