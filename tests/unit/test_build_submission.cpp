// eval/build_submission: every operator built once, as many at a time as asked and no more;
// a build that throws is reported after the others have finished.
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "eval/build_submission.hpp"

namespace hb {
namespace {

// A target whose builds count how many run at once. Until `gather` builds have run together,
// each waits (at most 5 s) for the others: a stage that built one at a time would reach only 1.
class CountingTarget final : public Target {
  public:
    std::string name() const override { return "counting"; }
    std::string hardware_kind() const override { return "cpu"; }
    std::string build_description() const override { return "none"; }
    std::string compiler_version() const override { return "none"; }
    bool confines_files() const override { return false; }
    BuildResult build(const std::string& op, const std::string& source_path, const std::string& out_dir,
                      double) const override {
        {
            std::unique_lock lock(mutex_);
            most_ = std::max(most_, ++running_);
            built_.insert(op);
            gathered_ = gathered_ || running_ >= gather;
            changed_.notify_all();
            changed_.wait_for(lock, std::chrono::seconds(5), [&] { return gathered_; });
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        {
            std::lock_guard lock(mutex_);
            --running_;
        }
        if (op == throws_for) throw std::runtime_error("cannot start the compiler for " + op);
        BuildResult b;
        b.ok = op != "broken";
        b.library_path = out_dir + "/" + op + ".so";
        b.log = source_path;
        return b;
    }
    std::unique_ptr<KernelSession> open_session(const std::string&, const std::string&,
                                                const SessionOptions&) const override {
        return nullptr;
    }

    std::string throws_for;
    int gather = 1;
    int most() const { return most_; }
    std::set<std::string> built() const { return built_; }

  private:
    mutable std::mutex mutex_;
    mutable std::condition_variable changed_;
    mutable int running_ = 0;
    mutable bool gathered_ = false;
    mutable int most_ = 0;
    mutable std::set<std::string> built_;
};

std::vector<std::pair<std::string, std::string>> sources(int n) {
    std::vector<std::pair<std::string, std::string>> s;
    for (int i = 0; i < n; ++i) s.emplace_back("op" + std::to_string(i), "/sub/op" + std::to_string(i) + ".cpp");
    s.emplace_back("broken", "/sub/broken.cpp");
    return s;
}

TEST(BuildSubmission, BuildsEveryOperatorOnceAtMostJobsAtATime) {
    for (int jobs : {1, 2, 3}) {
        CountingTarget target;
        target.gather = jobs;
        const SubmissionBuild b = build_submission(target, sources(6), "/out", 10, jobs);
        ASSERT_EQ(b.results.size(), 7u) << jobs;
        EXPECT_EQ(target.built().size(), 7u);
        EXPECT_EQ(target.most(), jobs) << "builds running at once";
        EXPECT_TRUE(b.results.at("op3").ok);
        EXPECT_EQ(b.results.at("op3").log, "/sub/op3.cpp");
        EXPECT_EQ(b.results.at("op3").library_path, "/out/op3.so");
        EXPECT_FALSE(b.results.at("broken").ok) << "a failed build is a result, not an error";
        EXPECT_GT(b.seconds, 0);
    }
}

TEST(BuildSubmission, NoSourcesBuildNothing) {
    CountingTarget target;
    const SubmissionBuild b = build_submission(target, {}, "/out", 10, 2);
    EXPECT_TRUE(b.results.empty());
    EXPECT_EQ(target.most(), 0);
}

TEST(BuildSubmission, ABuildThatThrowsIsRethrownAfterTheOthersFinish) {
    CountingTarget target;
    target.gather = 2;
    target.throws_for = "op1";
    EXPECT_THROW(build_submission(target, sources(4), "/out", 10, 2), std::runtime_error);
    EXPECT_EQ(target.built().size(), 5u) << "the other builds still ran";
}

}  // namespace
}  // namespace hb
