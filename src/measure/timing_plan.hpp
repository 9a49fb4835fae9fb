// How many calls to time: warmup, then at least min_repeat timed calls, more for short
// calls until target_s of timed work or max_repeat (the stopping rule, as a strategy).
#pragma once

namespace hb {

struct TimingPlan {
    int warmup = 3;
    int min_repeat = 5;
    int max_repeat = 200;
    double target_s = 0.1;
    // Bytes of rotated input copies a worker may hold at once; beyond it addresses repeat.
    double pool_bytes = 2.0 * 1024 * 1024 * 1024;

    // Timed calls for a call that takes about estimate_s.
    int repeat_for(double estimate_s) const;
};

}  // namespace hb
