#include "core/buffer.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iterator>
#include <mutex>
#include <vector>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "core/huge_pages.hpp"

namespace hb {

namespace {
std::size_t page_size() {
    static const std::size_t size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    return size;
}
std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// Released mappings kept for the next buffer: a case allocates buffers of the same few sizes
// again and again (each timed call's verification, each kept call), the next case sizes like
// it, and a fresh mapping costs a page fault and a zeroed page per page, which memset on a
// reused one beats several times over (on a 2-vCPU AMD EPYC guest, 1.4 to 2.9 ms per MB the
// first time, most of the harness's system time). A buffer takes the smallest kept mapping
// that holds it; what it leaves of a larger one goes back to the cache as a mapping of its
// own, so that memory once touched serves every later size, not only sizes within a factor
// of two (tuned sigmoid, 20 cases: the harness's peak anonymous memory, every MB of it
// touched once, 1406 -> 1182 MB). Only large mappings are kept, at most kCacheBytes in all;
// the oldest go first.
constexpr std::size_t kCachedMin = 1u << 20;
constexpr std::size_t kCacheBytes = std::size_t{1} << 30;

struct CachedMapping {
    void* mapping;
    std::size_t bytes;
    bool guard;  // its last page is a PROT_NONE guard page
};

class MappingCache {
  public:
    // A kept mapping of exactly `bytes` (a guard page at its end when `guard`), carved from the
    // smallest that holds it; null when none does. `bytes` is a whole number of pages.
    void* take(std::size_t bytes, bool guard) {
        if (bytes < kCachedMin) return nullptr;
        std::lock_guard lock(mutex_);
        auto best = kept_.end();
        for (auto it = kept_.begin(); it != kept_.end(); ++it)
            if (it->guard == guard && it->bytes >= bytes && (best == kept_.end() || it->bytes < best->bytes)) best = it;
        if (best == kept_.end()) return nullptr;
        const CachedMapping found = *best;
        total_ -= found.bytes;
        kept_.erase(best);
        const std::size_t rest = found.bytes - bytes;
        if (rest == 0) return found.mapping;
        // A guarded buffer takes the tail (its data ends at the guard page), anything else the
        // head; the rest is kept unguarded, or unmapped when too small to keep.
        char* base = static_cast<char*>(found.mapping);
        char* taken = guard ? base + rest : base;
        char* left = guard ? base : base + bytes;
        if (rest < kCachedMin) munmap(left, rest);
        else {
            kept_.push_back({left, rest, false});
            total_ += rest;
        }
        return taken;
    }
    // False when the mapping is not kept (the caller unmaps it).
    bool give(void* mapping, std::size_t bytes, bool guard) {
        if (bytes < kCachedMin || bytes > kCacheBytes) return false;
        std::lock_guard lock(mutex_);
        while (total_ + bytes > kCacheBytes && !kept_.empty()) {
            munmap(kept_.front().mapping, kept_.front().bytes);
            total_ -= kept_.front().bytes;
            kept_.erase(kept_.begin());
        }
        kept_.push_back({mapping, bytes, guard});
        total_ += bytes;
        return true;
    }

  private:
    std::mutex mutex_;
    std::vector<CachedMapping> kept_;
    std::size_t total_ = 0;
};

MappingCache& mapping_cache() {
    static MappingCache* cache = new MappingCache;  // never destroyed: buffers outlive statics
    return *cache;
}
}  // namespace

Buffer::Buffer(std::size_t bytes, bool guard_page, Contents contents) : bytes_(bytes) {
    const std::size_t page = page_size();
    const std::size_t body = round_up(bytes == 0 ? 1 : bytes, page);
    mapped_bytes_ = body + (guard_page ? page : 0);
    guard_ = guard_page;
    if ((mapping_ = mapping_cache().take(mapped_bytes_, guard_page))) {
        if (contents == Contents::zeroed) std::memset(mapping_, 0, body);  // its guard page, if any, is still PROT_NONE
    } else {
        mapping_ = mmap(nullptr, mapped_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (mapping_ != MAP_FAILED) advise_huge_pages(mapping_, body);
    }
    if (mapping_ == MAP_FAILED) {
        mapping_ = nullptr;
        throw Error("cannot allocate " + std::to_string(bytes) + " bytes: " + std::strerror(errno),
                    ExitCode::internal);
    }
    if (guard_page) {
        mprotect(static_cast<char*>(mapping_) + body, page, PROT_NONE);
        // The data ends exactly at the guard page so that the first byte past it faults.
        data_ = static_cast<char*>(mapping_) + (body - bytes);
    } else {
        data_ = mapping_;
    }
}

Buffer Buffer::borrow(void* data, std::size_t bytes) {
    Buffer b;
    b.data_ = data;
    b.bytes_ = bytes;
    return b;
}

Buffer::~Buffer() { release(); }

Buffer::Buffer(Buffer&& other) noexcept { *this = std::move(other); }

Buffer& Buffer::operator=(Buffer&& other) noexcept {
    if (this != &other) {
        release();
        mapping_ = std::exchange(other.mapping_, nullptr);
        mapped_bytes_ = std::exchange(other.mapped_bytes_, 0);
        data_ = std::exchange(other.data_, nullptr);
        bytes_ = std::exchange(other.bytes_, 0);
        guard_ = std::exchange(other.guard_, false);
        read_only_ = std::exchange(other.read_only_, false);
    }
    return *this;
}

void Buffer::protect_read_only(bool read_only) {
    if (!mapping_) return;
    const std::size_t page = page_size();
    auto* begin = reinterpret_cast<char*>(reinterpret_cast<std::uintptr_t>(data_) / page * page);
    const std::size_t length = round_up(static_cast<char*>(data_) + bytes_ - begin, page);
    mprotect(begin, length, read_only ? PROT_READ : PROT_READ | PROT_WRITE);
    read_only_ = read_only;
}

void Buffer::release() {
    if (mapping_) {
        if (read_only_) mprotect(mapping_, mapped_bytes_ - (guard_ ? page_size() : 0), PROT_READ | PROT_WRITE);
        if (!mapping_cache().give(mapping_, mapped_bytes_, guard_)) munmap(mapping_, mapped_bytes_);
    }
    mapping_ = nullptr;
    data_ = nullptr;
    bytes_ = 0;
    mapped_bytes_ = 0;
    guard_ = read_only_ = false;
}

}  // namespace hb
