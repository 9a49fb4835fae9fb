#include "measure/harness_threads.hpp"

#include <sched.h>

#include <atomic>

#include <omp.h>

namespace hb {

int lower_harness_helpers_to_idle() {
    std::atomic<int> lowered{0};
#pragma omp parallel
    {
        // Linux applies the policy to the calling thread when the id is 0.
        const sched_param param{};
        if (omp_get_thread_num() != 0 && sched_setscheduler(0, SCHED_IDLE, &param) == 0) ++lowered;
    }
    return lowered.load();
}

}  // namespace hb
