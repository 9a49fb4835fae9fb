#include "core/huge_pages.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <string_view>

namespace hb {

namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::string_view kMallocHugePagesName = "glibc.malloc.hugetlb";
}  // namespace

void advise_huge_pages(void* data, std::size_t bytes) {
    if (bytes < kHugePage) return;
    madvise(data, bytes, MADV_HUGEPAGE);  // advice only: a kernel that cannot just says no
}

std::optional<std::string> tunables_with_malloc_huge_pages(const char* now) {
    const std::string current = now ? now : "";
    // Tunables are colon-separated name=value pairs. A value the user gave for this one is kept.
    std::size_t start = 0;
    while (start <= current.size()) {
        const std::size_t end = std::min(current.find(':', start), current.size());
        const std::string_view item(current.data() + start, end - start);
        if (item.substr(0, item.find('=')) == kMallocHugePagesName) return std::nullopt;
        start = end + 1;
    }
    const std::string setting = std::string(kMallocHugePagesName) + "=1";
    return current.empty() ? setting : current + ":" + setting;
}

}  // namespace hb
