// grouped_matmul_swiglu_quant(x, weight, weight_scale, x_scale, group_list) -> (y, y_scale)
// (operators-l3-l4.md): the mixture-of-experts FFN's first half. x int8 [M, K] holds the rows
// of every group one after another, group_list (E cumulative end rows, non-decreasing, the
// last M; equal neighbours make an empty group) says which; weight int8 [E, K, N] (N even),
// weight_scale float32 [E, N], x_scale float32 [M]. For row r of group g:
//   mm = x[r] W_g (integer-valued: exact in int32 and in the fp64 golden)
//   deq[c] = (mm[c] * x_scale[r]) * weight_scale[g, c]
//   act[j] = SiLU(deq[j]) * deq[N/2 + j]       (the LEFT half is activated), SiLU(t) = t / (1 + e^-t)
//   a = max(max_j |act[j]|, 2^-126)           (fp32's smallest normal, clamped before dividing)
//   y_scale[r] = a / 127 (float32);  y[r, j] = clamp(round_half_even(act[j] / y_scale[r]), -128, 127) int8
// Precision: the reference golden is fp32-pinned; hapbench's is fp64 except that y_scale is an
// fp32 value by definition (rounded before y divides by it); the same-precision reference is
// fp32 (sgemm, then the epilogue in fp32). y may differ by 1 (proto int8: 1), y_scale by 1e-3.
// Special values: a NaN in a row's act makes its y_scale NaN and its y 0 (NaN quotients
// quantize to 0); an infinite act makes y_scale +inf and y 0 (finite / inf) or NaN -> 0.
// group_list must end at M: the reference leaves rows past its last entry uninitialised.
#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/error.hpp"
#include "ops/dgemm.hpp"
#include "ops/formula_count.hpp"
#include "ops/int8_quant.hpp"
#include "ops/register.hpp"
#include "ops/suite_budget.hpp"

namespace hb {

namespace {

// Multiply-adds of one case at most (suite budget: the reference kernel, the baseline and the
// fp64 golden of every public case stay fast on two cores).
constexpr double kMacsCap = 1.5e8;

struct Grouped {
    std::int64_t m = 0, k = 0, n = 0, experts = 0;
    std::vector<std::int64_t> ends;  // group_list
    std::int64_t begin(std::int64_t g) const { return g == 0 ? 0 : ends[static_cast<std::size_t>(g - 1)]; }
    std::int64_t rows(std::int64_t g) const { return ends[static_cast<std::size_t>(g)] - begin(g); }
};

std::string dtype_shape(const TensorSpec& t) { return std::string(dtype_name(t.dtype)) + " " + shape_to_string(t.shape); }

Grouped grouped_of(const Problem& p) {
    const TensorSpec& x = p.input("x").tensors.at(0);
    const TensorSpec& w = p.input("weight").tensors.at(0);
    const TensorSpec& ws = p.input("weight_scale").tensors.at(0);
    const TensorSpec& xs = p.input("x_scale").tensors.at(0);
    if (x.dtype != DType::i8 || x.shape.size() != 2)
        throw Error(p.context() + "x is " + dtype_shape(x) + "; expected int8 [M, K]");
    Grouped g;
    g.m = x.shape[0];
    g.k = x.shape[1];
    if (w.dtype != DType::i8 || w.shape.size() != 3 || w.shape[1] != g.k || w.shape[2] < 2 || w.shape[2] % 2 != 0)
        throw Error(p.context() + "weight is " + dtype_shape(w) + "; expected int8 [E, K, N] with K = " + std::to_string(g.k) +
                    " as x's last dim and N even (SwiGLU splits it in halves)");
    g.experts = w.shape[0];
    g.n = w.shape[2];
    if (g.experts < 1) throw Error(p.context() + "weight has no experts (E = 0)");
    if (ws.dtype != DType::f32 || ws.shape != Shape{g.experts, g.n})
        throw Error(p.context() + "weight_scale is " + dtype_shape(ws) + "; expected float32 [" + std::to_string(g.experts) +
                    ", " + std::to_string(g.n) + "] = [E, N]");
    if (xs.dtype != DType::f32 || xs.shape != Shape{g.m})
        throw Error(p.context() + "x_scale is " + dtype_shape(xs) + "; expected float32 [" + std::to_string(g.m) + "] = [M]");
    const AttrValue& list = p.attr("group_list");
    if (list.type != AttrType::int_list)
        throw Error(p.context() + "group_list must be a list of " + std::to_string(g.experts) +
                    " integers (cumulative end rows, one per expert)");
    g.ends = list.ints;
    if (static_cast<std::int64_t>(g.ends.size()) != g.experts)
        throw Error(p.context() + "group_list has " + std::to_string(g.ends.size()) + " entries; expected E = " +
                    std::to_string(g.experts) + " (one cumulative end row per expert)");
    std::int64_t previous = 0;
    for (std::size_t i = 0; i < g.ends.size(); ++i) {
        if (g.ends[i] < previous)
            throw Error(p.context() + "group_list[" + std::to_string(i) + "] = " + std::to_string(g.ends[i]) +
                        " is below the entry before it (" + std::to_string(previous) +
                        "): the entries are cumulative end rows, non-decreasing from 0");
        previous = g.ends[i];
    }
    if (previous != g.m)
        throw Error(p.context() + "group_list ends at row " + std::to_string(previous) + "; it must end at M = " +
                    std::to_string(g.m) + " (every row of x belongs to a group; the reference leaves rows past the last "
                    "entry uninitialised)");
    return g;
}

void gemm_ab(std::int64_t m, std::int64_t n, std::int64_t k, const double* a, const double* b, double* c) {
    dgemm(false, false, m, n, k, 1.0, a, k, b, n, 0.0, c, n);
}
void gemm_ab(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, const float* b, float* c) {
    sgemm(false, false, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
}

template <typename T>
T silu(T t) {
    return t / (T(1) + std::exp(-t));
}

AttrValue int_list(std::vector<std::int64_t> v) {
    AttrValue a;
    a.type = AttrType::int_list;
    a.ints = std::move(v);
    return a;
}

}  // namespace

class GroupedMatmulSwigluQuantOp final : public OperatorWithCompute<GroupedMatmulSwigluQuantOp> {
  public:
    std::string name() const override { return "grouped_matmul_swiglu_quant"; }
    int level() const override { return 4; }
    std::string baseline_description() const override {
        return "oneDNN matmul per non-empty group (x rows [m_g, K] times the expert's [K, N], int8 x int8 into an int32 "
               "workspace, one primitive per group size, created outside the timed calls), where oneDNN has VNNI "
               "int8 kernels; without VNNI its s8 x s8 kernels saturate 16-bit pair sums, so the int8 operands are "
               "widened to f32 and an f32 matmul computes the same integers exactly. Then a threaded C++ epilogue per "
               "row (dequantize, SiLU gating, row max, int8 quantization): oneDNN 2.6 has no grouped matmul, no "
               "per-row (M) output scale and no dynamic quantization";
    }
    // Aligned int8 cases need K and N at multiples of 512 (and M at 128): an expert alone then
    // holds 262,144 elements, more than the small regime allows, so every case is non-aligned.
    bool can_align() const override { return false; }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const Grouped g = grouped_of(p);
        ArgSpec y, y_scale;
        y.name = "y";
        y.tensors.push_back(TensorSpec{DType::i8, {g.m, g.n / 2}});
        y_scale.name = "y_scale";
        y_scale.tensors.push_back(TensorSpec{DType::f32, {g.m}});
        return {y, y_scale};
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const Grouped g = grouped_of(p);
        const T* x = in[0].one().v.data();
        const T* w = in[1].one().v.data();
        const T* ws = in[2].one().v.data();
        const T* xs = in[3].one().v.data();
        T* y = out[0].one().v.data();
        T* y_scale = out[1].one().v.data();
        const std::int64_t half = g.n / 2;
        std::vector<T> mm;
        for (std::int64_t e = 0; e < g.experts; ++e) {
            const std::int64_t rows = g.rows(e), first = g.begin(e);
            if (rows == 0) continue;
            mm.assign(static_cast<std::size_t>(rows * g.n), T(0));
            gemm_ab(rows, g.n, g.k, x + first * g.k, w + e * g.k * g.n, mm.data());
            const T* wse = ws + e * g.n;
#pragma omp parallel for schedule(static) if (rows * g.n >= 65536)
            for (std::int64_t i = 0; i < rows; ++i) {
                const std::int64_t r = first + i;
                T* mr = mm.data() + i * g.n;
                for (std::int64_t c = 0; c < g.n; ++c) mr[c] = (mr[c] * xs[r]) * wse[c];
                T max_abs = 0;
                for (std::int64_t j = 0; j < half; ++j) {
                    mr[j] = silu(mr[j]) * mr[half + j];  // act, in place of the left half
                    max_abs = nan_max(max_abs, std::fabs(mr[j]));
                }
                const T a = nan_max(max_abs, static_cast<T>(std::ldexp(1.0, -126)));
                const T scale = as_fp32_scale(a / T(127));
                y_scale[r] = scale;
                for (std::int64_t j = 0; j < half; ++j) y[r * half + j] = quantize_to_int8(mr[j] / scale);
            }
        }
    }

    WorkModel work(const Problem& p) const override {
        const Grouped g = grouped_of(p);
        const double m = static_cast<double>(g.m), n = static_cast<double>(g.n), k = static_cast<double>(g.k);
        WorkModel w;
        // x and x_scale once, the weights and scales of every non-empty group once (an empty
        // group's expert need not be read); y and y_scale once.
        w.bytes_read = m * k + 4 * m;
        w.bytes_written = m * n / 2 + 4 * m;
        double tiles = 0;
        for (std::int64_t e = 0; e < g.experts; ++e) {
            const std::int64_t rows = g.rows(e);
            if (rows == 0) continue;
            w.bytes_read += k * n + 4 * n;
            Contraction c;
            c.dtype = DType::i8;
            c.out_dtype = DType::i32;
            c.m = rows;
            c.n = g.n;
            c.k = g.k;
            // Below the cube's 16-row fractal a group is a matrix-vector product the vector
            // unit can run without padding.
            c.vector_ok = rows < 16;
            w.contractions.push_back(c);
            tiles += std::ceil(static_cast<double>(rows) / 16) * std::ceil(n / 16);
        }
        // The epilogue in fp32: per product element widen (cast) and dequantize (one mul: the
        // right half's x_scale cancels in y against y_scale, so a kernel need only apply it
        // once per row there); per activation SiLU (exp, add, div), the gating mul, |act|
        // (abs), the row max (cmp), act * (1/y_scale) (mul), round and narrow (2 casts); per
        // row y_scale and its reciprocal (2 div).
        const double products = m * n, acts = m * n / 2;
        w.add_vector(OpClass::cast, DType::f32, products + 2 * acts);
        w.add_vector(OpClass::mul, DType::f32, products + 2 * acts);
        w.add_vector(OpClass::exp, DType::f32, acts);
        w.add_vector(OpClass::add, DType::f32, acts);
        w.add_vector(OpClass::div, DType::f32, acts + 2 * m);
        w.add_vector(OpClass::abs, DType::f32, acts);
        w.add_vector(OpClass::cmp, DType::f32, acts);
        // The int32 products cross from the matrix to the vector stage; they are the
        // contractions' results, which the solver already sends through global memory where the
        // matrix unit's results leave that way (FixPipe on the 910B), so no crossing is stated
        // on top (it would charge them twice).
        w.parallel_items = std::max(1.0, tiles);
        w.innermost = g.k;
        // cann-bench (docs/hap.md): per activation, as written: dequantize both halves
        // (2 x (cast + 2 mul)), SiLU t sigmoid(t) (negate, exp, add, div, mul), the gating mul,
        // |act| and the row max (abs, cmp), act / y_scale (div) and its rounding (cast):
        // cast 3, mul 6, add 2, exp 1, div 2, abs 1, cmp 1 = 23 operations. The matrix
        // products are priced from the contractions.
        add_formula(w, DType::f32, FormulaMath::in_fp32, acts,
                    {{OpClass::cast, 3}, {OpClass::mul, 6}, {OpClass::add, 2}, {OpClass::exp, 1}, {OpClass::div, 2},
                     {OpClass::abs, 1}, {OpClass::cmp, 1}});
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        Rng& rng = sampler.rng();
        // Experts and the rows' distribution over them cycle: every E of the reference
        // (1, 2, 4, 8, 16) with balanced, skewed and (E >= 4) two-empty-group distributions.
        std::int64_t experts = sampler.cycle(std::vector<std::int64_t>{8, 1, 4, 16, 2, 4, 8, 16, 2, 8});
        const int distribution = sampler.cycle(std::vector<int>{0, 1, 2});  // balanced, skewed, two empty
        const double target = static_cast<double>(level4_budgeted_elements(sampler));
        const Profile& prof = sampler.profile();
        const std::vector<std::int64_t> ks = {32, 64, 96, 127, 200, 255, 256, 384, 511, 640, 1000, 1040, 1536, 2047, 3001, 4096, 7168};
        const std::vector<std::int64_t> ns = {16, 32, 62, 96, 126, 128, 254, 256, 510, 512, 768, 1022, 1056, 1536, 2048, 4096};
        std::int64_t best_m = 0, best_k = 0, best_n = 0;
        double best_gap = 1e300;
        // Shapes within a quarter of the budget are equally good: one at random, so that cases
        // spread over token-heavy (many rows, narrow experts) and weight-heavy (decode: few
        // rows per expert, wide experts) shapes instead of the closest fit.
        std::vector<std::array<std::int64_t, 3>> good;
        for (int attempt = 0; attempt < 400; ++attempt) {
            const std::int64_t k = sampler.pick(ks), n = sampler.pick(ns);
            const double weights = static_cast<double>(experts * k * n + experts * n);
            const double room = target - weights;
            if (room < static_cast<double>(k + 1) * static_cast<double>(experts)) continue;
            std::int64_t m = static_cast<std::int64_t>(room / static_cast<double>(k + 1));
            m = std::min<std::int64_t>(m, static_cast<std::int64_t>(kMacsCap / static_cast<double>(k * n)));
            m = std::min<std::int64_t>(m, 16384);
            if (m < experts) continue;
            const double total = weights + static_cast<double>(m * (k + 1));
            const double gap = std::fabs(std::log(total / target));
            if (prof.regime_of(static_cast<std::int64_t>(total)) != d.regime) continue;
            if (gap < 0.25) good.push_back({m, k, n});
            if (gap < best_gap) best_m = m, best_k = k, best_n = n, best_gap = gap;
        }
        if (!good.empty()) {
            const auto& g = sampler.pick(good);
            best_m = g[0], best_k = g[1], best_n = g[2];
        }
        // No random draw fitted (a small budget for many experts): every (k, n) in turn, the
        // closest fit in any regime, and fewer experts while none fits. Draws that fitted
        // above never get here, so the shipped cases stay what they were.
        while (best_m == 0) {
            for (const std::int64_t k : ks)
                for (const std::int64_t n : ns) {
                    const double weights = static_cast<double>(experts * k * n + experts * n);
                    const double room = target - weights;
                    if (room < static_cast<double>(k + 1) * static_cast<double>(experts)) continue;
                    std::int64_t m = static_cast<std::int64_t>(room / static_cast<double>(k + 1));
                    m = std::min<std::int64_t>(m, static_cast<std::int64_t>(kMacsCap / static_cast<double>(k * n)));
                    m = std::min<std::int64_t>(m, 16384);
                    if (m < experts) continue;
                    const double gap = std::fabs(std::log((weights + static_cast<double>(m * (k + 1))) / target));
                    if (best_m == 0 || gap < best_gap) best_m = m, best_k = k, best_n = n, best_gap = gap;
                }
            if (best_m != 0) break;
            if (experts == 1)
                throw Error("grouped_matmul_swiglu_quant: no shape fits a budget of " +
                                std::to_string(static_cast<std::int64_t>(target)) + " elements under the multiply-add cap",
                            ExitCode::internal);
            experts /= 2;
        }
        // Rows per group: balanced (the remainder on the first groups), skewed (shares drawn
        // from a power law), or two empty groups (E >= 4) with the rest balanced.
        std::vector<double> share(static_cast<std::size_t>(experts), 1.0);
        if (distribution == 1)
            for (auto& s : share) s = std::pow(rng.uniform(0.05, 1.0), 3.0);
        if (distribution == 2 && experts >= 4) {
            const auto a = static_cast<std::size_t>(rng.uniform_int(0, experts - 1));
            auto b = static_cast<std::size_t>(rng.uniform_int(0, experts - 2));
            if (b >= a) ++b;
            share[a] = share[b] = 0;
        }
        const double sum = std::accumulate(share.begin(), share.end(), 0.0);
        std::vector<std::int64_t> ends;
        double acc = 0;
        for (std::int64_t e = 0; e < experts; ++e) {
            acc += share[static_cast<std::size_t>(e)];
            ends.push_back(e + 1 == experts ? best_m : static_cast<std::int64_t>(std::floor(acc / sum * static_cast<double>(best_m))));
        }
        auto& in = out.inputs;
        in.at(0).shapes = {{best_m, best_k}};
        in.at(1).shapes = {{experts, best_k, best_n}};
        in.at(2).shapes = {{experts, best_n}};
        in.at(3).shapes = {{best_m}};
        in.at(0).dtype = in.at(1).dtype = DType::i8;
        in.at(2).dtype = in.at(3).dtype = DType::f32;
        // x spans the full int8 range in the type-boundary case and a narrower one otherwise;
        // the weights the full range. The case's value-range group goes to x_scale (NaN,
        // infinities, zero rows and the magnitudes live there), except the type boundary,
        // which is x's. weight_scale (positive, a decade wide like the reference's) then puts
        // the dequantized values at a standard deviation of 1.6 to 16 whatever x_scale's magnitude:
        // SiLU's e^-t overflows fp32 below t = -88 where the fp64 golden keeps a tiny value,
        // so a row whose whole left half sat there (possible at |deq| of hundreds with narrow
        // experts) would quantize differently in every fp32 kernel.
        in.at(1).range = ValueRange{-128, 127};
        double x_extent = 127;
        if (d.range_group == RangeGroup::type_boundary) {
            in.at(0).range = ValueRange{-128, 127};
            in.at(3).range = ValueRange{1e-3, 1e-2};
        } else {
            x_extent = sampler.pick(std::vector<double>{127, 32, 8});
            in.at(0).range = ValueRange{-x_extent, x_extent};
            in.at(3).range = d.range;
        }
        const ValueRange xs = *in.at(3).range;
        double xs_extent = std::max(std::fabs(xs.lo), std::fabs(xs.hi));
        if (!std::isfinite(xs_extent) || xs_extent == 0) xs_extent = 1;  // NaN, infinities, zeros: [-1, 1] elsewhere
        const double mm_sigma = std::sqrt(static_cast<double>(best_k)) * (x_extent / std::sqrt(3.0)) * (128 / std::sqrt(3.0));
        const double ws_hi = 16 / (mm_sigma * 0.6 * xs_extent);
        const double ws_top = std::pow(10.0, std::floor(std::log10(ws_hi)));  // a power of ten at or below
        in.at(2).range = ValueRange{ws_top / 10, ws_top};
        out.attrs = {{"group_list", int_list(ends)}};
    }
};

HB_REGISTER_OPERATOR(GroupedMatmulSwigluQuantOp)

}  // namespace hb
