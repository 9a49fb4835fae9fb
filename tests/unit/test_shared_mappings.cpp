// Both sides of the shared memory: the harness's regions (targets/cpu/shared_region.hpp),
// mapped once as long as the reserve, and the worker's mappings of them
// (targets/cpu/worker/shared_mappings.hpp), kept for a case that fits, made anew (at least the
// reserve long) for one that does not, with a case's guard pages ordinary again for the next.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "targets/cpu/shared_region.hpp"
#include "targets/cpu/worker/shared_mappings.hpp"

namespace hb::worker {
namespace {

TEST(SharedRegion, MapsTheReserveOnceAndKeepsItForCasesThatFit) {
    cpu::SharedRegion r("hb-test-region");
    r.resize(1000, 1 << 20);
    EXPECT_EQ(r.bytes(), 1000u);
    EXPECT_EQ(r.mapped_bytes(), std::size_t{1} << 20);
    char* data = r.data();
    r.data()[(1 << 20) - 1] = 7;  // the reserve is mapped and backed
    r.resize(1 << 19, 1 << 20);
    EXPECT_EQ(r.data(), data);
    EXPECT_EQ(r.bytes(), std::size_t{1} << 19);
    r.resize(1 << 20);
    EXPECT_EQ(r.data(), data) << "a case as large as the reserve maps nothing new";
    r.resize(2 << 20);
    EXPECT_EQ(r.mapped_bytes(), std::size_t{2} << 20);
    EXPECT_EQ(r.data()[(1 << 20) - 1], 7) << "the memfd keeps its contents when it grows";
}

struct Memfd {
    explicit Memfd(std::size_t bytes) : fd(memfd_create("hb-test-region", MFD_CLOEXEC)) {
        EXPECT_GE(fd, 0);
        EXPECT_EQ(ftruncate(fd, static_cast<off_t>(bytes)), 0);
    }
    ~Memfd() { close(fd); }
    int fd;
};

// Whether the page at `p` can be read: write() of one byte from it into a pipe fails with
// EFAULT when the page is inaccessible, where a plain read would end the test.
bool readable(const char* p) {
    int pipes[2];
    if (pipe(pipes) != 0) return false;
    const bool ok = write(pipes[1], p, 1) == 1;  // EFAULT from a page that cannot be read
    close(pipes[0]);
    close(pipes[1]);
    return ok;
}

TEST(SharedMappings, KeepsAMappingACaseFitsInAndRestoresTheGuards) {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    Memfd in(64 * page), out(64 * page);
    SharedMappings m(in.fd, out.fd);
    ASSERT_EQ(m.fit(8 * page, 8 * page, 16 * page, 16 * page), "");
    char* inputs = m.inputs();
    char* outputs = m.outputs();
    ASSERT_NE(inputs, nullptr);
    ASSERT_NE(outputs, nullptr);
    // Mapped as far as the reserve: a page past the case's own bytes is there.
    EXPECT_TRUE(readable(inputs + 15 * page));
    EXPECT_TRUE(readable(outputs + 15 * page));
    outputs[15 * page] = 1;

    m.guard(inputs + 2 * page, page, false);
    m.guard(outputs + 3 * page, page, true);
    EXPECT_FALSE(readable(inputs + 2 * page));
    EXPECT_FALSE(readable(outputs + 3 * page));

    // A smaller case: the same mappings, and last case's guard pages are ordinary again.
    ASSERT_EQ(m.fit(4 * page, 12 * page), "");
    EXPECT_EQ(m.inputs(), inputs);
    EXPECT_EQ(m.outputs(), outputs);
    EXPECT_TRUE(readable(inputs + 2 * page));
    EXPECT_TRUE(readable(outputs + 3 * page));
    outputs[3 * page] = 2;  // writable again (a fault would end the test)
    EXPECT_EQ(outputs[3 * page], 2);

    // A larger case than the mappings hold: mapped anew, as long as it needs.
    ASSERT_EQ(m.fit(32 * page, 40 * page), "");
    EXPECT_TRUE(readable(m.inputs() + 31 * page));
    EXPECT_TRUE(readable(m.outputs() + 39 * page));
    EXPECT_EQ(m.outputs()[15 * page], 1) << "the same memory, seen through the new mapping";
}

TEST(SharedMappings, AnUnmappableRegionIsAnError) {
    SharedMappings m(-1, -1);
    EXPECT_NE(m.fit(4096, 4096).find("cannot map"), std::string::npos);
}

}  // namespace
}  // namespace hb::worker
