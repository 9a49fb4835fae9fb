// The shared memory between the harness and a worker: its file only grows, so a case reuses
// the pages of the cases before it, and every mapping starts populated.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/stat.h>

#include <cstring>

#include "targets/cpu/shared_region.hpp"

namespace hb::cpu {
namespace {

off_t file_size(int fd) {
    struct stat st {};
    EXPECT_EQ(fstat(fd, &st), 0);
    return st.st_size;
}

long minor_faults() {
    rusage u{};
    getrusage(RUSAGE_THREAD, &u);
    return u.ru_minflt;
}

TEST(SharedRegion, GrowsButNeverShrinksItsFile) {
    SharedRegion region("hb_test_region");
    region.resize(1 << 20);
    EXPECT_EQ(region.bytes(), std::size_t{1} << 20);
    EXPECT_EQ(file_size(region.fd()), 1 << 20);
    std::memset(region.data(), 0x5a, region.bytes());

    region.resize(1 << 16);  // a smaller case: its mapping is smaller, the file and pages stay
    EXPECT_EQ(region.bytes(), std::size_t{1} << 16);
    EXPECT_EQ(file_size(region.fd()), 1 << 20);
    EXPECT_EQ(static_cast<unsigned char>(region.data()[100]), 0x5a);

    region.resize(3 << 20);  // a larger one grows the file
    EXPECT_EQ(file_size(region.fd()), 3 << 20);
    region.data()[region.bytes() - 1] = 1;  // mapped to its end
    EXPECT_EQ(region.data()[region.bytes() - 1], 1);
}

TEST(SharedRegion, AMappingIsPopulatedBeforeItIsTouched) {
    SharedRegion region("hb_test_region");
    region.resize(8 << 20);  // 2,048 pages of 4 KiB
    const long before = minor_faults();
    std::memset(region.data(), 1, region.bytes());
    // Without MAP_POPULATE every page faults here; a few may still (a page the kernel reclaimed).
    EXPECT_LT(minor_faults() - before, 64);
}

}  // namespace
}  // namespace hb::cpu
