// core/buffer: page-aligned, zeroed memory, also when a released mapping is reused; guard pages
// and read-only protection survive reuse correctly; large buffers ask for huge pages.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdint>
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

TEST(Buffer, ASmallerBufferTakesALargerMappingZeroedWithItsGuardAtTheEnd) {
    const std::size_t large = (4u << 20) + 300, small = (3u << 20) + 100;  // small >= large / 2
    char* large_end = nullptr;
    {
        Buffer b(large, true);
        std::memset(b.data(), 0xcd, large);
        large_end = static_cast<char*>(b.data()) + large;
    }
    Buffer again(small, true);
    char* end = static_cast<char*>(again.data()) + small;
    EXPECT_EQ(end, large_end) << "the larger mapping is reused, the data ending at its guard page";
    const auto* p = static_cast<const unsigned char*>(again.data());
    std::size_t nonzero = 0;
    for (std::size_t i = 0; i < small; ++i) nonzero += p[i] != 0;
    EXPECT_EQ(nonzero, 0u);
    EXPECT_DEATH({ *end = 1; }, "");
}

TEST(Buffer, AMappingMoreThanTwiceTheSizeIsNotTaken) {
    const std::size_t large = 9u << 20, small = 4u << 20;
    const void* first = nullptr;
    {
        Buffer b(large);
        first = b.data();
    }
    Buffer again(small);
    EXPECT_NE(again.data(), first);
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
    const Buffer large(64u << 20), small(1u << 20);
    const std::string large_flags = vm_flags_at(large.data()), small_flags = vm_flags_at(small.data());
    ASSERT_FALSE(large_flags.empty());
    EXPECT_NE(large_flags.find(" hg"), std::string::npos) << large_flags;  // MADV_HUGEPAGE
    ASSERT_FALSE(small_flags.empty());
    EXPECT_EQ(small_flags.find(" hg"), std::string::npos) << small_flags;
}

}  // namespace
}  // namespace hb
