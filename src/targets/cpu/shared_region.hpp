// A region of shared memory between hapbench and one worker: a memfd the harness maps
// read-write, resizes per case, and hands to the worker either read-write or through a
// second, read-only descriptor (a read-only open of the memfd cannot be mapped writable,
// so a kernel cannot write its inputs even by changing its own mapping's protection).
#pragma once

#include <cstddef>
#include <string>

namespace hb::cpu {

class SharedRegion {
  public:
    explicit SharedRegion(const char* name);
    ~SharedRegion();
    SharedRegion(const SharedRegion&) = delete;
    SharedRegion& operator=(const SharedRegion&) = delete;

    // Sizes the region to `bytes` (contents are not kept) and maps it in the harness.
    void resize(std::size_t bytes);
    char* data() const { return data_; }
    std::size_t bytes() const { return bytes_; }
    int fd() const { return fd_; }
    // A new descriptor of the same memory that only allows reading (for the worker).
    int open_read_only() const;

  private:
    void unmap();
    int fd_ = -1;
    char* data_ = nullptr;
    std::size_t bytes_ = 0;
};

}  // namespace hb::cpu
