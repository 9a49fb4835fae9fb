#include "core/cpu_affinity.hpp"

#include <sched.h>

namespace hb {

std::vector<int> cpus_of(pid_t tid) {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (sched_getaffinity(tid, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set)) cpus.push_back(c);
    return cpus;
}

std::vector<int> allowed_cpus() {
    std::vector<int> cpus = cpus_of(0);
    if (cpus.empty()) cpus.push_back(0);
    return cpus;
}

bool bind_to_cpus(pid_t tid, const std::vector<int>& cpus) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus)
        if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
    return sched_setaffinity(tid, sizeof set, &set) == 0;
}

}  // namespace hb
