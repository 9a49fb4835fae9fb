// The harness's own large memory in 2 MiB pages where the kernel allows it (transparent huge
// pages, "madvise" mode on Debian 12).
//
// Why: the harness allocates, fills and frees copies of whole tensors (inputs of every verified
// call, their fp64 goldens, kept outputs) in every case. Each fresh 4 KiB page costs a fault and
// a zeroed page; on a virtual machine whose faults go through the hypervisor that was a third
// of the harness's CPU time (tuned sigmoid, 20 cases: 600,000 to 690,000 faults a run on a
// 2-vCPU AMD EPYC guest). With 2 MiB pages (heap and Buffers): 54,000 to 59,000 faults, and
// the run 13.3-14.1 -> 11.0-12.3 s.
// The memory shared with the candidate's worker is not affected (a memfd: the machine's shmem
// setting decides, usually "never").
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace hb {

// Asks for huge pages on [data, data + bytes) when it is large enough to hold one; a kernel
// without transparent huge pages (or set to "never") ignores it.
void advise_huge_pages(void* data, std::size_t bytes);

// The value GLIBC_TUNABLES must have for malloc to ask for huge pages for its heap
// (glibc.malloc.hugetlb=1, glibc 2.35 and later; older ones ignore it), given its value now
// (null: unset); nullopt when it already names that tunable (a value the user chose is kept).
// glibc reads its tunables before main, so the program restarts with it
// (measure/harness_environment.hpp).
std::optional<std::string> tunables_with_malloc_huge_pages(const char* now);

}  // namespace hb
