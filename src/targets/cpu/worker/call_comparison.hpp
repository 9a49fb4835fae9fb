// The two correctness calls of a case, compared element by element. The outputs are poisoned
// with 0xff before the first call and 0x00 before the second: an element holding 0xff bytes
// after the first and 0x00 bytes after the second was never written (OUTPUT_UNWRITTEN);
// other differences mark a nondeterministic kernel (NONDETERMINISTIC), measured on the
// precision gate's scale.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "core/tensor.hpp"
#include "targets/cpu/protocol.hpp"

namespace hb::worker {

struct CallComparison {
    nlohmann::json unwritten = nlohmann::json::array();         // per output tensor: count, first
    nlohmann::json nondeterministic = nlohmann::json::array();  // per output tensor: count, max_difference
};

// `first_call` holds the first call's outputs at the layout's offsets; `outputs` the second's.
// `compared_entries` (per output; empty: all) limits an output of data-dependent length to
// its written prefix, the leading dim-0 entries both calls reported: the capacity beyond it
// is not the result and stays poisoned legitimately. -1 compares the whole output.
CallComparison compare_correctness_calls(const std::vector<Arg>& outputs, const std::vector<protocol::ArgLayout>& layout,
                                         const char* first_call, const std::vector<std::int64_t>& compared_entries = {});

}  // namespace hb::worker
