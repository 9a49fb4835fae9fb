// mla_prolog(token_x [B, S, He], w_dq [He, Hcq], w_uq_qr [Hcq, N (D + Dr)], w_uk [N, D, Hckv],
// w_dkv_kr [He, Hckv + Dr], rmsnorm_gamma_cq [Hcq], rmsnorm_gamma_ckv [Hckv], rope_sin [B, S, Dr],
// rope_cos [B, S, Dr], n_heads = N, rmsnorm_epsilon_cq = 1e-5, rmsnorm_epsilon_ckv = 1e-5)
// -> (query [B, S, N, Hckv], query_rope [B, S, N, Dr], c_kv [B, S, Hckv], k_rope [B, S, Dr])
// (operators-l3-l4.md), bfloat16 throughout. Per token t:
//   RMSNorm(v; g, e) = (g * v) / sqrt(mean(v^2) + e);  RoPE(v)[j] = v[j] cos[j] - v[j+h] sin[j],
//   RoPE(v)[j+h] = v[j+h] cos[j+h] + v[j] sin[j+h]  (h = Dr / 2, rotate-half)
//   c_q = RMSNorm(x w_dq; gamma_cq, e_cq);  qr = c_q w_uq_qr viewed [N, D + Dr] (head-major)
//   query[t, n] = qr[t, n, :D] w_uk[n];  query_rope[t, n] = RoPE(qr[t, n, D:])
//   u = x w_dkv_kr;  c_kv = RMSNorm(u[:Hckv]; gamma_ckv, e_ckv);  k_rope = RoPE(u[Hckv:])
// The golden is fp64 throughout (the reference pins RMSNorm and RoPE to fp32; hapbench's policy
// is fp64 except where a definition fixes a precision), intermediates never rounded; the
// same-precision reference computes everything in fp32 and rounds only the four outputs.
// Input contract (fix_inputs, the reference's get_input): sin and cos come from one angle per
// (token, half-width position), theta ~ U(-pi, pi): sin = [sin theta | sin theta], cos =
// [cos theta | cos theta] in bfloat16, so each (j, j + h) pair is a rotation; generated
// values are kept where sin or cos hold non-finite values or are constant.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <type_traits>

#include "core/error.hpp"
#include "ops/dgemm.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"
#include "ops/attention_budget.hpp"

namespace hb {

namespace {

struct Prolog {
    std::int64_t batch = 1, seq = 1, hidden = 1, cq = 1, heads = 1, head_dim = 1, ckv = 1, rope = 2;
    double eps_cq = 1e-5, eps_ckv = 1e-5;
    std::int64_t tokens() const { return batch * seq; }
    std::int64_t qr_width() const { return heads * (head_dim + rope); }
};

Prolog prolog_of(const Problem& p) {
    const std::string at = p.context();
    auto spec = [&](const char* name) -> const TensorSpec& { return p.input(name).tensors.at(0); };
    for (const auto& in : p.inputs)
        if (in.tensors.at(0).dtype != DType::bf16)
            throw Error(at + in.name + " is " + std::string(dtype_name(in.tensors.at(0).dtype)) +
                        "; every input of mla_prolog is bfloat16");
    const Shape& x = spec("token_x").shape;
    const Shape& w_uk = spec("w_uk").shape;
    const Shape& sin = spec("rope_sin").shape;
    if (x.size() != 3) throw Error(at + "token_x has shape " + shape_to_string(x) + "; it must be [B, S, He]");
    if (w_uk.size() != 3) throw Error(at + "w_uk has shape " + shape_to_string(w_uk) + "; it must be [N, D, Hckv]");
    if (sin.size() != 3) throw Error(at + "rope_sin has shape " + shape_to_string(sin) + "; it must be [B, S, Dr]");
    for (const auto& in : p.inputs)
        for (auto extent : in.tensors.at(0).shape)
            if (extent < 1)
                throw Error(at + in.name + " has shape " + shape_to_string(in.tensors.at(0).shape) +
                            "; every dim must be at least 1");
    Prolog g;
    g.batch = x[0];
    g.seq = x[1];
    g.hidden = x[2];
    g.heads = w_uk[0];
    g.head_dim = w_uk[1];
    g.ckv = w_uk[2];
    g.rope = sin[2];
    const Shape& w_dq = spec("w_dq").shape;
    if (w_dq.size() != 2 || w_dq[0] != g.hidden)
        throw Error(at + "w_dq has shape " + shape_to_string(w_dq) + "; it must be [He, Hcq] with He = " +
                    std::to_string(g.hidden) + " (token_x's last dim)");
    g.cq = w_dq[1];
    if (p.attr_int("n_heads") != g.heads)
        throw Error(at + "n_heads is " + std::to_string(p.attr_int("n_heads")) + " but w_uk [N, D, Hckv] has N = " +
                    std::to_string(g.heads));
    if (g.rope % 2 != 0)
        throw Error(at + "rope_sin's last dim Dr is " + std::to_string(g.rope) +
                    "; rotate-half RoPE needs an even width");
    auto expect = [&](const char* name, const Shape& want, const char* meaning) {
        if (spec(name).shape != want)
            throw Error(at + std::string(name) + " has shape " + shape_to_string(spec(name).shape) + "; it must be " +
                        shape_to_string(want) + " (" + meaning + ")");
    };
    expect("w_uq_qr", {g.cq, g.qr_width()}, "[Hcq, N * (D + Dr)]");
    expect("w_dkv_kr", {g.hidden, g.ckv + g.rope}, "[He, Hckv + Dr]");
    expect("rmsnorm_gamma_cq", {g.cq}, "[Hcq]");
    expect("rmsnorm_gamma_ckv", {g.ckv}, "[Hckv]");
    expect("rope_cos", sin, "rope_sin's shape");
    if (sin[0] != g.batch || sin[1] != g.seq)
        throw Error(at + "rope_sin has shape " + shape_to_string(sin) + "; it must be [B, S, Dr] with token_x's B, S");
    g.eps_cq = p.attr_float("rmsnorm_epsilon_cq");
    g.eps_ckv = p.attr_float("rmsnorm_epsilon_ckv");
    if (!(g.eps_cq >= 0 && std::isfinite(g.eps_cq)) || !(g.eps_ckv >= 0 && std::isfinite(g.eps_ckv)))
        throw Error(at + "rmsnorm_epsilon_cq and rmsnorm_epsilon_ckv are " + std::to_string(g.eps_cq) + " and " +
                    std::to_string(g.eps_ckv) + "; they must be finite and >= 0");
    return g;
}

template <typename T>
void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const T* a, std::int64_t lda, const T* b, std::int64_t ldb,
          T* c, std::int64_t ldc) {
    if constexpr (std::is_same_v<T, double>) dgemm(false, false, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc);
    else sgemm(false, false, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
}

// out[i] = (gamma[i] * v[i]) / sqrt(mean(v^2) + eps), in that order.
template <typename T>
void rms_norm(const T* v, const T* gamma, std::int64_t n, T eps, T* out) {
    T sum = 0;
    for (std::int64_t i = 0; i < n; ++i) sum += v[i] * v[i];
    const T root = std::sqrt(sum / static_cast<T>(n) + eps);
    for (std::int64_t i = 0; i < n; ++i) out[i] = (gamma[i] * v[i]) / root;
}

template <typename T>
void rope(const T* v, const T* sin, const T* cos, std::int64_t width, T* out) {
    const std::int64_t h = width / 2;
    for (std::int64_t j = 0; j < h; ++j) {
        out[j] = v[j] * cos[j] - v[j + h] * sin[j];
        out[j + h] = v[j + h] * cos[j + h] + v[j] * sin[j + h];
    }
}

// Hidden sizes: powers of two and their multiples, and odd sizes (every case is non-aligned:
// the rotary width is at most 64, so rope_sin's rows are never 512 bytes).
std::int64_t hidden_near(double want, Rng& rng) {
    const auto base = std::max<std::int64_t>(16, std::llround(want));
    return rng.uniform01() < 0.5 ? (base | 1) : std::max<std::int64_t>(16, base / 16 * 16);
}

}  // namespace

class MlaPrologOp final : public OperatorWithCompute<MlaPrologOp> {
  public:
    std::string name() const override { return "mla_prolog"; }
    int level() const override { return 4; }
    std::string baseline_description() const override {
        return "oneDNN matmul for the four projections (x w_dq and x w_dkv_kr in bfloat16 with fp32 results; "
               "c_q w_uq_qr and the per-head q_c w_uk as a batched matmul in fp32, w_uq_qr and w_uk widened to fp32 "
               "per call, since oneDNN 2.6 multiplies no fp32 activations by bfloat16 weights and rounding c_q to "
               "bfloat16 first fails the precision gate), threaded C++ for RMSNorm and RoPE (oneDNN 2.6 has neither)";
    }
    // rope_sin and rope_cos's innermost dim is the rotary width (at most 64 here), never 512 bytes.
    bool can_align() const override { return false; }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const Prolog g = prolog_of(p);
        auto out = [](const char* name, Shape shape) {
            ArgSpec a;
            a.name = name;
            a.tensors.push_back(TensorSpec{DType::bf16, std::move(shape)});
            return a;
        };
        return {out("query", {g.batch, g.seq, g.heads, g.ckv}), out("query_rope", {g.batch, g.seq, g.heads, g.rope}),
                out("c_kv", {g.batch, g.seq, g.ckv}), out("k_rope", {g.batch, g.seq, g.rope})};
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const Prolog g = prolog_of(p);
        const std::int64_t tokens = g.tokens(), qr_width = g.qr_width(), kv_width = g.ckv + g.rope;
        const T* x = in[0].one().v.data();
        const T* sin = in[7].one().v.data();
        const T* cos = in[8].one().v.data();
        std::vector<T> a(static_cast<std::size_t>(tokens * g.cq)), c_q(a.size());
        std::vector<T> qr(static_cast<std::size_t>(tokens * qr_width)), u(static_cast<std::size_t>(tokens * kv_width));
        gemm<T>(tokens, g.cq, g.hidden, x, g.hidden, in[1].one().v.data(), g.cq, a.data(), g.cq);
        for (std::int64_t t = 0; t < tokens; ++t)
            rms_norm<T>(a.data() + t * g.cq, in[5].one().v.data(), g.cq, static_cast<T>(g.eps_cq), c_q.data() + t * g.cq);
        gemm<T>(tokens, qr_width, g.cq, c_q.data(), g.cq, in[2].one().v.data(), qr_width, qr.data(), qr_width);
        T* query = out[0].one().v.data();
        T* query_rope = out[1].one().v.data();
        for (std::int64_t n = 0; n < g.heads; ++n) {
            gemm<T>(tokens, g.ckv, g.head_dim, qr.data() + n * (g.head_dim + g.rope), qr_width,
                    in[3].one().v.data() + n * g.head_dim * g.ckv, g.ckv, query + n * g.ckv, g.heads * g.ckv);
            for (std::int64_t t = 0; t < tokens; ++t)
                rope<T>(qr.data() + t * qr_width + n * (g.head_dim + g.rope) + g.head_dim, sin + t * g.rope,
                        cos + t * g.rope, g.rope, query_rope + (t * g.heads + n) * g.rope);
        }
        gemm<T>(tokens, kv_width, g.hidden, x, g.hidden, in[4].one().v.data(), kv_width, u.data(), kv_width);
        for (std::int64_t t = 0; t < tokens; ++t) {
            rms_norm<T>(u.data() + t * kv_width, in[6].one().v.data(), g.ckv, static_cast<T>(g.eps_ckv),
                        out[2].one().v.data() + t * g.ckv);
            rope<T>(u.data() + t * kv_width + g.ckv, sin + t * g.rope, cos + t * g.rope, g.rope,
                    out[3].one().v.data() + t * g.rope);
        }
    }

    WorkModel work(const Problem& p) const override {
        const Prolog g = prolog_of(p);
        const double tokens = static_cast<double>(g.tokens());
        WorkModel w;
        auto contraction = [&](double batch, std::int64_t n, std::int64_t k) {
            w.contractions.push_back(Contraction{DType::bf16, DType::f32, batch, g.tokens(), n, k, g.tokens() < 16});
        };
        contraction(1, g.cq, g.hidden);                               // x w_dq
        contraction(1, g.qr_width(), g.cq);                           // c_q w_uq_qr
        contraction(static_cast<double>(g.heads), g.ckv, g.head_dim);  // q_c w_uk, per head
        contraction(1, g.ckv + g.rope, g.hidden);                     // x w_dkv_kr
        // RMSNorm per element: the square and its sum, gamma and 1/r (mul, add, 2 mul); per
        // token and norm a root and a reciprocal. RoPE per element: a mul and an FMA.
        const double normed = tokens * static_cast<double>(g.cq + g.ckv);
        const double rotated = tokens * static_cast<double>((g.heads + 1) * g.rope);
        w.add_vector(OpClass::mul, DType::f32, 3 * normed + rotated);
        w.add_vector(OpClass::add, DType::f32, normed);
        w.add_vector(OpClass::fma, DType::f32, rotated);
        w.add_vector(OpClass::sqrt, DType::f32, 2 * tokens);
        w.add_vector(OpClass::div, DType::f32, 2 * tokens);
        // cann-bench (docs/hap.md): RMSNorm x^2 (mul), the mean's sum (add), the reciprocal root
        // (mul), gamma (mul) = 4 per normalized element; RoPE 2 mul, add and the rotation's
        // negation of half the elements = 3.5 per rotated element; in fp32 (the reference pins
        // both to fp32) without casts (they read the projections' fp32 results).
        add_formula_terms(w, DType::bf16, FormulaMath::in_fp32, normed, {{OpClass::mul, 3}, {OpClass::add, 1}});
        add_formula_terms(w, DType::bf16, FormulaMath::in_fp32, rotated, {{OpClass::mul, 2}, {OpClass::add, 1.5}});
        for (const auto& in : p.inputs) w.bytes_read += static_cast<double>(in.tensors.at(0).bytes());
        for (const auto& o : p.outputs) w.bytes_written += static_cast<double>(o.tensors.at(0).bytes());
        // Every output column of every projection, per token (a kernel splits weights by columns).
        w.parallel_items = tokens * static_cast<double>(g.cq + g.qr_width() + g.heads * g.ckv + g.ckv + g.rope);
        w.innermost = g.hidden;
        return w;
    }

    void fix_inputs(const Problem& p, std::vector<Arg>& inputs, Rng& rng) const override {
        const Prolog g = prolog_of(p);
        Tensor& sin = inputs.at(7).tensors.at(0);
        Tensor& cos = inputs.at(8).tensors.at(0);
        const auto n = static_cast<std::size_t>(sin.spec.numel());
        bool finite = true, constant = true;
        for (std::size_t i = 0; i < n; ++i) {
            const double s = sin.get(i), c = cos.get(i);
            finite = finite && std::isfinite(s) && std::isfinite(c);
            constant = constant && s == sin.get(0) && c == cos.get(0);
        }
        if (!finite || constant) return;
        const std::int64_t h = g.rope / 2;
        for (std::int64_t t = 0; t < g.tokens(); ++t)
            for (std::int64_t j = 0; j < h; ++j) {
                const double theta = rng.uniform(-std::numbers::pi, std::numbers::pi);
                for (std::int64_t at : {t * g.rope + j, t * g.rope + j + h}) {
                    sin.set(static_cast<std::size_t>(at), std::sin(theta));
                    cos.set(static_cast<std::size_t>(at), std::cos(theta));
                }
            }
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        Rng& rng = sampler.rng();
        const double target = static_cast<double>(attention_budgeted_elements(sampler));
        // Head and latent widths by regime (DeepSeek-V3: N 128, D 128, Dr 64, Hckv 512, Hcq 1536,
        // He 7168, scaled to the cpu profile), He and Hcq from the budget.
        Prolog g;
        if (d.regime == Regime::small) {
            g.heads = sampler.pick(std::vector<std::int64_t>{1, 2, 4});
            g.head_dim = sampler.pick(std::vector<std::int64_t>{16, 32});
            g.rope = sampler.pick(std::vector<std::int64_t>{8, 16});
            g.ckv = sampler.pick(std::vector<std::int64_t>{32, 64, 96});
        } else if (d.regime == Regime::medium) {
            g.heads = sampler.pick(std::vector<std::int64_t>{4, 8});
            g.head_dim = sampler.pick(std::vector<std::int64_t>{32, 64});
            g.rope = sampler.pick(std::vector<std::int64_t>{16, 32});
            g.ckv = sampler.pick(std::vector<std::int64_t>{128, 256});
        } else {
            g.heads = sampler.pick(std::vector<std::int64_t>{8, 16});
            g.head_dim = sampler.pick(std::vector<std::int64_t>{64, 128});
            g.rope = sampler.pick(std::vector<std::int64_t>{32, 64});
            g.ckv = sampler.pick(std::vector<std::int64_t>{256, 512});
        }
        const double cq_ratio = rng.uniform(0.15, 0.35);  // Hcq / He
        auto weights = [&](double he) {
            const double cq = he * cq_ratio;
            return he * cq + cq * static_cast<double>(g.qr_width()) + static_cast<double>(g.heads * g.head_dim * g.ckv) +
                   he * static_cast<double>(g.ckv + g.rope) + cq + static_cast<double>(g.ckv);
        };
        // The weights take 60 to 90% of the budget; tokens the rest.
        const double share = rng.uniform(0.6, 0.9);
        double lo = 16, hi = 65536;
        for (int it = 0; it < 60; ++it) {
            const double mid = std::sqrt(lo * hi);
            (weights(mid) < share * target ? lo : hi) = mid;
        }
        g.hidden = hidden_near(lo, rng);
        const double macs_cap = 4e7;
        std::int64_t tokens = 1;
        for (int round = 0; round < 200; ++round) {
            g.cq = std::max<std::int64_t>(16, std::llround(static_cast<double>(g.hidden) * cq_ratio));
            const double w_elements = weights(static_cast<double>(g.hidden));
            const double per_token = static_cast<double>(g.hidden + 2 * g.rope);
            const double macs_per_token = static_cast<double>(g.hidden * g.cq + g.cq * g.qr_width() +
                                                              g.heads * g.head_dim * g.ckv + g.hidden * (g.ckv + g.rope));
            tokens = std::clamp<std::int64_t>(std::llround((target - w_elements) / per_token), 1,
                                              std::max<std::int64_t>(1, static_cast<std::int64_t>(macs_cap / macs_per_token)));
            // The drawn regime before the cap: a wider hidden size where the shape falls short.
            if (w_elements + static_cast<double>(tokens) * per_token >= static_cast<double>(regime_floor_elements(sampler))) break;
            g.hidden += std::max<std::int64_t>(1, g.hidden / 50);
        }
        // Decode (S = 1), multi-token prediction (S = 2, 4) and prefill (B = 1, 2).
        const int pattern = sampler.cycle(std::vector<int>{0, 1, 2, 0, 2});
        std::int64_t batch = tokens, seq = 1;
        if (pattern == 1) seq = std::min<std::int64_t>(tokens, sampler.pick(std::vector<std::int64_t>{2, 4}));
        if (pattern == 2) batch = std::min<std::int64_t>(tokens, sampler.pick(std::vector<std::int64_t>{1, 2}));
        if (pattern == 1) batch = (tokens + seq - 1) / seq;
        if (pattern == 2) seq = (tokens + batch - 1) / batch;
        const Shape rope_shape{batch, seq, g.rope};
        out.inputs.at(0).shapes = {Shape{batch, seq, g.hidden}};
        out.inputs.at(1).shapes = {Shape{g.hidden, g.cq}};
        out.inputs.at(2).shapes = {Shape{g.cq, g.qr_width()}};
        out.inputs.at(3).shapes = {Shape{g.heads, g.head_dim, g.ckv}};
        out.inputs.at(4).shapes = {Shape{g.hidden, g.ckv + g.rope}};
        out.inputs.at(5).shapes = {Shape{g.cq}};
        out.inputs.at(6).shapes = {Shape{g.ckv}};
        out.inputs.at(7).shapes = {rope_shape};
        out.inputs.at(8).shapes = {rope_shape};
        // The draw's range applies to the activations token_x (and to sin and cos, which
        // fix_inputs redraws unless they are special or constant); weights and gammas are drawn
        // from [-1, 1], a trained model's scale, except in the zero and special-value cases.
        // RMSNorm makes c_q independent of x's scale, so every output but k_rope stays O(10):
        // with weights in the thousands too, query's sums would reach 1e10 and fp32 kernels
        // would cancel to small values with a few percent of error in the precision gate's
        // normal region, about once per hundred thousand outputs.
        const RangeGroup group = d.range_group;
        if (group != RangeGroup::zero && group != RangeGroup::special_inf && group != RangeGroup::special_nan)
            for (std::size_t k = 1; k <= 6; ++k) out.inputs.at(k).range = ValueRange{-1, 1};
        const auto eps = sampler.cycle(std::vector<std::pair<double, double>>{
            {1e-5, 1e-5}, {1e-6, 1e-8}, {1e-5, 1e-5}, {1e-3, 1e-6}, {1e-8, 1e-5}, {1e-5, 1e-5}, {1e-6, 1e-6}});
        out.attrs = {{"n_heads", AttrValue::of_int(g.heads)},
                     {"rmsnorm_epsilon_cq", AttrValue::of_float(eps.first)},
                     {"rmsnorm_epsilon_ckv", AttrValue::of_float(eps.second)}};
    }

    // +-1e6: the projections' squares and their sums stay finite in fp32 (hidden x 1e12, squared,
    // times Hcq), the precision the reference's RMSNorm runs in; +-3e38 would overflow them.
    ValueRange boundary_range(DType) const override { return ValueRange{-1e6, 1e6}; }
};

HB_REGISTER_OPERATOR(MlaPrologOp)

}  // namespace hb
