// Page-aligned, zeroed memory from mmap, optionally followed by an inaccessible guard page;
// or a borrowed view of memory someone else owns (shared memory with a worker), which the
// buffer never unmaps. Large mappings are reused once released (zeroed again, unless the
// caller writes every byte first), not unmapped.
#pragma once

#include <cstddef>

namespace hb {

class Buffer {
  public:
    Buffer() = default;
    // Contents::overwritten: the caller writes every byte before it reads one, so a reused
    // mapping is not zeroed first (it keeps what an earlier buffer of this process held; a
    // fresh mapping is zero anyway). Only for the harness's own memory, never shared.
    enum class Contents { zeroed, overwritten };
    explicit Buffer(std::size_t bytes, bool guard_page = false, Contents contents = Contents::zeroed);
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
