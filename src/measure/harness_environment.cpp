#include "measure/harness_environment.hpp"

#include <strings.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/huge_pages.hpp"

namespace hb {

namespace {
constexpr const char* kRestartedMarker = "HAPBENCH_RESTARTED";
}  // namespace

bool harness_threads_passive() {
    const char* policy = std::getenv("OMP_WAIT_POLICY");
    return policy && strcasecmp(policy, "passive") == 0;
}

void restart_with_harness_environment(char** argv) {
    // Once only: a loader that drops a setting (glibc erases tunables for set-user-ID programs)
    // must not make the program restart for ever.
    if (std::getenv(kRestartedMarker)) return;
    std::vector<std::pair<std::string, std::string>> wanted;
    if (!harness_threads_passive()) wanted.emplace_back("OMP_WAIT_POLICY", "PASSIVE");
    if (const auto tunables = tunables_with_malloc_huge_pages(std::getenv("GLIBC_TUNABLES")))
        wanted.emplace_back("GLIBC_TUNABLES", *tunables);
    if (wanted.empty()) return;
    wanted.emplace_back(kRestartedMarker, "1");
    std::vector<std::pair<std::string, std::optional<std::string>>> before;
    for (const auto& [name, value] : wanted) {
        const char* was = std::getenv(name.c_str());
        before.emplace_back(name, was ? std::optional<std::string>(was) : std::nullopt);
        setenv(name.c_str(), value.c_str(), 1);
    }
    // The binary's own path, not /proc/self/exe, so that the process keeps its name (ps, perf).
    char self[4096];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        execv(self, argv);
    }
    // The restart failed: this process's libraries keep what they read.
    for (const auto& [name, was] : before) {
        if (was) setenv(name.c_str(), was->c_str(), 1);
        else unsetenv(name.c_str());
    }
}

}  // namespace hb
