#include "measure/cache_flush.hpp"

#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace hb {

namespace {
#if defined(__x86_64__)
__attribute__((target("clflushopt"))) void flush_lines_opt(const char* p, const char* end) {
    for (; p < end; p += 64) _mm_clflushopt(const_cast<char*>(p));
}
void flush_lines_plain(const char* p, const char* end) {
    for (; p < end; p += 64) _mm_clflush(p);
}
bool has_clflushopt() {
    static const bool supported = __builtin_cpu_supports("avx2") && [] {
        unsigned eax, ebx, ecx, edx;
        __asm__("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(7), "c"(0));
        return (ebx >> 23) & 1u;
    }();
    return supported;
}
#endif
}  // namespace

void flush_range(const void* data, std::size_t bytes) {
#if defined(__x86_64__)
    if (!data || bytes == 0) return;
    auto begin = reinterpret_cast<std::uintptr_t>(data) & ~std::uintptr_t(63);
    const char* p = reinterpret_cast<const char*>(begin);
    const char* end = static_cast<const char*>(data) + bytes;
    if (has_clflushopt()) flush_lines_opt(p, end);
    else flush_lines_plain(p, end);
#else
    (void)data;
    (void)bytes;
#endif
}

void flush_fence() {
#if defined(__x86_64__)
    _mm_mfence();
#endif
}

}  // namespace hb
