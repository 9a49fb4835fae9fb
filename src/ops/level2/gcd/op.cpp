// gcd(x1, x2): elementwise greatest common divisor with NumPy/PyTorch broadcasting, as
// torch.gcd: the result is non-negative, gcd(a, 0) = |a| and gcd(0, 0) = 0. Both inputs
// have one integer dtype (int16, int32, int64), which the output keeps.
// The most negative value of the dtype is never generated (fix_inputs replaces it):
// |INT_MIN| does not fit the dtype, so torch.gcd(INT_MIN, 0) and gcd(INT_MIN, INT_MIN)
// overflow to INT_MIN (and torch's Euclid returns negative results for some INT_MIN pairs);
// no kernel should be held to that.
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>

#include "core/error.hpp"
#include "ops/broadcast.hpp"
#include "ops/broadcast_sampling.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

// Every 97th element of x1 and every 89th of x2 is set to 0, so each case meets gcd(a, 0),
// gcd(0, b) and, where the positions meet, gcd(0, 0).
constexpr std::size_t x1_zero_period = 97, x2_zero_period = 89;

std::int64_t gcd_of(std::int64_t a, std::int64_t b) {
    return std::gcd(a, b);  // |a|, |b| fit: INT64_MIN is never generated
}

// Largest magnitude an input range holds (the generator clamps to the dtype; a NaN range
// fills [0, 100]).
double magnitude(const std::optional<ValueRange>& range, DType dtype) {
    const double type_max = std::ldexp(1.0, 8 * static_cast<int>(dtype_size(dtype)) - 1);
    if (!range || std::isnan(range->lo) || std::isnan(range->hi)) return 100;
    return std::min(type_max, std::max(std::fabs(range->lo), std::fabs(range->hi)));
}

// Euclid steps per element a lane-synchronous loop runs. A vector of lanes iterates until its
// slowest lane is done, so at least the average for pairs up to the larger magnitude N,
// (12 ln 2 / pi^2) ln N = 0.843 ln N (Knuth, TAOCP 4.5.3), but never more than Lame's
// worst case for the smaller one, log_phi(M) + 1. Inputs of one value each take one step.
double euclid_steps(const std::optional<ValueRange>& r1, const std::optional<ValueRange>& r2, DType dtype) {
    const double m1 = magnitude(r1, dtype), m2 = magnitude(r2, dtype);
    const double larger = std::max(m1, m2), smaller = std::min(m1, m2);
    if (smaller < 1) return 0;  // gcd(a, 0) = |a|: no step
    const bool single_values = r1 && r2 && r1->lo == r1->hi && r2->lo == r2->hi;
    if (single_values) return 1;
    const double average = 12 * std::log(2.0) / (M_PI * M_PI) * std::log(larger);
    const double lame = std::log(smaller) / std::log((1 + std::sqrt(5.0)) / 2) + 1;
    return std::min(average, lame);
}

}  // namespace

class GcdOp final : public OperatorWithCompute<GcdOp> {
  public:
    std::string name() const override { return "gcd"; }
    int level() const override { return 2; }
    std::string baseline_description() const override {
        return "threaded C++ (OpenMP over the broadcast output, binary GCD with count-trailing-zeros, the "
               "algorithm of torch's and libstdc++'s gcd): oneDNN has no gcd or integer-division primitive";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        ArgSpec out = broadcast_binary_output(p, "gcd");
        const DType dtype = out.tensors.at(0).dtype;
        if (is_floating(dtype) || dtype == DType::boolean)
            throw Error(p.context() + "gcd needs integer inputs, got " + std::string(dtype_name(dtype)));
        return {out};
    }

    // Integer math in int64 whatever T is: the fp64 golden holds generated int64 values
    // exactly (they pass through fp64 in the generator), and so does every divisor of them.
    template <typename T>
    void compute(const Problem&, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const auto& x1 = in[0].one();
        const auto& x2 = in[1].one();
        T* y = out[0].one().v.data();
        const BroadcastPlan plan(x1.spec.shape, x2.spec.shape);
        const std::int64_t sa = plan.inner_stride_a(), sb = plan.inner_stride_b();
        for_each_broadcast_piece(plan, [&](std::int64_t o, std::int64_t a, std::int64_t b, std::int64_t n) {
            for (std::int64_t i = 0; i < n; ++i)
                y[o + i] = static_cast<T>(gcd_of(static_cast<std::int64_t>(x1.v[static_cast<std::size_t>(a + i * sa)]),
                                                 static_cast<std::int64_t>(x2.v[static_cast<std::size_t>(b + i * sb)])));
        });
    }

    WorkModel work(const Problem& p) const override {
        const TensorSpec& x1 = p.input("x1").tensors.at(0);
        const TensorSpec& x2 = p.input("x2").tensors.at(0);
        const TensorSpec& y = p.outputs.at(0).tensors.at(0);
        const double n = static_cast<double>(y.numel());
        WorkModel w;
        w.bytes_read = static_cast<double>(x1.bytes() + x2.bytes());
        w.bytes_written = static_cast<double>(y.bytes());
        // Euclid: per step a remainder, which no vector unit computes on integers (Ascend and
        // AVX have no vector integer division): both operands converted, a divide, the quotient
        // truncated back, r = a - q * b (mul, subtract), then a compare of b with 0 and two
        // selects that freeze finished lanes = 11 slots, stated in the input dtype (the lane
        // width the loop runs at; int16 could run a binary GCD at int16 width).
        w.add_vector(OpClass::abs, y.dtype, 2 * n);
        const double steps = euclid_steps(p.spec.inputs.at(0).range, p.spec.inputs.at(1).range, y.dtype);
        w.add_vector(OpClass::cast, y.dtype, 3 * steps * n);
        w.add_vector(OpClass::div, y.dtype, steps * n);
        w.add_vector(OpClass::mul, y.dtype, steps * n);
        w.add_vector(OpClass::add, y.dtype, steps * n);
        w.add_vector(OpClass::cmp, y.dtype, steps * n);
        w.add_vector(OpClass::select, y.dtype, 2 * steps * n);
        // cann-bench (docs/hap.md): Euclid's algorithm at Lame's bound, 5 steps per decimal digit
        // of the largest magnitude the inputs' value ranges allow (at least one digit); a step
        // is a remainder (a division) and the test b != 0.
        const double digits = std::max(1.0, std::log10(std::max(magnitude(p.spec.inputs.at(0).range, y.dtype),
                                                                magnitude(p.spec.inputs.at(1).range, y.dtype))));
        add_formula(w, y.dtype, FormulaMath::elementwise, n, {{OpClass::div, 5 * digits}, {OpClass::cmp, 5 * digits}});
        w.parallel_items = n;
        w.innermost = y.shape.empty() ? 1 : y.shape.back();
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        Shape x1, x2;
        sample_broadcast_shapes(sampler, sampler.cycle(all_broadcast_patterns), d.target_elements, d.dtype, d.aligned,
                                x1, x2);
        out.inputs.at(0).shapes = {x1};
        out.inputs.at(1).shapes = {x2};
    }

    // int64: +-2^62, the widest range the fp64 path of the generator converts exactly.
    ValueRange boundary_range(DType dtype) const override {
        if (dtype == DType::i64) return {-4611686018427387904.0, 4611686018427387904.0};
        return Operator::boundary_range(dtype);
    }

    void fix_inputs(const Problem&, std::vector<Arg>& inputs, Rng& rng) const override {
        for (std::size_t k = 0; k < 2; ++k) {
            Tensor& t = inputs.at(k).tensors.at(0);
            const std::size_t period = k == 0 ? x1_zero_period : x2_zero_period;
            switch (t.spec.dtype) {
                case DType::i16: fix_values<std::int16_t>(t, period, [](Rng&) { return std::int16_t(-32767); }, rng); break;
                case DType::i32:
                    fix_values<std::int32_t>(t, period, [](Rng&) { return std::numeric_limits<std::int32_t>::min() + 1; }, rng);
                    break;
                // int64: the input generator draws through fp64 and overflows at 2^63, filling a
                // full-range (+-inf, boundary) int64 tensor with -2^63 alone; those elements are
                // redrawn in [-2^62, 2^62], rounded to values fp64 holds exactly, because the
                // golden reads inputs through fp64.
                case DType::i64:
                    fix_values<std::int64_t>(t, period, [](Rng& r) {
                        const double v = static_cast<double>(r.uniform_int(-(std::int64_t(1) << 62), std::int64_t(1) << 62));
                        return static_cast<std::int64_t>(v);
                    }, rng);
                    break;
                default: break;
            }
        }
    }

  private:
    // Zeros at every period-th element; the dtype's most negative value replaced by replace().
    template <typename Int, typename Replace>
    static void fix_values(Tensor& t, std::size_t period, Replace replace, Rng& rng) {
        auto* p = static_cast<Int*>(t.data());
        const auto n = static_cast<std::size_t>(t.numel());
        // Element i is zeroed when i % period == period - 1: counted, not divided (this loop
        // runs on every timed call's fresh inputs; before, 4.3 ms a call on the public cases).
        std::size_t phase = 0;
        for (std::size_t i = 0; i < n; ++i) {
            if (++phase == period) {
                p[i] = 0;
                phase = 0;
            } else if (p[i] == std::numeric_limits<Int>::min()) {
                p[i] = replace(rng);
            }
        }
    }
};

HB_REGISTER_OPERATOR(GcdOp)

}  // namespace hb
