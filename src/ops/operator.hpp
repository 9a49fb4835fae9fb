// The one interface every operator implements. An operator lives in one folder,
// src/ops/levelN/<op>/: op.cpp (this interface: shapes, golden, same-precision reference,
// work model, case sampling, input hooks) and baseline.cpp (the vendor-library kernel the
// candidate is measured against, built into its own shared object).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "ops/problem.hpp"
#include "ops/values.hpp"
#include "ops/work_model.hpp"
#include "spec/case_sampler.hpp"

namespace hb {

class Operator {
  public:
    virtual ~Operator() = default;
    virtual std::string name() const = 0;  // task directory name, e.g. "swi_glu"
    virtual int level() const = 0;
    // Which library the baseline uses and why (listed in the README).
    virtual std::string baseline_description() const = 0;

    // Output argument specs for a case; throws hb::Error for shapes or attributes the
    // operator cannot accept ("swi_glu case 4: dim 1 has odd size 1537").
    virtual std::vector<ArgSpec> infer_outputs(const Problem& problem) const = 0;
    // fp64 golden from fp64 inputs; outputs are pre-shaped by infer_outputs.
    virtual void golden(const Problem& problem, const ValueArgs<double>& in,
                        ValueArgs<double>& out) const = 0;
    // Same-precision reference: the case dtype with fp32 accumulation (methodology 3);
    // outputs are returned in fp64 after rounding to the output dtype.
    virtual void same_precision(const Problem& problem, const ValueArgs<double>& in,
                                ValueArgs<double>& out) const = 0;
    virtual WorkModel work(const Problem& problem) const = 0;

    // Turns a generic draw (regime, element budget, alignment, dtype, value range) into a
    // concrete case: shapes, per-input dtypes and ranges, attributes.
    virtual void sample_case(CaseSampler& sampler, CaseSpec& out) const = 0;
    // The range used for the type-boundary group ("+-88 for exp-type ops").
    virtual ValueRange boundary_range(DType dtype) const;
    // The element bounds this operator's cases are drawn and checked against (the case
    // generator and the rules checker both ask). The profile's own, unless the operator's
    // cost grows faster than its input: nms compares every kept box with every later one, so
    // its regimes are scaled down to keep the suite's time budget.
    virtual Profile case_profile(const Profile& profile) const { return profile; }
    // Replaces generated inputs where validity demands it (index ranges, permutations).
    virtual void fix_inputs(const Problem& problem, std::vector<Arg>& inputs, Rng& rng) const;
    // False for operators whose cases can never be aligned (an input's innermost dim is fixed
    // at a size like 3, e.g. a grid of xyz coordinates): the generator then draws every case
    // non-aligned instead of failing to meet the 40% aligned plan.
    virtual bool can_align() const { return true; }
    // The version of golden(), same_precision() and fix_inputs(): part of the key of every
    // cached golden, so raise it whenever any of them computes something different.
    virtual int golden_version() const { return 1; }
    // The fewest input elements an aligned case of the first input's dtype can have (0: no
    // floor). An int8 matmul's aligned k and n are multiples of 512, so its aligned cases
    // start at 512 x 512 elements, above the cpu profile's small regime: the generator then
    // plans the aligned cases of such an operator in the regimes that can hold them.
    virtual std::int64_t min_aligned_elements(DType) const { return 0; }
};

// Implements golden and same_precision from one template `compute<T>` in Derived.
template <typename Derived>
class OperatorWithCompute : public Operator {
  public:
    void golden(const Problem& problem, const ValueArgs<double>& in,
                ValueArgs<double>& out) const override {
        static_cast<const Derived*>(this)->template compute<double>(problem, in, out);
    }
    void same_precision(const Problem& problem, const ValueArgs<double>& in,
                        ValueArgs<double>& out) const override {
        ValueArgs<float> in32 = convert_values<float>(in);
        ValueArgs<float> out32 = values_for_specs<float>(problem.outputs);
        static_cast<const Derived*>(this)->template compute<float>(problem, in32, out32);
        out = convert_values<double>(out32);
        for (auto& arg : out)
            for (auto& t : arg.tensors) round_values_to_dtype(t.v, t.spec.dtype);
    }
};

}  // namespace hb
