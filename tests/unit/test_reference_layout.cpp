// hapbench reads the reference benchmark's task layout (for Ascend users, who have it).
// The data stays in ../shared/reference beside the repo; the tests skip where it is absent,
// except in CI (shared_reference.hpp).
#include <gtest/gtest.h>

#include <filesystem>

#include "ops/registry.hpp"
#include "shared_reference.hpp"
#include "ops/resolve.hpp"
#include "suite/task_dir.hpp"

namespace hb {
namespace {

const std::string reference_dir = test::shared_reference_tasks_dir();

TEST(ReferenceLayout, EveryOperatorAndCaseReads) {
    HB_REQUIRE_SHARED_DIRECTORY(reference_dir);
    const TaskDir dir = load_task_dir(reference_dir, "cpu");
    EXPECT_EQ(dir.tasks.size(), 53u);
    std::size_t cases = 0;
    for (const auto& t : dir.tasks) {
        EXPECT_EQ(t.cases.size(), 20u) << t.op;
        EXPECT_NE(t.cases_file.find("/cases.yaml"), std::string::npos) << "falls back to cases.yaml";
        cases += t.cases.size();
    }
    EXPECT_EQ(cases, 1060u);
}

TEST(ReferenceLayout, ImplementedOperatorsResolveEveryReferenceCase) {
    HB_REQUIRE_SHARED_DIRECTORY(reference_dir);
    const TaskDir dir = load_task_dir(reference_dir, "cpu");
    for (const auto& t : dir.tasks) {
        const Operator* op = find_operator(t.op);
        if (!op) continue;
        for (const auto& c : t.cases) {
            EXPECT_NO_THROW({
                const Problem p = resolve_problem(t.proto, *op, c);
                op->work(p);
            }) << c.where();
        }
    }
}

}  // namespace
}  // namespace hb
