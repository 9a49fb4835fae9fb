// The tests that need the reference task data beside the repository skip without it outside
// CI and fail without it in CI (tests/shared_reference.hpp).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "shared_reference.hpp"

namespace hb::test {
namespace {

const char* const nowhere = "/nonexistent/hapbench-shared-reference-test";

// Sets CI for the scope of a test and puts the caller's value back.
class CiVariable {
  public:
    CiVariable() {
        if (const char* v = std::getenv("CI")) saved_ = v;
    }
    ~CiVariable() {
        if (saved_) setenv("CI", saved_->c_str(), 1);
        else unsetenv("CI");
    }
    void set(const char* value) {
        if (value) setenv("CI", value, 1);
        else unsetenv("CI");
    }

  private:
    std::optional<std::string> saved_;
};

void require_missing_directory() { HB_REQUIRE_SHARED_DIRECTORY(nowhere); }

TEST(SharedReference, MissingDirectorySkipsOutsideCi) {
    CiVariable ci;
    for (const char* outside : {static_cast<const char*>(nullptr), "", "0", "false"}) {
        ci.set(outside);
        EXPECT_FALSE(running_in_ci()) << (outside ? outside : "(unset)");
        EXPECT_EQ(when_missing(nowhere), MissingData::skip) << (outside ? outside : "(unset)");
    }
}

TEST(SharedReference, MissingDirectoryFailsInCi) {
    CiVariable ci;
    for (const char* inside : {"true", "1"}) {
        ci.set(inside);
        EXPECT_TRUE(running_in_ci()) << inside;
        EXPECT_EQ(when_missing(nowhere), MissingData::fail) << inside;
    }
    ci.set("true");
    EXPECT_FATAL_FAILURE(require_missing_directory(), "CI (CI=true) always has it");
}

TEST(SharedReference, PresentDirectoryRunsEverywhere) {
    CiVariable ci;
    ci.set("true");
    EXPECT_EQ(when_missing(HB_SOURCE_DIR), MissingData::present);
    ci.set(nullptr);
    EXPECT_EQ(when_missing(HB_SOURCE_DIR), MissingData::present);
}

}  // namespace
}  // namespace hb::test
