// The harness binds a worker's threads from outside: the main thread on the allotment's first
// CPU, the others one CPU each in thread-id order, a single thread on the whole allotment.
// Tried on a child process with a second thread, as the harness does it to the worker.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include "core/cpu_affinity.hpp"
#include "targets/cpu/thread_placement.hpp"

namespace hb::cpu {
namespace {

// A child with `extra` threads besides its main one, all asleep until killed.
pid_t start_child(int extra) {
    const pid_t pid = fork();
    if (pid == 0) {
        for (int t = 0; t < extra; ++t) std::thread([] { for (;;) pause(); }).detach();
        for (;;) pause();
    }
    return pid;
}

std::vector<pid_t> wait_for_threads(pid_t pid, std::size_t count) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    std::vector<pid_t> ids;
    while ((ids = thread_ids(pid)).size() != count && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return ids;
}

void stop_child(pid_t pid) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
}

TEST(ThreadPlacement, TheRuleSpreadsThreadsOneCpuEachAndLeavesALoneThreadTheAllotment) {
    const std::vector<int> allotment{3, 5};
    EXPECT_EQ(cpus_for_thread(0, 1, allotment), allotment);
    EXPECT_EQ(cpus_for_thread(0, 2, allotment), std::vector<int>{3});
    EXPECT_EQ(cpus_for_thread(1, 2, allotment), std::vector<int>{5});
    EXPECT_EQ(cpus_for_thread(2, 4, allotment), std::vector<int>{3});
    EXPECT_EQ(cpus_for_thread(3, 4, allotment), std::vector<int>{5});
    EXPECT_TRUE(cpus_for_thread(0, 2, {}).empty());
}

TEST(ThreadPlacement, ThreadIdsListTheMainThreadFirst) {
    const pid_t child = start_child(2);
    ASSERT_GT(child, 0);
    const std::vector<pid_t> ids = wait_for_threads(child, 3);
    ASSERT_EQ(ids.size(), 3u);
    EXPECT_EQ(ids[0], child);
    EXPECT_LT(ids[1], ids[2]);
    stop_child(child);
    EXPECT_TRUE(thread_ids(child).empty());
}

TEST(ThreadPlacement, BindsAnotherProcessesThreadsAndOnlyWhenTheyChange) {
    const std::vector<int> allotment = cpus_of(0);
    ASSERT_FALSE(allotment.empty());
    const pid_t child = start_child(1);
    ASSERT_GT(child, 0);
    const std::vector<pid_t> ids = wait_for_threads(child, 2);
    ASSERT_EQ(ids.size(), 2u);

    ThreadPlacement placement(allotment);
    EXPECT_TRUE(placement.update(child));
    EXPECT_EQ(cpus_of(ids[0]), std::vector<int>{allotment[0]});
    EXPECT_EQ(cpus_of(ids[1]), std::vector<int>{allotment[1 % allotment.size()]});
    EXPECT_FALSE(placement.update(child));  // the same threads: nothing to do
    EXPECT_EQ(placement.placements(), 1);
    placement.forget();
    EXPECT_TRUE(placement.update(child));  // a new worker (same pid here): bound again
    stop_child(child);
    EXPECT_FALSE(placement.update(child));  // gone: nothing to bind

    const pid_t lone = start_child(0);
    ASSERT_GT(lone, 0);
    ASSERT_EQ(wait_for_threads(lone, 1).size(), 1u);
    EXPECT_TRUE(placement.update(lone));
    EXPECT_EQ(cpus_of(lone), allotment);
    stop_child(lone);
}

}  // namespace
}  // namespace hb::cpu
