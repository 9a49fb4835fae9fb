// Draws cases by the rules of methodology section 2. The generic part (regime, element
// budget, alignment, dtype, value-range group) is decided here; each operator turns a
// draw into shapes and attributes (Operator::sample_case) with the helpers below.
#pragma once

#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/rng.hpp"
#include "core/shape.hpp"
#include "spec/case_spec.hpp"
#include "spec/profile.hpp"

namespace hb {

enum class RangeGroup {
    symmetric_small,
    symmetric_medium,
    symmetric_large,
    asymmetric,
    type_boundary,
    special_inf,
    special_nan,
    zero,
};
std::string range_group_name(RangeGroup g);
// The group a range belongs to (for the rules checker); boundary ranges need the dtype.
RangeGroup classify_range(const ValueRange& r, DType dtype);

struct CaseDraw {
    Regime regime = Regime::small;
    std::int64_t target_elements = 0;  // total over all inputs, approximately
    bool aligned = false;
    DType dtype = DType::f32;
    RangeGroup range_group = RangeGroup::symmetric_small;
    ValueRange range;
    int index = 0;  // position of the case in its batch (0-based), for cycling attributes
};

class CaseSampler {
  public:
    CaseSampler(Rng& rng, const Profile& profile, CaseDraw draw) : rng_(rng), profile_(profile), draw_(draw) {}

    Rng& rng() { return rng_; }
    const CaseDraw& draw() const { return draw_; }
    const Profile& profile() const { return profile_; }

    // A shape of `rank` dims with about `elements` elements. Aligned: the innermost
    // dimension is a multiple of 512 bytes of `dtype`; otherwise an odd, often prime
    // size. `inner_multiple` forces the innermost size to a multiple (e.g. 2 for swi_glu).
    Shape shape(std::int64_t elements, int rank, DType dtype, bool aligned, std::int64_t inner_multiple = 1);
    int pick_rank(int lo, int hi);
    template <typename T>
    const T& pick(const std::vector<T>& options) {
        return options[static_cast<std::size_t>(rng_.uniform_int(0, static_cast<std::int64_t>(options.size()) - 1))];
    }

    // Deterministic coverage: the case at batch position i takes options[i % size], so a
    // batch of 20 cases meets every value of an attribute with up to 20 values.
    template <typename T>
    const T& cycle(const std::vector<T>& options) {
        return options[static_cast<std::size_t>(draw_.index) % options.size()];
    }

  private:
    Rng& rng_;
    const Profile& profile_;
    CaseDraw draw_;
};

// True when the innermost dimension of the shape is a multiple of 512 bytes.
bool is_aligned(const Shape& shape, DType dtype);

}  // namespace hb
