// rms_norm(x, gamma, epsilon=1e-6): y = x / sqrt(mean(x^2) + epsilon) * gamma, the mean
// over the trailing dims of x that gamma's shape names (one or more: gamma [D] normalizes
// the last dim, gamma [H, D] the last two). y has x's shape and dtype; gamma may have any
// float dtype and is read in fp32 by the same-precision reference.
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "ops/elementwise.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

// x as [rows, row] with row = gamma's element count.
struct RowView {
    std::int64_t rows = 1, row = 1;
};

RowView row_view(const Shape& x, const Shape& gamma) {
    RowView v;
    v.row = numel(gamma);
    v.rows = v.row == 0 ? 0 : numel(x) / v.row;
    return v;
}

// Sum of squares of x[0, n) in T: sequential within blocks of 256, block sums added after,
// the accumulation order of a vectorized framework kernel (plain sequential fp32 over 1e5
// terms would be a worse reference than the kernels under test).
template <typename T>
T sum_of_squares(const T* x, std::int64_t n) {
    T total = 0;
    for (std::int64_t begin = 0; begin < n; begin += 256) {
        T block = 0;
        const std::int64_t end = std::min(n, begin + 256);
        for (std::int64_t i = begin; i < end; ++i) block += x[i] * x[i];
        total += block;
    }
    return total;
}

}  // namespace

class RmsNormOp final : public OperatorWithCompute<RmsNormOp> {
  public:
    std::string name() const override { return "rms_norm"; }
    int level() const override { return 2; }
    std::string baseline_description() const override {
        return "an OpenMP-threaded C++ loop per row accumulating in fp32 (fp16/bf16 converted on load): oneDNN 2.6 "
               "has no RMS normalization (its layer_normalization always subtracts the mean; the rms flag came in "
               "oneDNN 3.x)";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const auto& x = p.input("x").tensors.at(0);
        const auto& gamma = p.input("gamma").tensors.at(0);
        if (gamma.shape.empty())
            throw Error(p.context() + "gamma is 0-d; its shape must name the normalized trailing dims of x");
        if (gamma.shape.size() > x.shape.size())
            throw Error(p.context() + "gamma " + shape_to_string(gamma.shape) + " has more dims than x " +
                        shape_to_string(x.shape));
        const std::size_t lead = x.shape.size() - gamma.shape.size();
        for (std::size_t d = 0; d < gamma.shape.size(); ++d)
            if (x.shape[lead + d] != gamma.shape[d])
                throw Error(p.context() + "gamma " + shape_to_string(gamma.shape) + " must equal the trailing dims of x " +
                            shape_to_string(x.shape));
        if (!(p.attr_float("epsilon") >= 0)) throw Error(p.context() + "epsilon must be >= 0");
        return same_shape_output(p, "y");
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const auto& x = in[0].one();
        const auto& gamma = in[1].one().v;
        const RowView v = row_view(x.spec.shape, in[1].one().spec.shape);
        const T epsilon = static_cast<T>(p.attr_float("epsilon"));
        auto& y = out[0].one().v;
#pragma omp parallel for schedule(static) if (v.rows >= 16)
        for (std::int64_t r = 0; r < v.rows; ++r) {
            const T* xr = x.v.data() + r * v.row;
            T* yr = y.data() + r * v.row;
            const T scale = T(1) / std::sqrt(sum_of_squares(xr, v.row) / static_cast<T>(v.row) + epsilon);
            for (std::int64_t i = 0; i < v.row; ++i) yr[i] = xr[i] * scale * gamma[static_cast<std::size_t>(i)];
        }
    }

    WorkModel work(const Problem& p) const override {
        const auto& x = p.input("x").tensors.at(0);
        const auto& gamma = p.input("gamma").tensors.at(0);
        const RowView v = row_view(x.shape, gamma.shape);
        const double n = static_cast<double>(x.numel());
        const double rows = static_cast<double>(v.rows);
        WorkModel w;
        // x once (a row stays on chip between its two passes), gamma once (it is reused by
        // every row from cache), y once.
        w.bytes_read = static_cast<double>(x.bytes() + gamma.bytes());
        w.bytes_written = static_cast<double>(x.bytes());
        w.add_vector(OpClass::fma, x.dtype, n);     // sum of x^2
        w.add_vector(OpClass::add, x.dtype, rows);  // mean + epsilon (the 1/D folds into it)
        w.add_vector(OpClass::sqrt, x.dtype, rows);
        w.add_vector(OpClass::div, x.dtype, rows);
        w.add_vector(OpClass::mul, x.dtype, 2 * n);  // x * scale * gamma
        if (gamma.dtype != x.dtype) w.add_vector(OpClass::cast, gamma.dtype, n);
        // cann-bench (docs/hap.md): x / sqrt(mean(x^2) + eps) * gamma, a reduction (fp32 for half
        // inputs): per element x^2 (mul) and the mean's sum (add), the multiply by the row's
        // reciprocal root and gamma (2 mul).
        add_formula(w, x.dtype, FormulaMath::in_fp32, n, {{OpClass::mul, 3}, {OpClass::add, 1}});
        w.parallel_items = rows;
        w.innermost = x.shape.back();
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        // The normalized dims: mostly the last one (an LLM hidden size), also the last two
        // and three; gamma always has x's dtype here, as in the reference suite.
        const int normalized = sampler.cycle(std::vector<int>{1, 2, 1, 3, 1});
        // At least one leading dim, so that there are rows to spread over threads.
        const int rank = sampler.pick_rank(normalized + 1, std::min(5, normalized + 3));
        const Shape x = sampler.shape(d.target_elements, rank, d.dtype, d.aligned);
        out.inputs.at(0).shapes = {x};
        out.inputs.at(1).shapes = {Shape(x.end() - normalized, x.end())};
        const double epsilon = sampler.cycle(std::vector<double>{1e-6, 1e-5, 1e-8, 1e-4, 1e-12, 1e-7, 1e-3});
        out.attrs = {{"epsilon", AttrValue::of_float(epsilon)}};
    }

    // fp32/bf16 limits (+-3e38) square to infinity in fp32, the precision every practical
    // kernel (and PyTorch) accumulates in, and would only test whether a kernel rescales
    // like hypot; +-1e16 keeps sums of up to 1e6 squares finite in fp32 while still far
    // beyond any fp16 value. fp16 keeps its own limit: its squares fit fp32 easily.
    ValueRange boundary_range(DType dtype) const override {
        return dtype == DType::f16 ? ValueRange{-65504, 65504} : ValueRange{-1e16, 1e16};
    }
};

HB_REGISTER_OPERATOR(RmsNormOp)

}  // namespace hb
