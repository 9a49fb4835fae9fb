// hapbench restarts itself with OMP_WAIT_POLICY=PASSIVE (the harness's OpenMP helpers sleep
// between regions, never spinning beside a timed kernel) and malloc's huge pages asked for.
// Tried on a forked child, whose exec must keep the arguments and set both, and on a child
// that already has them.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "core/huge_pages.hpp"
#include "measure/harness_environment.hpp"

namespace hb {
namespace {

// Runs restart_with_harness_environment in a child whose /proc/self/exe is this test
// binary: the restarted child lists the single test below it, which exits 0 only when the
// policy is passive and the tunables name glibc.malloc.hugetlb in it. Returns the child's exit
// status.
int restart_in_child(const char* policy, const char* tunables = nullptr, bool restarted_before = false) {
    const pid_t pid = fork();
    if (pid == 0) {
        if (restarted_before) setenv("HAPBENCH_RESTARTED", "1", 1);
        else unsetenv("HAPBENCH_RESTARTED");
        if (policy) setenv("OMP_WAIT_POLICY", policy, 1);
        else unsetenv("OMP_WAIT_POLICY");
        if (tunables) setenv("GLIBC_TUNABLES", tunables, 1);
        else unsetenv("GLIBC_TUNABLES");
        std::string filter = "--gtest_filter=HarnessEnvironment.IsSetHere";
        char* argv[] = {const_cast<char*>("hb_unit_tests"), filter.data(), nullptr};
        setenv("HB_EXPECT_PASSIVE", "1", 1);
        restart_with_harness_environment(argv);
        // Already set: no restart happened.
        _exit(harness_threads_passive() && !tunables_with_malloc_huge_pages(getenv("GLIBC_TUNABLES")) ? 0 : 3);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(HarnessEnvironment, IsSetHere) {
    if (!getenv("HB_EXPECT_PASSIVE")) GTEST_SKIP() << "run by the restart tests below";
    EXPECT_TRUE(harness_threads_passive());
    EXPECT_STRCASEEQ(getenv("OMP_WAIT_POLICY"), "PASSIVE");
    ASSERT_NE(getenv("GLIBC_TUNABLES"), nullptr);
    EXPECT_EQ(tunables_with_malloc_huge_pages(getenv("GLIBC_TUNABLES")), std::nullopt) << getenv("GLIBC_TUNABLES");
    if (const char* kept = getenv("HB_EXPECT_TUNABLES")) {
        EXPECT_STREQ(getenv("GLIBC_TUNABLES"), kept);
    }
}

TEST(HarnessEnvironment, ARestartSetsThePassivePolicyWhateverItWas) {
    EXPECT_EQ(restart_in_child(nullptr), 0);
    EXPECT_EQ(restart_in_child("ACTIVE"), 0);
    EXPECT_EQ(restart_in_child("passive"), 0);
}

TEST(HarnessEnvironment, ARestartAsksMallocForHugePagesAndKeepsOtherTunables) {
    setenv("HB_EXPECT_TUNABLES", "glibc.malloc.check=0:glibc.malloc.hugetlb=1", 1);
    EXPECT_EQ(restart_in_child("PASSIVE", "glibc.malloc.check=0"), 0);
    setenv("HB_EXPECT_TUNABLES", "glibc.malloc.hugetlb=0", 1);
    EXPECT_EQ(restart_in_child("ACTIVE", "glibc.malloc.hugetlb=0"), 0);  // the user's choice stays
    unsetenv("HB_EXPECT_TUNABLES");
    EXPECT_EQ(restart_in_child("passive", "glibc.malloc.hugetlb=1"), 0);  // no restart: all set
}

TEST(HarnessEnvironment, AProgramRestartsOnceOnly) {
    // Restarted before (a loader that dropped a setting): it goes on as it is, policy unset.
    EXPECT_EQ(restart_in_child("ACTIVE", nullptr, true), 3);
}

TEST(HarnessEnvironment, TunablesWithMallocHugePages) {
    EXPECT_EQ(tunables_with_malloc_huge_pages(nullptr), "glibc.malloc.hugetlb=1");
    EXPECT_EQ(tunables_with_malloc_huge_pages(""), "glibc.malloc.hugetlb=1");
    EXPECT_EQ(tunables_with_malloc_huge_pages("glibc.malloc.check=0"), "glibc.malloc.check=0:glibc.malloc.hugetlb=1");
    EXPECT_EQ(tunables_with_malloc_huge_pages("a=1:glibc.malloc.hugetlb=2"), std::nullopt);
    EXPECT_EQ(tunables_with_malloc_huge_pages("glibc.malloc.hugetlb=0:b=2"), std::nullopt);
    // A longer name that begins like it is another tunable.
    EXPECT_EQ(tunables_with_malloc_huge_pages("glibc.malloc.hugetlbx=0"), "glibc.malloc.hugetlbx=0:glibc.malloc.hugetlb=1");
}

}  // namespace
}  // namespace hb
