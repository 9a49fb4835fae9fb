// The golden cache (eval/golden_cache): entries come back as stored, rounded to the output
// dtype; the directory stays within its limit while a run stores; and a cache never fails an
// evaluation: an entry too large for it, a disk nearly full or a write that fails leaves the
// entry unstored, counted and explained.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/cache_dir.hpp"
#include "eval/golden_cache.hpp"

namespace hb {
namespace {

namespace fs = std::filesystem;

// One f32 output of `n` elements.
Problem problem_of(std::int64_t n) {
    Problem p;
    p.spec.op = "exp";
    p.spec.case_id = 0;
    p.outputs = {ArgSpec{"y", false, true, {TensorSpec{DType::f32, {n}}}}};
    return p;
}

ValueArgs<double> values_of(const Problem& p, double first) {
    ValueArgs<double> v = values_for_specs<double>(p.outputs);
    for (std::size_t i = 0; i < v[0].one().v.size(); ++i) v[0].one().v[i] = first + static_cast<double>(i) / 3;
    return v;
}

std::string key_of(int k) { return "ab" + std::to_string(1000 + k); }

class GoldenCacheTest : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("hb-golden-cache-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::uint64_t bytes_on_disk() const {
        std::uint64_t total = 0;
        for (const auto& e : fs::recursive_directory_iterator(dir_))
            if (e.is_regular_file()) total += e.file_size();
        return total;
    }
    fs::path dir_;
};

TEST_F(GoldenCacheTest, AnEntryComesBackRoundedToItsDtype) {
    const Problem p = problem_of(100);
    GoldenCache cache(dir_.string(), 1 << 20, 0);
    cache.store(key_of(0), values_of(p, 1.0));
    const auto loaded = cache.load(key_of(0), p);
    ASSERT_TRUE(loaded.has_value());
    for (std::size_t i = 0; i < 100; ++i)
        EXPECT_EQ((*loaded)[0].one().v[i], static_cast<double>(static_cast<float>(1.0 + static_cast<double>(i) / 3)));
    EXPECT_FALSE(cache.load(key_of(1), p).has_value());
    EXPECT_FALSE(cache.load(key_of(0), problem_of(99)).has_value()) << "an entry of another shape is not this case's";
    EXPECT_EQ(cache.not_stored(), 0);
}

TEST_F(GoldenCacheTest, TheDirectoryStaysWithinItsLimitWhileStoring) {
    const Problem p = problem_of(1024);  // about 4.2 KB an entry
    const std::uint64_t limit = 20 << 10;
    GoldenCache cache(dir_.string(), limit, 0);
    for (int k = 0; k < 12; ++k) {
        cache.store(key_of(k), values_of(p, k));
        EXPECT_LE(bytes_on_disk(), limit) << "after entry " << k;
        EXPECT_EQ(cache.bytes(), bytes_on_disk()) << "after entry " << k;
        EXPECT_TRUE(cache.load(key_of(k), p).has_value()) << "the entry just stored stays";
    }
    EXPECT_EQ(cache.not_stored(), 0);
}

TEST_F(GoldenCacheTest, ASmallerLimitAppliesFromTheStart) {
    const Problem p = problem_of(1024);
    {
        GoldenCache cache(dir_.string(), 1 << 20, 0);
        for (int k = 0; k < 8; ++k) cache.store(key_of(k), values_of(p, k));
    }
    ASSERT_GT(bytes_on_disk(), 30u << 10);
    const GoldenCache smaller(dir_.string(), 10 << 10, 0);
    EXPECT_LE(bytes_on_disk(), 10u << 10);
    EXPECT_EQ(smaller.bytes(), bytes_on_disk());
}

TEST_F(GoldenCacheTest, AnEntryOverAQuarterOfTheLimitIsNotStored) {
    const Problem p = problem_of(1024);
    GoldenCache cache(dir_.string(), 8 << 10, 0);  // a quarter: 2 KB
    cache.store(key_of(0), values_of(p, 0));
    EXPECT_FALSE(cache.load(key_of(0), p).has_value());
    EXPECT_EQ(cache.not_stored(), 1);
    EXPECT_NE(cache.not_stored_reason().find("quarter of the cache's limit"), std::string::npos) << cache.not_stored_reason();
}

TEST_F(GoldenCacheTest, AnEntryThatWouldFillTheDiskIsNotStored) {
    const Problem p = problem_of(16);
    GoldenCache cache(dir_.string(), 1 << 20, std::uint64_t{1} << 62);  // no disk has that much free
    cache.store(key_of(0), values_of(p, 0));
    EXPECT_FALSE(cache.load(key_of(0), p).has_value());
    EXPECT_EQ(cache.not_stored(), 1);
    EXPECT_NE(cache.not_stored_reason().find("MiB free"), std::string::npos) << cache.not_stored_reason();
}

TEST_F(GoldenCacheTest, AFailedWriteTurnsStoringOffWithoutFailingTheRun) {
    // The cache directory's parent is a regular file: nothing can be created under it (even by root).
    fs::create_directories(dir_);
    std::ofstream(dir_ / "a-file") << "x";
    const Problem p = problem_of(16);
    GoldenCache cache((dir_ / "a-file" / "goldens").string(), 1 << 20, 0);
    EXPECT_NO_THROW(cache.store(key_of(0), values_of(p, 0)));
    EXPECT_NO_THROW(cache.store(key_of(1), values_of(p, 1)));
    EXPECT_EQ(cache.not_stored(), 2);
    EXPECT_NE(cache.not_stored_reason().find("storing is off for the rest of the run"), std::string::npos)
        << cache.not_stored_reason();
    EXPECT_FALSE(cache.load(key_of(0), p).has_value());
}

TEST(TrimDirectory, RemovesTheOldestFirstAndSaysWhatIsLeft) {
    const fs::path dir = fs::temp_directory_path() / ("hb-trim-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "sub");
    const auto now = fs::file_time_type::clock::now();
    for (int k = 0; k < 4; ++k) {
        const fs::path f = dir / "sub" / ("f" + std::to_string(k));
        std::ofstream(f) << std::string(1000, 'x');
        fs::last_write_time(f, now - std::chrono::hours(10 - k));  // f0 the oldest
    }
    const Trimmed t = trim_directory(dir.string(), 2500);
    EXPECT_EQ(t.removed, 2000u);
    EXPECT_EQ(t.kept, 2000u);
    EXPECT_FALSE(fs::exists(dir / "sub" / "f0"));
    EXPECT_FALSE(fs::exists(dir / "sub" / "f1"));
    EXPECT_TRUE(fs::exists(dir / "sub" / "f3"));
    fs::remove_all(dir);
}

}  // namespace
}  // namespace hb
