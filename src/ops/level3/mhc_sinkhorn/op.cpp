// mhc_sinkhorn(comb, iter_step=20, eps=1e-6) -> comb_out (operators-l3-l4.md). comb is
// float32 [B, n, n]; each n x n matrix is projected towards a doubly stochastic one:
//   iteration 1:          each row: e^(x - row max) / row sum, THEN + eps on every entry;
//                         each column divided by (column sum + eps)
//   iterations 2..iter:   each row divided by (row sum + eps), then each column by
//                         (column sum + eps)
// iter_step = 1 is the first iteration alone. The golden is fp64, the same-precision
// reference fp32 (both divide, as the definition does).
// Special values: a row holding +inf (inf - inf) or only -inf (-inf - -inf) becomes NaN at
// the max shift, as does a row holding NaN (the max propagates it); the column sums then
// carry the NaN to every entry of the matrix. Other matrices are unaffected.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "ops/formula_count.hpp"
#include "ops/int8_quant.hpp"
#include "ops/register.hpp"
#include "ops/suite_budget.hpp"

namespace hb {

namespace {

// One matrix in place, row-major n x n.
template <typename T>
void sinkhorn(T* m, std::int64_t n, std::int64_t iterations, T eps) {
    auto at = [&](std::int64_t i, std::int64_t j) -> T& { return m[i * n + j]; };
    auto normalize_columns = [&] {
        for (std::int64_t j = 0; j < n; ++j) {
            T sum = 0;
            for (std::int64_t i = 0; i < n; ++i) sum += at(i, j);
            for (std::int64_t i = 0; i < n; ++i) at(i, j) = at(i, j) / (sum + eps);
        }
    };
    for (std::int64_t i = 0; i < n; ++i) {
        T max = -INFINITY;
        for (std::int64_t j = 0; j < n; ++j) max = nan_max(max, at(i, j));
        T sum = 0;
        for (std::int64_t j = 0; j < n; ++j) {
            at(i, j) = std::exp(at(i, j) - max);
            sum += at(i, j);
        }
        for (std::int64_t j = 0; j < n; ++j) at(i, j) = at(i, j) / sum + eps;
    }
    normalize_columns();
    for (std::int64_t it = 1; it < iterations; ++it) {
        for (std::int64_t i = 0; i < n; ++i) {
            T sum = 0;
            for (std::int64_t j = 0; j < n; ++j) sum += at(i, j);
            for (std::int64_t j = 0; j < n; ++j) at(i, j) = at(i, j) / (sum + eps);
        }
        normalize_columns();
    }
}

// iter_step above this is rejected: the projection has converged long before, and a case
// file asking for millions of iterations is a mistake, not a benchmark.
constexpr std::int64_t kMaxIterations = 1000;

}  // namespace

class MhcSinkhornOp final : public OperatorWithCompute<MhcSinkhornOp> {
  public:
    std::string name() const override { return "mhc_sinkhorn"; }
    int level() const override { return 3; }
    std::string baseline_description() const override {
        return "threaded C++ (OpenMP over matrices, each n x n matrix iterated in registers and L1 in fp32): oneDNN "
               "has no Sinkhorn iteration; its softmax could do the first row normalization of the [B*n, n] view, "
               "but for n <= 16 each primitive call costs more than the whole fused loop, and the column passes "
               "and later iterations have no primitive at all";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const TensorSpec& comb = p.input("comb").tensors.at(0);
        if (comb.dtype != DType::f32)
            throw Error(p.context() + "comb is " + std::string(dtype_name(comb.dtype)) + "; mhc_sinkhorn takes float32");
        if (comb.shape.size() != 3 || comb.shape[1] != comb.shape[2] || comb.shape[1] < 1)
            throw Error(p.context() + "comb has shape " + shape_to_string(comb.shape) +
                        "; it must be [B, n, n] (square matrices, n >= 1)");
        const std::int64_t iterations = p.attr_int("iter_step");
        if (iterations < 1 || iterations > kMaxIterations)
            throw Error(p.context() + "iter_step is " + std::to_string(iterations) + "; it must be in [1, " +
                        std::to_string(kMaxIterations) + "]");
        const double eps = p.attr_float("eps");
        if (!(eps >= 0) || !std::isfinite(eps))
            throw Error(p.context() + "eps is " + std::to_string(eps) + "; it must be finite and >= 0");
        ArgSpec out;
        out.name = "comb_out";
        out.tensors.push_back(comb);
        return {out};
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const auto& comb = in[0].one();
        const std::int64_t batch = comb.spec.shape[0], n = comb.spec.shape[1];
        const std::int64_t iterations = p.attr_int("iter_step");
        const T eps = static_cast<T>(p.attr_float("eps"));
        auto& y = out[0].one().v;
        std::copy(comb.v.begin(), comb.v.end(), y.begin());
#pragma omp parallel for schedule(static) if (batch * n * n * iterations >= 65536)
        for (std::int64_t b = 0; b < batch; ++b) sinkhorn(y.data() + b * n * n, n, iterations, eps);
    }

    WorkModel work(const Problem& p) const override {
        const TensorSpec& comb = p.input("comb").tensors.at(0);
        const double batch = static_cast<double>(comb.shape[0]), n = static_cast<double>(comb.shape[1]);
        const double elements = batch * n * n, lines = batch * n;  // rows (and columns)
        const double iterations = static_cast<double>(p.attr_int("iter_step"));
        WorkModel w;
        // Each matrix is read once and written once; it stays on chip for all iterations.
        w.bytes_read = static_cast<double>(comb.bytes());
        w.bytes_written = static_cast<double>(comb.bytes());
        // Iteration 1, per element: the row max (cmp), x - max (add), exp, the row sum (add),
        // times 1/sum (mul), + eps (add), the column sum (add), times 1/(sum + eps) (mul).
        // Later iterations: a row sum, a multiply, a column sum and a multiply per element.
        // Per row and column of every iteration: one reciprocal (div), and the + eps of its
        // denominator (add; not for iteration 1's rows).
        // Formula-literal count (cann-bench convention: elementary op 1, exp 2, division 4)
        // per element: iteration 1: max + sub + exp + sum + div + add + sum + div = 15, each
        // later one sum + div + sum + div = 10; plus 1 add per row and per column of each
        // iteration (the + eps of the denominators).
        w.add_vector(OpClass::cmp, DType::f32, elements);
        w.add_vector(OpClass::exp, DType::f32, elements);
        w.add_vector(OpClass::add, DType::f32, elements * (2 + 2 * iterations) + lines * (2 * iterations - 1));
        w.add_vector(OpClass::mul, DType::f32, elements * 2 * iterations);
        w.add_vector(OpClass::div, DType::f32, 2 * lines * iterations);
        add_formula(w, comb.dtype, FormulaMath::in_fp32, elements,
                    {{OpClass::exp, 1}, {OpClass::add, 3 + 2 * (iterations - 1)}, {OpClass::div, 2 * iterations}});
        // A matrix is held whole for its iterations; matrices are independent.
        w.row_elements = comb.shape[1] * comb.shape[2];
        w.parallel_items = batch;
        w.innermost = comb.shape[2];
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const std::int64_t n = sampler.cycle(std::vector<std::int64_t>{4, 2, 8, 3, 16, 6, 12});
        std::int64_t iterations = sampler.cycle(std::vector<std::int64_t>{20, 1, 40, 5, 20});
        const double eps = sampler.cycle(std::vector<double>{1e-6, 1e-7, 1e-8});
        const std::int64_t elements = budgeted_elements(sampler);
        // Every kernel's time grows with elements x iterations; above 2.5e7 of them a call of
        // the reference kernel takes a good part of a second, and the suite must evaluate in
        // minutes: fewer iterations for the largest cases (40 -> 20 -> 5 -> 1).
        for (const std::int64_t fewer : {20, 5, 1})
            if (static_cast<double>(elements) * static_cast<double>(iterations) > 2.5e7)
                iterations = std::min(iterations, fewer);
        const std::int64_t batch = std::max<std::int64_t>(1, elements / (n * n));
        out.inputs.at(0).shapes = {{batch, n, n}};
        out.attrs = {{"iter_step", AttrValue::of_int(iterations)}, {"eps", AttrValue::of_float(eps)}};
    }

    // The innermost dim is n <= 16 float32 values, never 512 bytes.
    bool can_align() const override { return false; }
};

HB_REGISTER_OPERATOR(MhcSinkhornOp)

}  // namespace hb
