// moe_gating_top_k_softmax(x, finished?, k=1) -> (y, expert_idx, row_idx)
// (operators-l3-l4.md). x is [N, E] or [B, N, E] (float16, bfloat16, float32): a row of E
// expert logits per token; finished is bool x.shape[:-1]. With R rows (N, or B*N flattened):
//   p = softmax(x) over E;  y[r, j] = p of the j-th chosen expert, sorted descending (x's dtype)
//   expert_idx[r, j] = the j-th chosen expert (int32), E for a finished row (y unchanged there)
//   row_idx[r, j] = j * R + r (int32; slot-major flat position), shaped (..., k) like y
// hapbench's choice of the experts, stated because expert_idx is compared exactly (the
// reference leaves expert_idx and row_idx uncompared, which would let a kernel skip writing
// them): softmax is strictly increasing in x, so the k largest p are the k largest logits;
// the experts are ranked by x itself, descending, NaN above +inf, equal logits (-0 equals
// +0) by the lower expert index. Ranking the rounded probabilities instead would confuse
// experts whose p ties in fp32 (underflow to 0 at wide ranges, rounding at narrow ones).
// row_idx is compared exactly too (it is fully determined).
// The golden is fp64, the same-precision reference fp32. Special values: a row holding NaN
// or +inf, or only -inf, has NaN probabilities (inf - inf at the max shift), so all its y
// are NaN; its expert_idx still follow the ranking above.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "core/error.hpp"
#include "ops/formula_count.hpp"
#include "ops/int8_quant.hpp"
#include "ops/register.hpp"
#include "ops/suite_budget.hpp"

namespace hb {

namespace {

constexpr std::int64_t kMaxK = 1024;  // the reference interface's limit on k

struct Gating {
    std::int64_t rows = 0, experts = 0, k = 1;
};

Gating gating_of(const Problem& p) {
    const TensorSpec& x = p.input("x").tensors.at(0);
    Gating g;
    g.experts = x.shape.empty() ? 0 : x.shape.back();
    g.rows = g.experts == 0 ? 0 : numel(x.shape) / g.experts;
    g.k = p.attr_int("k");
    return g;
}

// Whether expert a ranks before expert b: larger logit first, NaN above everything, ties
// by the lower index. Shared by the golden and the same-precision reference.
template <typename T>
bool ranks_before(T xa, std::int64_t a, T xb, std::int64_t b) {
    const bool nan_a = std::isnan(xa), nan_b = std::isnan(xb);
    if (nan_a != nan_b) return nan_a;
    if (!nan_a && xa != xb) return xa > xb;
    return a < b;
}

}  // namespace

class MoeGatingTopKSoftmaxOp final : public OperatorWithCompute<MoeGatingTopKSoftmaxOp> {
  public:
    std::string name() const override { return "moe_gating_top_k_softmax"; }
    int level() const override { return 3; }
    std::string baseline_description() const override {
        return "oneDNN softmax_forward over the expert dim into an fp32 workspace (jit; float16/bfloat16 widened to "
               "fp32 first, as a framework does where oneDNN has no half softmax), then a threaded C++ top-k per row "
               "(partial sort of the logits, the same order as the probabilities) gathering y: oneDNN has no top-k";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const TensorSpec& x = p.input("x").tensors.at(0);
        if (x.dtype != DType::f16 && x.dtype != DType::bf16 && x.dtype != DType::f32)
            throw Error(p.context() + "x is " + std::string(dtype_name(x.dtype)) +
                        "; expected float16, bfloat16 or float32");
        if (x.shape.size() != 2 && x.shape.size() != 3)
            throw Error(p.context() + "x has shape " + shape_to_string(x.shape) + "; it must be [N, E] or [B, N, E]");
        const Gating g = gating_of(p);
        if (g.k < 1 || g.k > g.experts || g.k > kMaxK)
            throw Error(p.context() + "k is " + std::to_string(g.k) + "; it must be in [1, min(E, 1024)] with E = " +
                        std::to_string(g.experts));
        if (g.rows * g.k > std::numeric_limits<std::int32_t>::max())
            throw Error(p.context() + "rows x k = " + std::to_string(g.rows * g.k) +
                        " does not fit row_idx's int32 values");
        const Shape lead(x.shape.begin(), x.shape.end() - 1);
        const ArgSpec& finished = p.input("finished");
        if (finished.present) {
            const TensorSpec& f = finished.tensors.at(0);
            if (f.dtype != DType::boolean || f.shape != lead)
                throw Error(p.context() + "finished is " + std::string(dtype_name(f.dtype)) + " " +
                            shape_to_string(f.shape) + "; expected bool " + shape_to_string(lead));
        }
        Shape out_shape = lead;
        out_shape.push_back(g.k);
        ArgSpec y, expert_idx, row_idx;
        y.name = "y";
        y.tensors.push_back(TensorSpec{x.dtype, out_shape});
        expert_idx.name = "expert_idx";
        expert_idx.tensors.push_back(TensorSpec{DType::i32, out_shape});
        row_idx.name = "row_idx";
        row_idx.tensors.push_back(TensorSpec{DType::i32, out_shape});
        return {y, expert_idx, row_idx};
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const Gating g = gating_of(p);
        const T* x = in[0].one().v.data();
        const T* finished = in[1].present ? in[1].one().v.data() : nullptr;
        auto& y = out[0].one().v;
        auto& expert_idx = out[1].one().v;
        auto& row_idx = out[2].one().v;
#pragma omp parallel if (g.rows * g.experts >= 16384)
        {
            std::vector<std::int64_t> order(static_cast<std::size_t>(g.experts));
#pragma omp for schedule(static)
            for (std::int64_t r = 0; r < g.rows; ++r) {
                const T* xr = x + r * g.experts;
                T max = -std::numeric_limits<T>::infinity();
                for (std::int64_t e = 0; e < g.experts; ++e) max = nan_max(max, xr[e]);
                T sum = 0;
                for (std::int64_t e = 0; e < g.experts; ++e) sum += std::exp(xr[e] - max);
                std::iota(order.begin(), order.end(), std::int64_t{0});
                std::partial_sort(order.begin(), order.begin() + g.k, order.end(),
                                  [&](std::int64_t a, std::int64_t b) { return ranks_before(xr[a], a, xr[b], b); });
                const bool done = finished && finished[r] != 0;
                for (std::int64_t j = 0; j < g.k; ++j) {
                    const std::int64_t e = order[static_cast<std::size_t>(j)];
                    const auto at = static_cast<std::size_t>(r * g.k + j);
                    y[at] = std::exp(xr[e] - max) / sum;
                    expert_idx[at] = static_cast<T>(done ? g.experts : e);
                    row_idx[at] = static_cast<T>(j * g.rows + r);
                }
            }
        }
    }

    WorkModel work(const Problem& p) const override {
        const TensorSpec& x = p.input("x").tensors.at(0);
        const Gating g = gating_of(p);
        const double n = static_cast<double>(x.numel()), rows = static_cast<double>(g.rows);
        const double outputs = rows * static_cast<double>(g.k);
        WorkModel w;
        // x and finished read once (a row stays on chip); y and the two int32 index outputs
        // written once.
        w.bytes_read = static_cast<double>(x.bytes());
        if (p.input("finished").present) w.bytes_read += rows;
        w.bytes_written = outputs * static_cast<double>(dtype_size(x.dtype) + 8);
        // Per logit, in fp32: widen (cast, half x), the row max (cmp), x - max (add), exp, the
        // sum (add), and the selection's compare against the current k-th largest (cmp).
        // Per chosen expert: p = e * (1/sum) (the exponential kept from the sum pass, one mul)
        // and narrowing y (cast); per row one reciprocal (div).
        // Formula-literal count (cann-bench convention: elementary op 1, exp 2, division 4)
        // per logit: max + sub + exp + sum + compare = 6; per output element the division 4.
        if (x.dtype != DType::f32) w.add_vector(OpClass::cast, DType::f32, n + outputs);
        w.add_vector(OpClass::cmp, DType::f32, 2 * n);
        w.add_vector(OpClass::add, DType::f32, 2 * n);
        w.add_vector(OpClass::exp, DType::f32, n);
        w.add_vector(OpClass::mul, DType::f32, outputs);
        w.add_vector(OpClass::div, DType::f32, rows);
        add_formula(w, x.dtype, FormulaMath::in_fp32, n, {{OpClass::exp, 1}, {OpClass::add, 1}, {OpClass::div, 1}});
        add_formula(w, x.dtype, FormulaMath::compare, n, {{OpClass::cmp, 1}});
        w.row_elements = g.experts;
        w.parallel_items = rows;
        w.innermost = g.experts;
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        const std::int64_t size = static_cast<std::int64_t>(dtype_size(d.dtype));
        // Expert counts: powers of two (aligned where 512 bytes divide them) and odd counts.
        std::vector<std::int64_t> expert_counts;
        for (std::int64_t e : {4, 8, 16, 32, 64, 127, 128, 256, 511, 512, 1009, 1024})
            if (((e * size) % 512 == 0) == d.aligned) expert_counts.push_back(e);
        const std::int64_t experts = sampler.cycle(expert_counts);
        std::vector<std::int64_t> ks;
        for (std::int64_t k : {1, 2, 4, 8, 16, 32, 64, 128})
            if (k <= experts) ks.push_back(k);
        const std::int64_t k = sampler.pick(ks);
        // finished (bool, one byte a row) would need a multiple of 512 rows to be aligned, so
        // only non-aligned cases carry it.
        const bool with_finished = !d.aligned && sampler.cycle(std::vector<int>{0, 1, 1}) != 0;
        const bool three_d = sampler.cycle(std::vector<int>{0, 0, 1, 0}) != 0;
        const std::int64_t rows =
            std::max<std::int64_t>(1, budgeted_elements(sampler) / (experts + (with_finished ? 1 : 0)));
        Shape x = {rows, experts};
        if (three_d) {
            const std::int64_t batch = sampler.pick(std::vector<std::int64_t>{2, 3, 4, 8});
            x = {batch, std::max<std::int64_t>(1, rows / batch), experts};
        }
        out.inputs.at(0).shapes = {x};
        out.inputs.at(1).present = with_finished;
        out.inputs.at(1).shapes = {Shape(x.begin(), x.end() - 1)};
        out.inputs.at(1).dtype = DType::boolean;
        out.inputs.at(1).range = ValueRange{0, 1};
        out.attrs = {{"k", AttrValue::of_int(k)}};
    }
};

HB_REGISTER_OPERATOR(MoeGatingTopKSoftmaxOp)

}  // namespace hb
