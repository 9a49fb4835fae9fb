// core/buffer: page-aligned, zeroed memory, also when a released mapping is reused (unless its
// caller overwrites it whole); guard pages and read-only protection survive reuse correctly;
// large buffers ask for huge pages.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "core/buffer.hpp"

namespace hb {
namespace {

TEST(Buffer, AReusedMappingIsZeroedAgain) {
    const std::size_t bytes = 3u << 20;  // large enough to be kept when released
    const void* first = nullptr;
    {
        Buffer b(bytes);
        first = b.data();
        std::memset(b.data(), 0xab, bytes);
    }
    Buffer again(bytes);
    EXPECT_EQ(again.data(), first) << "a released large mapping of the same size is reused";
    const auto* p = static_cast<const unsigned char*>(again.data());
    std::size_t nonzero = 0;
    for (std::size_t i = 0; i < bytes; ++i) nonzero += p[i] != 0;
    EXPECT_EQ(nonzero, 0u);
}

// A buffer its caller overwrites whole is not zeroed on reuse (the saving it exists for), and
// is writable and page-aligned like any other; the zeroed kind still is zeroed after it.
TEST(Buffer, AnOverwrittenBufferSkipsTheZeroingOfAReusedMapping) {
    const std::size_t bytes = 5u << 20;
    const void* first = nullptr;
    {
        Buffer b(bytes);
        first = b.data();
        std::memset(b.data(), 0xcd, bytes);
    }
    {
        Buffer again(bytes, false, Buffer::Contents::overwritten);
        ASSERT_EQ(again.data(), first);
        EXPECT_EQ(static_cast<const unsigned char*>(again.data())[bytes / 2], 0xcd) << "not zeroed again";
        std::memset(again.data(), 0x11, bytes);
    }
    Buffer zeroed(bytes);
    const auto* p = static_cast<const unsigned char*>(zeroed.data());
    std::size_t nonzero = 0;
    for (std::size_t i = 0; i < bytes; ++i) nonzero += p[i] != 0;
    EXPECT_EQ(nonzero, 0u);
}

TEST(Buffer, AReadOnlyBufferIsWritableWhenReused) {
    const std::size_t bytes = 2u << 20;
    { Buffer b(bytes); b.protect_read_only(true); }
    Buffer again(bytes);
    std::memset(again.data(), 1, bytes);  // would fault if the protection had stayed
    EXPECT_EQ(static_cast<unsigned char*>(again.data())[bytes - 1], 1);
}

TEST(Buffer, AGuardPageFollowsTheDataAfterReuse) {
    const std::size_t bytes = (2u << 20) + 100;
    { Buffer b(bytes, true); }
    Buffer again(bytes, true);
    char* end = static_cast<char*>(again.data()) + bytes;
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(end) % 4096, 0u);
    EXPECT_DEATH({ *end = 1; }, "");
}

// Each reuse test runs in a fresh process (the "threadsafe" death-test style runs the test
// binary again for the statement), so that no mapping another test, or an earlier repeat,
// released can be the smallest that holds a buffer here. Each returns whether all held, and
// says on stderr what did not.
bool all_zero(const Buffer& b, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(b.data());
    for (std::size_t i = 0; i < bytes; ++i)
        if (p[i] != 0) return false;
    return true;
}

bool smaller_guarded_buffer_ends_at_the_larger_mappings_guard() {
    const std::size_t large = (4u << 20) + 300, small = (3u << 20) + 100;
    char* large_end = nullptr;
    {
        Buffer b(large, true);
        std::memset(b.data(), 0xcd, large);
        large_end = static_cast<char*>(b.data()) + large;
    }
    Buffer again(small, true);
    char* end = static_cast<char*>(again.data()) + small;
    const bool ok = end == large_end && all_zero(again, small);
    if (!ok) std::fprintf(stderr, "end %p, the larger mapping's data ended at %p\n", static_cast<void*>(end), static_cast<void*>(large_end));
    // The first byte past the data is the guard page.
    if (ok && fork() == 0) {
        *end = 1;
        _exit(0);
    }
    int status = 0;
    wait(&status);
    return ok && WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
}

bool two_smaller_buffers_share_a_larger_mapping() {
    const std::size_t large = 9u << 20, small = 4u << 20;
    char* first = nullptr;
    {
        Buffer b(large);
        first = static_cast<char*>(b.data());
        std::memset(first, 0xcd, large);
    }
    Buffer one(small), two(small);
    const bool ok = one.data() == first && two.data() == first + small && all_zero(one, small) && all_zero(two, small);
    if (!ok) std::fprintf(stderr, "one %p two %p, the released mapping %p\n", one.data(), two.data(), static_cast<void*>(first));
    return ok;
}

TEST(Buffer, ASmallerBufferTakesALargerMappingZeroedWithItsGuardAtTheEnd) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(std::exit(smaller_guarded_buffer_ends_at_the_larger_mappings_guard() ? 0 : 1),
                testing::ExitedWithCode(0), "");
}

TEST(Buffer, AMuchSmallerBufferTakesPartOfALargerMappingAndLeavesTheRestForTheNext) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(std::exit(two_smaller_buffers_share_a_larger_mapping() ? 0 : 1), testing::ExitedWithCode(0), "");
}

// The VmFlags line of the mapping of /proc/self/smaps that holds `address` ("" if none).
std::string vm_flags_at(const void* address) {
    std::ifstream smaps("/proc/self/smaps");
    const auto at = reinterpret_cast<std::uintptr_t>(address);
    bool inside = false;
    for (std::string line; std::getline(smaps, line);) {
        std::uintptr_t begin = 0, end = 0;
        char dash = 0;
        std::istringstream range(line);
        if (range >> std::hex >> begin >> dash >> end && dash == '-' && line.find(':') > line.find(' ')) {
            inside = begin <= at && at < end;
            continue;
        }
        if (inside && line.rfind("VmFlags:", 0) == 0) return line;
    }
    return "";
}

TEST(Buffer, ALargeBufferAsksForHugePagesAndASmallOneDoesNot) {
    if (!std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled")) GTEST_SKIP() << "a kernel without huge pages";
    // The small one is under the size the mapping cache keeps, so it is always a fresh mapping
    // (a kept one may be part of a large mapping that asked for huge pages).
    const Buffer large(64u << 20), small((1u << 20) - 4096);
    const std::string large_flags = vm_flags_at(large.data()), small_flags = vm_flags_at(small.data());
    ASSERT_FALSE(large_flags.empty());
    EXPECT_NE(large_flags.find(" hg"), std::string::npos) << large_flags;  // MADV_HUGEPAGE
    ASSERT_FALSE(small_flags.empty());
    EXPECT_EQ(small_flags.find(" hg"), std::string::npos) << small_flags;
}

}  // namespace
}  // namespace hb
