// group_norm(x, gamma, beta, num_groups, epsilon): torch.nn.functional.group_norm. x is
// [N, C, *]; its C channels split into num_groups groups of C / num_groups consecutive
// channels; each (sample, group) is normalized by its own mean and biased variance over
// the group's channels and all spatial positions, then channel c is scaled by gamma[c]
// and shifted by beta[c]. y has x's shape and dtype.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "ops/elementwise.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

// x as [N, G, channels per group, spatial].
struct GroupView {
    std::int64_t n = 1, groups = 1, channels = 1, spatial = 1;
    std::int64_t group_elements() const { return channels * spatial; }
};

GroupView group_view(const Shape& x, std::int64_t groups) {
    GroupView v;
    v.n = x.at(0);
    v.groups = groups;
    v.channels = x.at(1) / groups;
    for (std::size_t d = 2; d < x.size(); ++d) v.spatial *= x[d];
    return v;
}

// Sum of term(0..n-1) in T: sequential within blocks of 256, block sums added after (the
// order of a vectorized framework loop; one running fp32 sum over 1e6 terms would be a
// worse reference than the kernels under test).
template <typename T, typename Term>
T blocked_sum(std::int64_t n, Term term) {
    T total = 0;
    for (std::int64_t begin = 0; begin < n; begin += 256) {
        T block = 0;
        const std::int64_t end = std::min(n, begin + 256);
        for (std::int64_t i = begin; i < end; ++i) block += term(i);
        total += block;
    }
    return total;
}

}  // namespace

class GroupNormOp final : public OperatorWithCompute<GroupNormOp> {
  public:
    std::string name() const override { return "group_norm"; }
    int level() const override { return 2; }
    std::string baseline_description() const override {
        return "an OpenMP-threaded C++ loop per (sample, group), two passes for mean and variance accumulating in "
               "fp32 blocks, then one fused scale-and-shift pass: oneDNN 2.6 has no group normalization (it arrived "
               "in oneDNN 3.3), and its layer_normalization on an [N*G, C/G*spatial] view cannot apply per-channel "
               "gamma/beta, which would cost a second primitive and another pass over y";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const auto& x = p.input("x").tensors.at(0);
        const auto& gamma = p.input("gamma").tensors.at(0);
        const auto& beta = p.input("beta").tensors.at(0);
        if (x.shape.size() < 2)
            throw Error(p.context() + "x " + shape_to_string(x.shape) + " needs at least 2 dims [N, C, ...]");
        const std::int64_t channels = x.shape[1];
        const std::int64_t groups = p.attr_int("num_groups");
        if (groups <= 0 || channels % groups != 0)
            throw Error(p.context() + "num_groups " + std::to_string(groups) + " must be positive and divide the " +
                        std::to_string(channels) + " channels of x " + shape_to_string(x.shape));
        for (const auto* t : {&gamma, &beta})
            if (t->shape != Shape{channels})
                throw Error(p.context() + (t == &gamma ? "gamma " : "beta ") + shape_to_string(t->shape) +
                            " must be [C] = [" + std::to_string(channels) + "]");
        if (!(p.attr_float("epsilon") >= 0)) throw Error(p.context() + "epsilon must be >= 0");
        return same_shape_output(p, "y");
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const auto& x = in[0].one().v;
        const auto& gamma = in[1].one().v;
        const auto& beta = in[2].one().v;
        const GroupView v = group_view(in[0].one().spec.shape, p.attr_int("num_groups"));
        const T epsilon = static_cast<T>(p.attr_float("epsilon"));
        const std::int64_t m = v.group_elements();
        auto& y = out[0].one().v;
#pragma omp parallel for schedule(dynamic) if (v.n * v.groups >= 4)
        for (std::int64_t ng = 0; ng < v.n * v.groups; ++ng) {
            const T* xg = x.data() + ng * m;
            T* yg = y.data() + ng * m;
            // Two passes (mean, then squared deviations), as torch's CPU kernel is accurate to.
            const T mean = blocked_sum<T>(m, [&](std::int64_t i) { return xg[i]; }) / static_cast<T>(m);
            const T var = blocked_sum<T>(m, [&](std::int64_t i) { return (xg[i] - mean) * (xg[i] - mean); }) /
                          static_cast<T>(m);
            const T rstd = T(1) / std::sqrt(var + epsilon);
            const std::int64_t first_channel = (ng % v.groups) * v.channels;
            for (std::int64_t c = 0; c < v.channels; ++c) {
                const T g = gamma[static_cast<std::size_t>(first_channel + c)];
                const T b = beta[static_cast<std::size_t>(first_channel + c)];
                for (std::int64_t s = 0; s < v.spatial; ++s) {
                    const std::int64_t i = c * v.spatial + s;
                    yg[i] = (xg[i] - mean) * rstd * g + b;
                }
            }
        }
    }

    WorkModel work(const Problem& p) const override {
        const auto& x = p.input("x").tensors.at(0);
        const auto& gamma = p.input("gamma").tensors.at(0);
        const auto& beta = p.input("beta").tensors.at(0);
        const GroupView v = group_view(x.shape, p.attr_int("num_groups"));
        const double n = static_cast<double>(x.numel());
        const double groups = static_cast<double>(v.n * v.groups);
        WorkModel w;
        // Compulsory traffic: x, gamma and beta once, y once. (A group larger than the
        // caches is read twice by a real kernel; the model states the bound.)
        w.bytes_read = static_cast<double>(x.bytes() + gamma.bytes() + beta.bytes());
        w.bytes_written = static_cast<double>(x.bytes());
        // Statistics of a half input are long sums, kept in fp32 (torch's accumulate type):
        // the whole computation runs in fp32 with one cast per element in and out, and one
        // per gamma and beta element.
        const DType f32 = DType::f32;
        const double channels = static_cast<double>(v.n * v.groups * v.channels);
        w.add_vector(OpClass::add, f32, n);  // sum of x
        w.add_vector(OpClass::fma, f32, n);  // sum of x^2 (the variance from both sums)
        w.add_vector(OpClass::sqrt, f32, groups);
        w.add_vector(OpClass::div, f32, groups);
        // Per channel a = rstd * gamma, b = beta - mean * a fold the affine step into one fma.
        w.add_vector(OpClass::fma, f32, n + 2 * channels);
        if (x.dtype != f32)
            w.add_vector(OpClass::cast, f32, 2 * n + static_cast<double>(gamma.numel() + beta.numel()));
        // cann-bench (docs/hap.md): (x - mean) / sqrt(var + eps) * gamma + beta, a reduction (fp32
        // for half inputs). Per element the statistics' sums (mean: add; var as E[x^2] - mean^2:
        // mul, add), x - mean (add), the multiply by the group's reciprocal root, gamma (mul) and
        // beta (add).
        add_formula(w, x.dtype, FormulaMath::in_fp32, n, {{OpClass::add, 4}, {OpClass::mul, 3}});
        // A group's sums are associative: a kernel splits a group over cores (partial sums
        // of a few bytes per core, combined after a barrier) and normalizes its own slice,
        // so the groups do not limit the cores used; the parallel items are the elements.
        w.parallel_items = n;
        w.innermost = x.shape.back();
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        const std::int64_t groups = sampler.cycle(std::vector<std::int64_t>{1, 2, 4, 8, 32, 3, 16, 6, 1, 32});
        const int rank = sampler.pick_rank(2, 5);
        // C is a multiple of the group count; in an aligned case also of the 512-byte unit,
        // since gamma and beta are [C] and count for alignment too.
        const std::int64_t align_elements = 512 / static_cast<std::int64_t>(dtype_size(d.dtype));
        const std::int64_t unit = d.aligned ? std::lcm(groups, align_elements) : groups;
        Shape x;
        if (rank == 2) {
            x = sampler.shape(d.target_elements, 2, d.dtype, d.aligned, unit);
        } else {
            x = sampler.shape(d.target_elements, rank, d.dtype, d.aligned);
            x[1] = std::max(unit, (x[1] + unit / 2) / unit * unit);
            std::int64_t spatial = 1;
            for (std::size_t k = 2; k < x.size(); ++k) spatial *= x[k];
            x[0] = std::max<std::int64_t>(1, std::llround(static_cast<double>(d.target_elements) /
                                                          static_cast<double>(x[1] * spatial)));
        }
        out.inputs.at(0).shapes = {x};
        out.inputs.at(1).shapes = {Shape{x[1]}};
        out.inputs.at(2).shapes = {Shape{x[1]}};
        // Special values go into x only. gamma and beta are parameters: infinite ones would
        // only ask whether a kernel folds the affine step into x * a + b with
        // b = beta - mean * a (torch's CPU kernel does; it turns +-inf into inf - inf = NaN
        // where the definition (x - mean) * rstd * gamma + beta gives +-inf).
        if (std::isnan(d.range.lo) || std::isinf(d.range.lo) || std::isinf(d.range.hi))
            out.inputs.at(1).range = out.inputs.at(2).range = ValueRange{-1, 1};
        const double epsilon = sampler.cycle(std::vector<double>{1e-5, 1e-6, 1e-3, 1e-4, 1e-8, 1e-7});
        out.attrs = {{"num_groups", AttrValue::of_int(groups)}, {"epsilon", AttrValue::of_float(epsilon)}};
    }

    // As rms_norm: fp32/bf16 limits square to infinity in the fp32 statistics every practical
    // kernel keeps; +-1e16 keeps them finite. fp16 keeps its own limit.
    ValueRange boundary_range(DType dtype) const override {
        return dtype == DType::f16 ? ValueRange{-65504, 65504} : ValueRange{-1e16, 1e16};
    }
};

HB_REGISTER_OPERATOR(GroupNormOp)

}  // namespace hb
