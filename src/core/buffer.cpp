#include "core/buffer.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace hb {

namespace {
std::size_t page_size() {
    static const std::size_t size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    return size;
}
std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }
}  // namespace

Buffer::Buffer(std::size_t bytes, bool guard_page) : bytes_(bytes) {
    const std::size_t page = page_size();
    const std::size_t body = round_up(bytes == 0 ? 1 : bytes, page);
    mapped_bytes_ = body + (guard_page ? page : 0);
    mapping_ = mmap(nullptr, mapped_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                    -1, 0);
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
    }
    return *this;
}

void Buffer::protect_read_only(bool read_only) {
    if (!mapping_) return;
    const std::size_t page = page_size();
    auto* begin = reinterpret_cast<char*>(reinterpret_cast<std::uintptr_t>(data_) / page * page);
    const std::size_t length = round_up(static_cast<char*>(data_) + bytes_ - begin, page);
    mprotect(begin, length, read_only ? PROT_READ : PROT_READ | PROT_WRITE);
}

void Buffer::release() {
    if (mapping_) munmap(mapping_, mapped_bytes_);
    mapping_ = nullptr;
    data_ = nullptr;
    bytes_ = 0;
    mapped_bytes_ = 0;
}

}  // namespace hb
