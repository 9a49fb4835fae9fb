// engram_gate_fusion(keys, hidden_states, value, norm1_weight, norm2_weight, conv_norm_weight,
// conv_weight, conv_state?, hc_mult=4, hidden_size=1024, kernel_size=4, dilation=3,
// norm_eps=1e-5) -> (output, conv_state_out) (operators-l3-l4.md): DeepSeek's Engram gate.
// keys, hidden_states [B, L, HC, D] bfloat16; value [B, L, D] bfloat16; the three norm
// weights [HC, D] float32; conv_weight [HC*D, 1, K] float32; conv_state [B, HC*D, S] bfloat16
// or absent, S = (K - 1) * dilation. HC, D, K must equal hc_mult, hidden_size, kernel_size.
//   RMSNorm(v, w) = (v / sqrt(mean(v^2 over D) + norm_eps)) * w[hc]      (divide, then multiply)
//   r[b,l,hc] = sum over d of RMSNorm(keys, norm1) * RMSNorm(hidden_states, norm2) / sqrt(D)
//   gate = sigmoid(sqrt(max(|r|, 1e-6)) * sign(r))                        (sign(0) = 0: gate 0.5)
//   vg[b,l,hc,d] = gate[b,l,hc] * value[b,l,d];  n = RMSNorm(vg, conv_norm_weight)
//   channels c = hc*D + d over time l: Xc = [conv_state (zeros when absent) | n] (S + L steps)
//   conv[b,c,l] = sum over k < K of conv_weight[c,0,k] * Xc[b,c,l + k*dilation]  (causal, dilated)
//   output = vg + SiLU(conv) as [B, L, HC, D];  conv_state_out = the last S steps of Xc
// with SiLU(t) = t / (1 + e^-t); both outputs in keys' dtype. The reference golden is
// fp32-pinned; hapbench's golden is fp64, the same-precision reference fp32.
// Special values: an infinity or NaN in a (b, l, hc) row of keys or hidden_states makes its
// norm NaN (inf / inf), hence its gate, its vg and n row, the conv of its channels at that
// step and the next (K - 1) * dilation steps, and their outputs; likewise through value and
// conv_state. Other positions are unaffected.
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

struct Engram {
    std::int64_t batch = 0, length = 0, heads = 0, dim = 0, taps = 0, dilation = 1;
    std::int64_t state() const { return (taps - 1) * dilation; }  // S
    std::int64_t channels() const { return heads * dim; }
    std::int64_t rows() const { return batch * length * heads; }  // (b, l, hc) rows of D
};

std::string describe(const TensorSpec& t) { return std::string(dtype_name(t.dtype)) + " " + shape_to_string(t.shape); }

Engram engram_of(const Problem& p) {
    const TensorSpec& keys = p.input("keys").tensors.at(0);
    if (keys.dtype != DType::bf16 || keys.shape.size() != 4)
        throw Error(p.context() + "keys is " + describe(keys) + "; expected bfloat16 [B, L, HC, D]");
    Engram g;
    g.batch = keys.shape[0];
    g.length = keys.shape[1];
    g.heads = keys.shape[2];
    g.dim = keys.shape[3];
    g.taps = p.attr_int("kernel_size");
    g.dilation = p.attr_int("dilation");
    auto attr_must_equal = [&](const char* attr, std::int64_t dim_value, const char* dim_name) {
        if (p.attr_int(attr) != dim_value)
            throw Error(p.context() + attr + " is " + std::to_string(p.attr_int(attr)) + " but keys' " + dim_name + " is " +
                        std::to_string(dim_value) + "; they must be equal");
    };
    attr_must_equal("hc_mult", g.heads, "HC (dim 2)");
    attr_must_equal("hidden_size", g.dim, "D (dim 3)");
    if (g.dim < 1 || g.heads < 1) throw Error(p.context() + "keys " + shape_to_string(keys.shape) + " has HC or D = 0");
    if (g.taps < 2)
        throw Error(p.context() + "kernel_size is " + std::to_string(g.taps) +
                    "; it must be >= 2 (a kernel of 1 keeps no convolution state)");
    if (g.dilation < 1) throw Error(p.context() + "dilation is " + std::to_string(g.dilation) + "; it must be >= 1");
    const double eps = p.attr_float("norm_eps");
    if (!(eps >= 0) || !std::isfinite(eps))
        throw Error(p.context() + "norm_eps is " + std::to_string(eps) + "; it must be finite and >= 0");
    auto expect = [&](const char* name, DType dtype, const Shape& shape) {
        const TensorSpec& t = p.input(name).tensors.at(0);
        if (t.dtype != dtype || t.shape != shape)
            throw Error(p.context() + name + " is " + describe(t) + "; expected " + std::string(dtype_name(dtype)) + " " +
                        shape_to_string(shape));
    };
    expect("hidden_states", DType::bf16, keys.shape);
    expect("value", DType::bf16, {g.batch, g.length, g.dim});
    for (const char* name : {"norm1_weight", "norm2_weight", "conv_norm_weight"}) expect(name, DType::f32, {g.heads, g.dim});
    expect("conv_weight", DType::f32, {g.channels(), 1, g.taps});
    if (p.input("conv_state").present) expect("conv_state", DType::bf16, {g.batch, g.channels(), g.state()});
    return g;
}

template <typename T>
T rms_scale(const T* v, std::int64_t n, T eps) {
    T sum = 0;
    for (std::int64_t i = 0; i < n; ++i) sum += v[i] * v[i];
    return std::sqrt(sum / static_cast<T>(n) + eps);
}

template <typename T>
T sign_of(T v) {
    if (std::isnan(v)) return v;
    return v > 0 ? T(1) : v < 0 ? T(-1) : T(0);
}

}  // namespace

class EngramGateFusionOp final : public OperatorWithCompute<EngramGateFusionOp> {
  public:
    std::string name() const override { return "engram_gate_fusion"; }
    int level() const override { return 3; }
    std::string baseline_description() const override {
        return "threaded C++ in fp32, two passes: OpenMP over (b, l, hc) rows for the two RMSNorms, the gate and "
               "vg and its RMSNorm into an fp32 workspace, then over (b, channel) for the causal dilated convolution, "
               "SiLU and the residual: oneDNN 2.6 has no RMS normalization and no fused gate; only the depthwise "
               "convolution has a primitive, and calling it on the normalized channels would add a transpose and a "
               "pass over the workspace";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const Engram g = engram_of(p);
        const TensorSpec& keys = p.input("keys").tensors.at(0);
        ArgSpec output, state;
        output.name = "output";
        output.tensors.push_back(keys);
        state.name = "conv_state_out";
        state.tensors.push_back(TensorSpec{keys.dtype, {g.batch, g.channels(), g.state()}});
        return {output, state};
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const Engram g = engram_of(p);
        const T* keys = in[0].one().v.data();
        const T* hidden = in[1].one().v.data();
        const T* value = in[2].one().v.data();
        const T* norm1 = in[3].one().v.data();
        const T* norm2 = in[4].one().v.data();
        const T* conv_norm = in[5].one().v.data();
        const T* conv_weight = in[6].one().v.data();
        const T* state_in = in[7].present ? in[7].one().v.data() : nullptr;
        const T eps = static_cast<T>(p.attr_float("norm_eps"));
        const std::int64_t d_n = g.dim, c_n = g.channels(), s_n = g.state(), length = g.length;
        const T inv_sqrt_d = T(1) / std::sqrt(static_cast<T>(d_n));
        std::vector<T> vg(static_cast<std::size_t>(g.rows() * d_n)), n(vg.size());
#pragma omp parallel for schedule(static) if (g.rows() * d_n >= 16384)
        for (std::int64_t row = 0; row < g.rows(); ++row) {
            const std::int64_t hc = row % g.heads, token = row / g.heads;  // token = b * L + l
            const T* k = keys + row * d_n;
            const T* q = hidden + row * d_n;
            const T rk = rms_scale(k, d_n, eps), rq = rms_scale(q, d_n, eps);
            T dot = 0;
            for (std::int64_t d = 0; d < d_n; ++d) dot += ((k[d] / rk) * norm1[hc * d_n + d]) * ((q[d] / rq) * norm2[hc * d_n + d]);
            const T r = dot * inv_sqrt_d;
            const T gate = T(1) / (T(1) + std::exp(-(std::sqrt(nan_max(std::fabs(r), T(1e-6))) * sign_of(r))));
            T* v = vg.data() + row * d_n;
            for (std::int64_t d = 0; d < d_n; ++d) v[d] = gate * value[token * d_n + d];
            const T rv = rms_scale(v, d_n, eps);
            for (std::int64_t d = 0; d < d_n; ++d) n[static_cast<std::size_t>(row * d_n + d)] = (v[d] / rv) * conv_norm[hc * d_n + d];
        }
        auto& output = out[0].one().v;
        auto& state_out = out[1].one().v;
#pragma omp parallel for schedule(static) if (g.rows() * d_n >= 16384)
        for (std::int64_t bc = 0; bc < g.batch * c_n; ++bc) {
            const std::int64_t b = bc / c_n, c = bc % c_n;
            // Step t of Xc: the old state for t < S, else n at token t - S.
            auto xc = [&](std::int64_t t) -> T {
                if (t < s_n) return state_in ? state_in[bc * s_n + t] : T(0);
                return n[static_cast<std::size_t>((b * length + (t - s_n)) * c_n + c)];
            };
            for (std::int64_t l = 0; l < g.length; ++l) {
                T conv = 0;
                for (std::int64_t tap = 0; tap < g.taps; ++tap) conv += conv_weight[c * g.taps + tap] * xc(l + tap * g.dilation);
                const auto at = static_cast<std::size_t>((b * g.length + l) * c_n + c);
                output[at] = vg[at] + conv / (T(1) + std::exp(-conv));
            }
            for (std::int64_t s = 0; s < s_n; ++s) state_out[static_cast<std::size_t>(bc * s_n + s)] = xc(g.length + s);
        }
    }

    WorkModel work(const Problem& p) const override {
        const Engram g = engram_of(p);
        const double elements = static_cast<double>(g.rows() * g.dim);  // of keys, and of output
        const double rows = static_cast<double>(g.rows());
        const double value_elements = static_cast<double>(g.batch * g.length * g.dim);
        const double state_elements = static_cast<double>(g.batch * g.channels() * g.state());
        const bool with_state = p.input("conv_state").present;
        const double taps = static_cast<double>(g.taps);
        WorkModel w;
        // Every input once (weights reused from cache), both outputs once; vg and n stay on
        // chip between the gate and the convolution (a kernel walks tokens in order per
        // channel block and keeps the last S steps of n).
        for (const auto& arg : p.inputs)
            if (arg.present) w.bytes_read += static_cast<double>(arg.tensors.at(0).bytes());
        for (const auto& arg : p.outputs) w.bytes_written += static_cast<double>(arg.tensors.at(0).bytes());
        // In fp32, per element of keys: widen keys and hidden (2 casts); their sums of squares
        // (2 fma); the dot product of the normalized rows as (k * w1) * (q * w2) summed (2 mul,
        // fma); vg = gate * value (mul); its sum of squares (fma) and n = vg * (1/r) * w (2 mul);
        // the convolution (K fma); SiLU (exp, add, div, mul); the residual (add); narrow
        // (cast). Per row: three 1/rms (3 sqrt, 3 div), the gate (abs, cmp, sqrt, exp, add,
        // div, mul). value and conv_state widened once, conv_state_out narrowed.
        // Formula-literal count (cann-bench convention: elementary op or cast 1, exp 2,
        // division 4) per output element: 2 casts + RMSNorm of keys and of hidden (square, sum,
        // divide, multiply: 7 each) + dot (mul, add) 2 + vg mul 1 + RMSNorm(vg) 7 + conv 2K +
        // SiLU (neg, exp, add, div, mul) 9 + residual 1 + cast 1 = 2K + 37; per row the
        // 1/sqrt(D) scale, sqrt, clamp, sign, mul and sigmoid (neg, exp, add, div) = 13 plus
        // the three root means (add eps + sqrt = 2 each).
        w.add_vector(OpClass::cast, DType::f32,
                     3 * elements + value_elements + (with_state ? state_elements : 0) + state_elements);
        w.add_vector(OpClass::fma, DType::f32, (4 + taps) * elements);
        w.add_vector(OpClass::mul, DType::f32, 6 * elements + rows);
        w.add_vector(OpClass::exp, DType::f32, elements + rows);
        w.add_vector(OpClass::add, DType::f32, 2 * elements + 4 * rows);
        w.add_vector(OpClass::div, DType::f32, elements + 4 * rows);
        w.add_vector(OpClass::sqrt, DType::f32, 4 * rows);
        w.add_vector(OpClass::abs, DType::f32, rows);
        w.add_vector(OpClass::cmp, DType::f32, rows);
        const TensorSpec& keys = p.input("keys").tensors.at(0);
        add_formula(w, keys.dtype, FormulaMath::in_fp32, elements,
                    {{OpClass::mul, 12 + taps}, {OpClass::add, 6 + taps}, {OpClass::exp, 1}, {OpClass::div, 1},
                     {OpClass::select, taps}});
        add_formula_terms(w, keys.dtype, FormulaMath::compare, state_elements, {{OpClass::select, 1}});
        // Rows of D are normalized whole.
        w.row_elements = g.dim;
        w.parallel_items = rows;
        w.innermost = g.dim;
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const std::int64_t heads = sampler.cycle(std::vector<std::int64_t>{4, 2, 8});
        const std::int64_t dim = sampler.cycle(std::vector<std::int64_t>{1024, 769, 256, 512, 129});
        const std::int64_t taps = sampler.cycle(std::vector<std::int64_t>{4, 8, 4, 2});
        const std::int64_t dilation = sampler.cycle(std::vector<std::int64_t>{3, 1, 2});
        const double eps = sampler.cycle(std::vector<double>{1e-5, 1e-6});
        // Decode-style cases carry a convolution state (one in three).
        const bool with_state = sampler.cycle(std::vector<int>{0, 0, 1}) != 0;
        const std::int64_t batch = sampler.pick(std::vector<std::int64_t>{1, 1, 2, 3, 4, 8});
        const std::int64_t state = (taps - 1) * dilation;
        // Elements per token: keys and hidden (2 HC D) and value (D), plus the state per batch.
        const double per_token = static_cast<double>(dim * (2 * heads + 1));
        const double fixed = static_cast<double>(heads * dim * (3 + taps)) +
                             (with_state ? static_cast<double>(batch * heads * dim * state) : 0);
        const double budget = std::max(static_cast<double>(budgeted_elements(sampler)) - fixed, per_token * batch);
        const std::int64_t length = std::max<std::int64_t>(1, std::llround(budget / per_token / static_cast<double>(batch)));
        auto& in = out.inputs;
        in.at(0).shapes = in.at(1).shapes = {{batch, length, heads, dim}};
        in.at(2).shapes = {{batch, length, dim}};
        for (int a : {3, 4, 5}) {
            in.at(a).shapes = {{heads, dim}};
            in.at(a).dtype = DType::f32;
            in.at(a).range = ValueRange{-1, 1};  // signed norm weights
        }
        in.at(6).shapes = {{heads * dim, 1, taps}};
        in.at(6).dtype = DType::f32;
        in.at(6).range = ValueRange{-0.5, 0.5};
        in.at(7).present = with_state;
        in.at(7).shapes = {{batch, heads * dim, state}};
        in.at(7).dtype = DType::bf16;
        out.attrs = {{"hc_mult", AttrValue::of_int(heads)},       {"hidden_size", AttrValue::of_int(dim)},
                     {"kernel_size", AttrValue::of_int(taps)},    {"dilation", AttrValue::of_int(dilation)},
                     {"norm_eps", AttrValue::of_float(eps)}};
    }

    // +-1e16: the squares of a row of D values stay finite in fp32 (+-3e38 would overflow
    // them, testing only overflow).
    ValueRange boundary_range(DType) const override { return {-1e16, 1e16}; }

    // conv_weight's innermost dim is K (never 512 bytes of float32).
    bool can_align() const override { return false; }
};

HB_REGISTER_OPERATOR(EngramGateFusionOp)

}  // namespace hb
