// The two correctness calls of a case, compared element by element. The harness poisons
// the outputs with 0xff before the first call and 0x00 before the second: an element holding
// 0xff bytes after the first and 0x00 bytes after the second was never written
// (OUTPUT_UNWRITTEN); other differences mark a nondeterministic kernel (NONDETERMINISTIC),
// measured on the precision gate's scale. For an output of data-dependent length only the
// prefix the kernel reported is compared, and two different lengths are a difference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace hb {

struct TensorComparison {
    std::string output;  // argument name
    int tensor_index = 0;
    std::int64_t unwritten = 0;
    std::int64_t first_unwritten = -1;
    std::int64_t differing = 0;
    // Largest difference, relative to max(1, |a|, |b|) for floats, absolute for integers;
    // infinite where only one side is NaN or infinite.
    double max_difference = 0;
};

// Fills every output byte with `byte`.
void poison_outputs(std::vector<Arg>& outputs, unsigned char byte);

// `first` and `second` hold the outputs of the two calls (first poisoned 0xff, second 0x00);
// `lengths_first`/`lengths_second` the written length of each output argument (-1: fixed).
std::vector<TensorComparison> compare_correctness_calls(const std::vector<Arg>& first, const std::vector<Arg>& second,
                                                        const std::vector<std::int64_t>& lengths_first,
                                                        const std::vector<std::int64_t>& lengths_second);

}  // namespace hb
