#include "ops/broadcast_sampling.hpp"

namespace hb {

const std::vector<BroadcastPattern> all_broadcast_patterns = {
    BroadcastPattern::same,         BroadcastPattern::x2_row, BroadcastPattern::x2_trailing,
    BroadcastPattern::x1_broadcast, BroadcastPattern::both,   BroadcastPattern::x2_column};

void sample_broadcast_shapes(CaseSampler& sampler, BroadcastPattern pattern, std::int64_t elements, DType dtype,
                             bool aligned, Shape& x1, Shape& x2) {
    // The innermost-dim broadcast makes x2's innermost size 1, which is never aligned.
    if (pattern == BroadcastPattern::x2_column && aligned) pattern = BroadcastPattern::x2_row;
    switch (pattern) {
        case BroadcastPattern::same: {
            x1 = sampler.shape(elements / 2, sampler.pick_rank(1, 5), dtype, aligned);
            x2 = x1;
            return;
        }
        case BroadcastPattern::x2_row:
        case BroadcastPattern::x2_trailing:
        case BroadcastPattern::x1_broadcast: {
            const int rank = sampler.pick_rank(2, 5);
            Shape full = sampler.shape(elements * 9 / 10, rank, dtype, aligned);
            Shape small = full;
            if (pattern == BroadcastPattern::x2_trailing) {
                const auto keep = sampler.rng().uniform_int(1, rank - 1);
                small.erase(small.begin(), small.end() - keep);
            } else {
                // Set some outer dims to 1 (at least the first) and, in the reverse direction,
                // drop a leading dim too when there are several.
                small[0] = 1;
                for (int d = 1; d + 1 < rank; ++d)
                    if (pattern == BroadcastPattern::x2_row || sampler.rng().uniform01() < 0.5) small[d] = 1;
                if (pattern == BroadcastPattern::x1_broadcast && rank > 2) small.erase(small.begin());
            }
            if (pattern == BroadcastPattern::x1_broadcast) {
                x1 = small;
                x2 = full;
            } else {
                x1 = full;
                x2 = small;
            }
            return;
        }
        case BroadcastPattern::both: {
            // x1 [A, 1, C] and x2 [B, C] with B in 2..3 give y [A, B, C]; x1 takes half of the
            // element budget so that y stays within 1.5 times it; half the time a leading
            // dim of 2 adds rank.
            const std::int64_t b = sampler.rng().uniform_int(2, 3);
            const Shape base = sampler.shape(elements / 2, 2, dtype, aligned);
            x1 = {base[0], 1, base[1]};
            x2 = {b, base[1]};
            if (sampler.rng().uniform01() < 0.5 && base[0] % 2 == 0) {
                x1 = {2, base[0] / 2, 1, base[1]};
                x2 = {1, 1, b, base[1]};
            }
            return;
        }
        case BroadcastPattern::x2_column: {
            const int rank = sampler.pick_rank(2, 5);
            x1 = sampler.shape(elements * 9 / 10, rank, dtype, aligned);
            x2 = x1;
            x2.back() = 1;
            if (rank > 2) x2[0] = 1;
            return;
        }
    }
}

}  // namespace hb
