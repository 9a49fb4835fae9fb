// Shared pieces of single-input elementwise operators: same-shape output, sampling of a
// case with one tensor of rank 1 to 5, and a work model of n elements read and written.
#pragma once

#include "ops/operator.hpp"

namespace hb {

// One output with the first input's shape and dtype.
std::vector<ArgSpec> same_shape_output(const Problem& p, const std::string& output_name);
// Fills inputs[0] with one tensor of the draw's size, rank 1..5, alignment and dtype.
void sample_single_tensor(CaseSampler& sampler, CaseSpec& out, int min_rank = 1, int max_rank = 5);
// n elements read and written in the input dtype, ops counted per element.
// The vector work is stated in the input dtype and vector_io lists the n elements loaded
// and the n stored per output, so a machine without arithmetic in that dtype (Ascend: bf16)
// charges their conversions.
WorkModel elementwise_work(const Problem& p, std::initializer_list<std::pair<OpClass, double>> ops_per_element);
// As elementwise_work, but the math runs in `compute` (an operator's precision decision,
// e.g. fp32 for an fp16 input): ops are stated in `compute`, plus one cast per element
// loaded and one per element stored when `compute` differs from the input dtype.
WorkModel elementwise_work_in(const Problem& p, std::initializer_list<std::pair<OpClass, double>> ops_per_element,
                              DType compute);

}  // namespace hb
