// Counting an operator's formula for the cann-bench convention (docs/hap.md, "The two
// conventions" and "Adding an operator under both conventions"). An operator's work() states
// each operation its formula writes, per element the formula is evaluated at, in
// WorkModel::formula; the convention prices them with its one cost table
// (hardware/conventions/cann-bench.yaml) and the hardware's element-operation rates.
//
// Counting rules (the table in docs/hap.md applies them to every operator):
//  - add (add, subtract, negate), mul, cmp (compare, min, max), select (select, and moving one
//    element by index: a gather, scatter or tap), abs, cast (a dtype conversion, and rounding
//    or floor, which are conversions with a rounding mode), exp, log, tanh, erf, sqrt, div,
//    pow (x^p for a run-time p); fma is a multiply and an add as written.
//  - A division by a constant or an attribute is a multiply; x^k for a literal integer k is
//    k - 1 multiplies; x / sqrt(s) for a statistic s is a multiply by its reciprocal root.
//  - A reduction (sum, mean, max, min over a row, group or tensor) costs its operation once
//    per element reduced; a mean's scale, a root or reciprocal of a statistic, and any other
//    term evaluated once per reduced row, group or tensor are not counted.
//  - A scan along an axis of length L costs ceil(log2 L) operations per element.
#pragma once

#include <initializer_list>
#include <utility>

#include "ops/operator.hpp"
#include "ops/work_model.hpp"

namespace hb {

// How a formula's arithmetic runs for a half-precision input.
enum class FormulaMath {
    // Elementwise arithmetic: fp16 computes in fp16; bf16, which the vector units the
    // convention was published for cannot compute in, in fp32 with two casts per element.
    elementwise,
    // The formula reduces (a sum, mean, max or min over a row, group or tensor), or the
    // operator is defined to compute in fp32: fp16 and bf16 compute in fp32, two casts per
    // element (one in, one out).
    in_fp32,
    // Only comparisons, selects and moves: no casts; bf16 at the fp32 rate, fp16 natively.
    compare,
};

// The dtype a formula over `input` computes in under `math` (integers compute as themselves).
DType formula_dtype(DType input, FormulaMath math);

// Adds, for each (class, n) in `per_element`, n * elements operations to w.formula in
// formula_dtype(input, math), and two casts per element where that dtype differs from
// `input` and math is not `compare`. `elements` is the formula's domain: the elements each
// per-element term is evaluated at (y's for an elementwise formula, x's for a reduction).
void add_formula(WorkModel& w, DType input, FormulaMath math, double elements,
                 std::initializer_list<std::pair<OpClass, double>> per_element);

// Adds terms evaluated `times` times without casts (per grid point, per output location),
// in formula_dtype(input, math).
void add_formula_terms(WorkModel& w, DType input, FormulaMath math, double times,
                       std::initializer_list<std::pair<OpClass, double>> per_time);

// Every byte of every present input, read in full: what the cann-bench convention charges
// for memory (it charges no writes and no reachability).
double all_input_bytes(const Problem& p);

}  // namespace hb
