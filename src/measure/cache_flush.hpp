// Evicts a call's buffers from every cache level before it is timed (methodology 4): the
// hardware limit assumes compulsory traffic from main memory, so the measurement must too.
#pragma once

#include <cstddef>

namespace hb {

// clflushopt (or clflush) on every cache line of [data, data + bytes), no fence.
void flush_range(const void* data, std::size_t bytes);
// Orders the flushes before the timed call (mfence).
void flush_fence();

}  // namespace hb
