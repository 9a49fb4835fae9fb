// Tests that read the reference benchmark's task data beside the repository
// (../shared/reference/cann-bench-tasks, which the repository may not copy) skip where it is
// absent, as in a clone on its own. CI always has it, so there (CI set, as CI services set it)
// a missing directory fails the test: a skip in CI is coverage lost without anyone noticing.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace hb::test {

// The reference task data, where CI and the development machines keep it.
inline std::string shared_reference_tasks_dir() { return std::string(HB_SOURCE_DIR) + "/../shared/reference/cann-bench-tasks"; }

// Whether this process runs in CI: CI is set to anything but "", "0" or "false" (GitHub and
// GitLab set "true", others "1").
inline bool running_in_ci() {
    const char* ci = std::getenv("CI");
    if (!ci) return false;
    const std::string value = ci;
    return !value.empty() && value != "0" && value != "false";
}

enum class MissingData { present, skip, fail };

// What a test that needs `dir` does here.
inline MissingData when_missing(const std::string& dir) {
    if (std::filesystem::is_directory(dir)) return MissingData::present;
    return running_in_ci() ? MissingData::fail : MissingData::skip;
}

}  // namespace hb::test

// At the top of a test body: returns from the test, skipped outside CI and failed in CI, when
// `dir` is not a directory.
#define HB_REQUIRE_SHARED_DIRECTORY(dir)                                                                            \
    do {                                                                                                            \
        const std::string hb_required_dir_ = (dir);                                                                 \
        switch (::hb::test::when_missing(hb_required_dir_)) {                                                       \
            case ::hb::test::MissingData::present: break;                                                           \
            case ::hb::test::MissingData::fail:                                                                     \
                FAIL() << hb_required_dir_ << " is missing; CI (CI=" << std::getenv("CI")                           \
                       << ") always has it, so this test fails here instead of skipping";                           \
            case ::hb::test::MissingData::skip: GTEST_SKIP() << hb_required_dir_ << " is not here (outside CI: skipped)"; \
        }                                                                                                           \
    } while (0)
