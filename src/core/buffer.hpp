// Page-aligned, zeroed memory from mmap, optionally followed by an inaccessible guard page;
// or a borrowed view of memory someone else owns (shared memory with a worker), which the
// buffer never unmaps. Large mappings are reused once released (zeroed again), not unmapped.
#pragma once

#include <cstddef>

namespace hb {

class Buffer {
  public:
    Buffer() = default;
    explicit Buffer(std::size_t bytes, bool guard_page = false);
    static Buffer borrow(void* data, std::size_t bytes);
    ~Buffer();
    Buffer(Buffer&& other) noexcept;
    Buffer& operator=(Buffer&& other) noexcept;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;

    void* data() const { return data_; }
    std::size_t bytes() const { return bytes_; }
    // Makes the buffer read-only or read-write again (page protection).
    void protect_read_only(bool read_only);

  private:
    void release();
    void* mapping_ = nullptr;
    std::size_t mapped_bytes_ = 0;
    void* data_ = nullptr;
    std::size_t bytes_ = 0;
    bool guard_ = false;
    bool read_only_ = false;
};

}  // namespace hb
