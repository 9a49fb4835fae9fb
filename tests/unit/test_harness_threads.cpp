// hapbench restarts itself with OMP_WAIT_POLICY=PASSIVE (the harness's OpenMP helpers sleep
// between regions, never spinning beside a timed kernel). Tried on a forked child, whose exec
// must keep the arguments and set the policy, and on a child that already has it.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "measure/harness_threads.hpp"

namespace hb {
namespace {

// Runs restart_with_passive_harness_threads in a child whose /proc/self/exe is this test
// binary: the restarted child lists the single test below it, which exits 0 only when the
// policy is passive in it. Returns the child's exit status.
int restart_in_child(const char* policy) {
    const pid_t pid = fork();
    if (pid == 0) {
        if (policy) setenv("OMP_WAIT_POLICY", policy, 1);
        else unsetenv("OMP_WAIT_POLICY");
        std::string filter = "--gtest_filter=HarnessThreads.PolicyIsPassiveHere";
        char* argv[] = {const_cast<char*>("hb_unit_tests"), filter.data(), nullptr};
        setenv("HB_EXPECT_PASSIVE", "1", 1);
        restart_with_passive_harness_threads(argv);
        // Already passive: no restart happened.
        _exit(harness_threads_passive() ? 0 : 3);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(HarnessThreads, PolicyIsPassiveHere) {
    if (!getenv("HB_EXPECT_PASSIVE")) GTEST_SKIP() << "run by the restart tests below";
    EXPECT_TRUE(harness_threads_passive());
    EXPECT_STRCASEEQ(getenv("OMP_WAIT_POLICY"), "PASSIVE");
}

TEST(HarnessThreads, ARestartSetsThePassivePolicyWhateverItWas) {
    EXPECT_EQ(restart_in_child(nullptr), 0);
    EXPECT_EQ(restart_in_child("ACTIVE"), 0);
    EXPECT_EQ(restart_in_child("passive"), 0);  // no restart: already passive
}

}  // namespace
}  // namespace hb
