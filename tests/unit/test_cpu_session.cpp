// The worker's CPU-time limit (RLIMIT_CPU, docs/security.md) ends a kernel that spins and is
// reported as RESOURCE_LIMIT. Through `hapbench eval` the limit is the operator's budget times
// its threads plus 60 s, so the wall-clock budget always ends a spinning kernel first
// (TIMEOUT); here a session is opened with a 1 s limit and a distant deadline, so that only
// the limit can stop it.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "core/cpu_affinity.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "suite/task_dir.hpp"
#include "targets/target.hpp"

namespace hb {
namespace {

namespace fs = std::filesystem;

TEST(CpuSession, SpinningPastTheCpuTimeLimitIsAResourceLimit) {
    setenv("HAPBENCH_WORKER", HB_WORKER_BIN, 1);
    const fs::path dir = fs::temp_directory_path() / ("hb_test_cpu_session_" + std::to_string(getpid()));
    fs::create_directories(dir);
    const auto target = make_target("cpu");
    // Never returns: `for (;;)` on one thread.
    const BuildResult built = target->build("gelu", std::string(HB_TEST_DATA_DIR) + "/bad_submission/gelu.cpp", dir.string(), 300);
    ASSERT_TRUE(built.ok) << built.log;
    ASSERT_TRUE(built.rejection.empty()) << built.rejection;

    const TaskDir tasks = load_task_dir(std::string(HB_SOURCE_DIR) + "/suite", "cpu", {"gelu"});
    const Operator* op = find_operator("gelu");
    ASSERT_NE(op, nullptr);
    const Problem problem = resolve_problem(tasks.tasks.at(0).proto, *op, tasks.tasks.at(0).cases.at(0));

    SessionOptions options;
    options.threads = 1;
    options.cpus = {allowed_cpus().front()};
    options.log_path = (dir / "gelu.log").string();
    options.cpu_limit_s = 1;
    const auto session = target->open_session("gelu", built.library_path, options);
    const auto deadline = Clock::now() + std::chrono::seconds(120);
    const CallResult loaded = session->load_case(problem, 1, deadline);
    ASSERT_EQ(loaded.outcome, RunOutcome::ok) << loaded.message;
    const CallResult r = session->call(0, deadline, CallCheck::thorough);
    EXPECT_EQ(r.outcome, RunOutcome::resource_limit) << r.message;
    EXPECT_NE(r.message.find("CPU time"), std::string::npos) << r.message;
    session->close();
    fs::remove_all(dir);
}

}  // namespace
}  // namespace hb
