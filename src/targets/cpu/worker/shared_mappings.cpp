#include "targets/cpu/worker/shared_mappings.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "targets/cpu/control_page.hpp"

namespace hb::worker {

namespace {

char* map_region(int fd, std::size_t bytes, int prot, bool populate) {
    void* p = mmap(nullptr, bytes, prot, MAP_SHARED | (populate ? MAP_POPULATE : 0), fd, 0);
    return p == MAP_FAILED ? nullptr : static_cast<char*>(p);
}

}  // namespace

SharedMappings::SharedMappings() : SharedMappings(cpu::input_region_fd, cpu::output_region_fd) {}

SharedMappings::~SharedMappings() {
    unmap_inputs();
    unmap_outputs();
}

void SharedMappings::unmap_inputs() {
    if (inputs_) munmap(inputs_, input_bytes_);
    inputs_ = nullptr;
    input_bytes_ = 0;
}

void SharedMappings::unmap_outputs() {
    if (outputs_) munmap(outputs_, output_bytes_);
    outputs_ = nullptr;
    output_bytes_ = 0;
}

std::string SharedMappings::fit(std::size_t input_bytes, std::size_t output_bytes, std::size_t input_reserve,
                                std::size_t output_reserve) {
    for (const Guard& g : guards_) mprotect(g.at, g.bytes, g.prot);
    guards_.clear();
    if (input_bytes > input_bytes_) {
        unmap_inputs();
        const std::size_t bytes = std::max(input_bytes, input_reserve);
        // The pages are read (filled) per slot when a call first binds it (case_binding.cpp).
        inputs_ = map_region(input_fd_, bytes, PROT_READ, false);
        if (!inputs_) return std::string("cannot map the case's input region: ") + std::strerror(errno);
        input_bytes_ = bytes;
    }
    // The outputs and the workspace: every call uses them, so their page tables are filled here.
    if (output_bytes > output_bytes_) {
        unmap_outputs();
        const std::size_t bytes = std::max(output_bytes, output_reserve);
        outputs_ = map_region(output_fd_, bytes, PROT_READ | PROT_WRITE, true);
        if (!outputs_) return std::string("cannot map the case's output region: ") + std::strerror(errno);
        output_bytes_ = bytes;
    }
    return "";
}

void SharedMappings::guard(char* at, std::size_t bytes, bool output) {
    mprotect(at, bytes, PROT_NONE);
    guards_.push_back({at, bytes, output ? PROT_READ | PROT_WRITE : PROT_READ});
}

}  // namespace hb::worker
