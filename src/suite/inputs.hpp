// Input generation by methodology section 2: the base inputs of a case (its correctness
// calls and golden) and the fresh inputs of every timed call, drawn by the same rules from
// a seed only the harness knows (measure/fresh_inputs.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.hpp"
#include "spec/case_spec.hpp"

namespace hb {

// Raised whenever the same seed would draw different inputs (part of every golden's cache key).
inline constexpr int kInputGeneratorVersion = 4;

struct Problem;
class Operator;

// Fills one tensor from its value range with the documented PRNG:
//  floats: uniform in [min, max] drawn in fp64, clamped to the dtype's finite range, rounded
//    to nearest even; a range with an infinite end: uniform [-1, 1], then the first
//    max(1, n/20) elements are -inf (when min is -inf) and the last n/20 are +inf (when max
//    is +inf); a NaN range: uniform [-1, 1], each element NaN with probability 0.5;
//    [c, c]: constant c. Default range [0, 1].
//  integers: uniform in [ceil(min), floor(max)] inclusive, clamped to the dtype; default
//    [0, 100]; bool: 0 or 1.
// The tensor is drawn in pieces of 65536 elements, each from its own stream (so pieces fill
// in parallel and the values do not depend on the thread count).
void fill_tensor(Tensor& t, const std::optional<ValueRange>& range, std::uint64_t stream_seed);

// The seed of a case's base inputs: case_seed(case_id, eval_seed) (methodology section 2).
std::uint64_t base_input_seed(const Problem& problem, std::uint64_t eval_seed);

// A timed call's inputs follow the case's rules with one difference: a floating input whose
// range is a constant [c, c] would be the same bytes in every call (a cached output would
// always be right), so a secret ~1/1024 of its elements (at least one) are drawn from
// [c - 1, c + 1] instead (docs/security.md).
enum class InputDraw { base, timed_call };

void mark_constant_tensor(Tensor& t, const std::optional<ValueRange>& range, std::uint64_t stream_seed);

// Fills every input of a case (allocated or borrowed) from `seed`; tensors are numbered in
// proto order, list members in order. The operator's fix_inputs hook runs last.
void fill_inputs(const Problem& problem, const Operator& op, std::uint64_t seed, std::vector<Arg>& args,
                 InputDraw draw = InputDraw::base);

// Every input of a case, allocated and filled from its base seed.
std::vector<Arg> generate_inputs(const Problem& problem, const Operator& op, std::uint64_t eval_seed,
                                 bool guard_pages = false);

// Allocates tensors shaped like `specs` (optionally with guard pages), zeroed unless the
// caller fills every element next (Buffer::Contents::overwritten: fill_inputs does).
std::vector<Arg> allocate_args(const std::vector<ArgSpec>& specs, bool guard_pages,
                               Buffer::Contents contents = Buffer::Contents::zeroed);

}  // namespace hb
