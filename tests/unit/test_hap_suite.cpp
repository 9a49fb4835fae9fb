// Every shipped hardware model computes T_HW for every case of the shipped suite, under both
// conventions: a work model that states an op class or dtype some unit cannot serve, or a
// formula count in a dtype a model has no convention rate for, fails here, not in a user's
// `hapbench hap` run (gcd's integer divide once had no rate on the NVIDIA SFU).
#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.hpp"
#include "hap/convention.hpp"
#include "hap/hardware_model.hpp"
#include "hap/hardware_source.hpp"
#include "hap/solver.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "shared_reference.hpp"
#include "suite/task_dir.hpp"

namespace hb {
namespace {

// "" when every implemented case solves under both conventions; else the first failures, one
// per line.
std::string failures_on(const TaskDir& dir, const HardwareModel& model) {
    std::string failures;
    int count = 0;
    for (const auto& entry : dir.tasks) {
        const Operator* op = find_operator(entry.op);
        if (!op) continue;
        for (const auto& c : entry.cases) {
            for (Convention convention : {Convention::hapbench, Convention::cann_bench}) {
                try {
                    const Problem p = resolve_problem(entry.proto, *op, c);
                    const HapResult r = t_hw_under(convention, p, op->work(p), model);
                    if (!(r.t_hw_us > 0) || r.bottleneck_group.empty())
                        throw Error("T_HW " + std::to_string(r.t_hw_us) + ", bottleneck '" + r.bottleneck_group + "'");
                } catch (const Error& e) {
                    if (++count <= 5)
                        failures += std::string(convention_name(convention)) + ": " + entry.op + " case " +
                                    std::to_string(c.case_id) + ": " + e.what() + "\n";
                }
            }
        }
    }
    return count ? std::to_string(count) + " cases fail, first:\n" + failures : "";
}

TEST(HapSuite, EveryShippedModelSolvesEveryShippedCase) {
    const TaskDir dir = load_task_dir(std::string(HB_SOURCE_DIR) + "/suite", "cpu");
    ASSERT_GE(dir.tasks.size(), 24u);
    for (const auto& name : known_hardware_models()) {
        SCOPED_TRACE(name);
        EXPECT_EQ(failures_on(dir, load_hardware_model(name)), "");
    }
}

TEST(HapSuite, EveryShippedModelSolvesTheReferenceCases) {
    const std::string reference = test::shared_reference_tasks_dir();
    HB_REQUIRE_SHARED_DIRECTORY(reference);
    const TaskDir dir = load_task_dir(reference, "cpu");
    for (const auto& name : known_hardware_models()) {
        SCOPED_TRACE(name);
        EXPECT_EQ(failures_on(dir, load_hardware_model(name)), "");
    }
}

}  // namespace
}  // namespace hb
