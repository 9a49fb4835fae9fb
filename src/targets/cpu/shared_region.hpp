// A region of shared memory between hapbench and one worker: a memfd the harness maps
// read-write, resizes per case (it only grows, for the session's life), and hands to the
// worker either read-write or through a second, read-only descriptor (a read-only open of
// the memfd cannot be mapped writable, so a kernel cannot write its inputs even by changing
// its own mapping's protection).
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

    // Maps the region's first `bytes` in the harness, growing the memfd when it is smaller;
    // a mapping already as large is kept (data() does not move then). A new mapping is made
    // `reserve` bytes long when that is more, for the larger cases to come. The contents are
    // what earlier cases left: callers write every byte they later read.
    void resize(std::size_t bytes, std::size_t reserve = 0);
    char* data() const { return data_; }
    std::size_t bytes() const { return bytes_; }
    // How much of the memfd is mapped (at least bytes()): what the worker may map too.
    std::size_t mapped_bytes() const { return mapped_bytes_; }
    int fd() const { return fd_; }
    // A new descriptor of the same memory that only allows reading (for the worker).
    int open_read_only() const;

  private:
    void unmap();
    int fd_ = -1;
    char* data_ = nullptr;
    std::size_t bytes_ = 0;
    std::size_t mapped_bytes_ = 0;  // of the mapping, at least bytes_
    std::size_t file_bytes_ = 0;    // the memfd's size
};

}  // namespace hb::cpu
