#include "measure/harness_threads.hpp"

#include <strings.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace hb {

bool harness_threads_passive() {
    const char* policy = std::getenv("OMP_WAIT_POLICY");
    return policy && strcasecmp(policy, "passive") == 0;
}

void restart_with_passive_harness_threads(char** argv) {
    if (harness_threads_passive()) return;
    const char* was = std::getenv("OMP_WAIT_POLICY");
    const std::string before = was ? was : "";
    if (setenv("OMP_WAIT_POLICY", "PASSIVE", 1) != 0) return;
    // The binary's own path, not /proc/self/exe, so that the process keeps its name (ps, perf).
    char self[4096];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        execv(self, argv);
    }
    // The restart failed: this process's libgomp keeps the policy it read.
    if (was) setenv("OMP_WAIT_POLICY", before.c_str(), 1);
    else unsetenv("OMP_WAIT_POLICY");
}

}  // namespace hb
