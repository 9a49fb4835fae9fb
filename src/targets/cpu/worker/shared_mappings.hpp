// The worker's mappings of the harness's two shared regions (targets/cpu/shared_region.hpp),
// kept from one case to the next: a case that fits in them maps nothing new, and only a case
// larger than every one before it maps a region again (the harness's memfd only grows).
//
// Why: under a hypervisor that shadows the guest's page tables (PVM), a page's first access
// in each mapping traps, whatever the guest's own page tables hold: on a 2-vCPU AMD EPYC PVM
// guest about 6 us per 4 KiB page for a first write (150 ms for 90 MB) and 1.4 us for a first
// read, again after every munmap and mmap of the same pages. Mapped anew for every case, a
// worker paid that for every page of every case (in its first correctness call and its slot
// binding); kept, once per operator for its largest case.
//
// A case's guard pages (call_layout.hpp) are made inaccessible here and made ordinary again
// when the next case is fitted, since its tensors may lie where they were.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace hb::worker {

class SharedMappings {
  public:
    // The descriptors the harness hands every worker (control_page.hpp), or others (tests).
    SharedMappings();
    SharedMappings(int input_fd, int output_fd) : input_fd_(input_fd), output_fd_(output_fd) {}
    ~SharedMappings();
    SharedMappings(const SharedMappings&) = delete;
    SharedMappings& operator=(const SharedMappings&) = delete;

    // Makes the guard pages of the previous case ordinary, then maps at least `input_bytes`
    // of the input region (read-only descriptor, pages filled when a slot is first bound) and
    // `output_bytes` of the output region (read-write, populated), keeping a mapping that is
    // already as large. A mapping made anew is `input_reserve` (`output_reserve`) long when
    // that is more: the harness's memfd is at least that long. Returns an error message, or "".
    std::string fit(std::size_t input_bytes, std::size_t output_bytes, std::size_t input_reserve = 0,
                    std::size_t output_reserve = 0);
    char* inputs() const { return inputs_; }
    char* outputs() const { return outputs_; }
    // Makes [at, at + bytes) of the input (`output` false) or output mapping inaccessible
    // until the next fit().
    void guard(char* at, std::size_t bytes, bool output);

  private:
    struct Guard {
        char* at;
        std::size_t bytes;
        int prot;  // what it had before
    };
    void unmap_inputs();
    void unmap_outputs();
    int input_fd_, output_fd_;
    char* inputs_ = nullptr;
    std::size_t input_bytes_ = 0;
    char* outputs_ = nullptr;
    std::size_t output_bytes_ = 0;
    std::vector<Guard> guards_;
};

}  // namespace hb::worker
