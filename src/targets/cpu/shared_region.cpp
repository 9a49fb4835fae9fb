#include "targets/cpu/shared_region.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace hb::cpu {

SharedRegion::SharedRegion(const char* name) {
    fd_ = memfd_create(name, MFD_CLOEXEC);
    if (fd_ < 0) throw Error(std::string("memfd_create failed: ") + std::strerror(errno), ExitCode::internal);
}

SharedRegion::~SharedRegion() {
    unmap();
    if (fd_ >= 0) close(fd_);
}

void SharedRegion::unmap() {
    if (data_) munmap(data_, mapped_bytes_);
    data_ = nullptr;
    bytes_ = mapped_bytes_ = 0;
}

void SharedRegion::resize(std::size_t bytes, std::size_t reserve) {
    // A region no larger than the mapping keeps it: its page tables are already filled, so a
    // case pays nothing here unless it needs more memory than every case before it.
    if (data_ && bytes <= mapped_bytes_) {
        bytes_ = bytes;
        return;
    }
    unmap();
    const std::size_t needed = bytes;
    bytes = std::max(bytes, reserve);
    // The file only grows: a case reuses the pages of the cases before it instead of faulting
    // in and zeroing new ones (about 400,000 page faults for the 20 cases of one operator).
    // Whoever reads a byte of the region has written it in this case first (inputs are
    // filled, outputs and the workspace poisoned, guards refilled), so what a previous case
    // left there is never read as this case's data.
    if (bytes > file_bytes_) {
        if (ftruncate(fd_, static_cast<off_t>(bytes)) != 0)
            throw Error("cannot size shared memory to " + std::to_string(bytes) + " bytes: " + std::strerror(errno),
                        ExitCode::internal);
        file_bytes_ = bytes;
    }
    if (bytes == 0) return;
    // MAP_POPULATE: the page tables are filled here, in one pass, not by a fault per page.
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd_, 0);
    if (p == MAP_FAILED)
        throw Error("cannot map " + std::to_string(bytes) + " bytes of shared memory: " + std::strerror(errno),
                    ExitCode::internal);
    data_ = static_cast<char*>(p);
    mapped_bytes_ = bytes;
    bytes_ = needed;
}

int SharedRegion::open_read_only() const {
    const std::string path = "/proc/self/fd/" + std::to_string(fd_);
    const int ro = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (ro < 0) throw Error("cannot reopen shared memory read-only: " + std::string(std::strerror(errno)), ExitCode::internal);
    return ro;
}

}  // namespace hb::cpu
