#include "ops/attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/error.hpp"
#include "ops/dgemm.hpp"
#include "ops/formula_count.hpp"

namespace hb {

namespace {

// Element strides of a [B, seq, heads, dim] tensor (dim contiguous) in a layout.
struct HeadStrides {
    std::int64_t batch = 0, seq = 0, head = 0;
};

HeadStrides head_strides(AttentionLayout layout, std::int64_t seq, std::int64_t heads, std::int64_t dim) {
    if (layout == AttentionLayout::bsnd) return {seq * heads * dim, heads * dim, dim};
    return {heads * seq * dim, dim, seq * dim};
}

template <typename T>
void gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const T* a, std::int64_t lda, const T* b,
          std::int64_t ldb, T* c, std::int64_t ldc) {
    if constexpr (std::is_same_v<T, double>) dgemm(ta, tb, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc);
    else sgemm(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
}

template <typename T>
T nan_propagating_max(T a, T b) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
    return a > b ? a : b;
}

// Turns the first `count` raw scores of a row into softmax weights (scaled first, as the
// operators define: dot product, then scale) and zeroes the rest up to `width`. Returns false
// when the row has no weights at all (no key, or a maximum of -inf): its output is 0.
template <typename T>
bool softmax_row(T* row, std::int64_t count, std::int64_t width, T scale) {
    T max = -std::numeric_limits<T>::infinity();
    for (std::int64_t j = 0; j < count; ++j) {
        row[j] *= scale;
        max = nan_propagating_max(max, row[j]);
    }
    const bool has_weights = count > 0 && !(max == -std::numeric_limits<T>::infinity());
    if (has_weights) {
        T sum = 0;
        for (std::int64_t j = 0; j < count; ++j) {
            row[j] = std::exp(row[j] - max);
            sum += row[j];
        }
        for (std::int64_t j = 0; j < count; ++j) row[j] /= sum;
    }
    for (std::int64_t j = has_weights ? count : 0; j < width; ++j) row[j] = 0;
    return has_weights;
}

template <typename T>
bool all_finite(const std::vector<T>& v) {
    return std::all_of(v.begin(), v.end(), [](T x) { return std::isfinite(x); });
}

}  // namespace

AttentionLayout attention_layout_attr(const Problem& p, const std::string& name) {
    const std::string v = p.attr_string(name);
    if (v == "BSND") return AttentionLayout::bsnd;
    if (v == "BNSD") return AttentionLayout::bnsd;
    throw Error(p.context() + name + " is '" + v + "'; it must be \"BSND\" or \"BNSD\"");
}

Shape attention_shape(AttentionLayout layout, std::int64_t batch, std::int64_t seq, std::int64_t heads,
                      std::int64_t dim) {
    return layout == AttentionLayout::bsnd ? Shape{batch, seq, heads, dim} : Shape{batch, heads, seq, dim};
}

AttentionDims attention_dims(const TensorSpec& t, AttentionLayout layout, const std::string& what,
                             const std::string& context) {
    const char* axes = layout == AttentionLayout::bsnd ? "[B, S, N, D] (BSND)" : "[B, N, S, D] (BNSD)";
    if (t.shape.size() != 4)
        throw Error(context + what + " has shape " + shape_to_string(t.shape) + "; it must be 4-D " + axes);
    for (auto extent : t.shape)
        if (extent < 1)
            throw Error(context + what + " has shape " + shape_to_string(t.shape) + "; every dim must be at least 1");
    AttentionDims d;
    d.batch = t.shape[0];
    d.seq = layout == AttentionLayout::bsnd ? t.shape[1] : t.shape[2];
    d.heads = layout == AttentionLayout::bsnd ? t.shape[2] : t.shape[1];
    d.dim = t.shape[3];
    return d;
}

std::int64_t AttentionGeometry::qk_dim() const {
    std::int64_t d = 0;
    for (auto part : qk_parts) d += part;
    return d;
}

std::int64_t AttentionGeometry::allowed_keys(std::int64_t i) const {
    if (!causal) return kv_len;
    return std::clamp<std::int64_t>(i + kv_len - q_len + 1, 0, kv_len);
}

double AttentionGeometry::allowed_pairs_per_head() const {
    if (!causal) return static_cast<double>(q_len) * static_cast<double>(kv_len);
    double pairs = 0;
    for (std::int64_t i = 0; i < q_len; ++i) pairs += static_cast<double>(allowed_keys(i));
    return pairs;
}

double attention_scale(const Problem& p, double default_dim) {
    const double given = p.attr_float("scaleValue");
    if (!std::isfinite(given))
        throw Error(p.context() + "scaleValue is " + std::to_string(given) +
                    "; it must be finite (a value <= 0 selects 1/sqrt(head dim))");
    return given > 0 ? given : 1.0 / std::sqrt(default_dim);
}

template <typename T>
void attention_dense(const AttentionGeometry& g, const std::vector<const T*>& q_parts,
                     const std::vector<const T*>& k_parts, const T* v, T* y) {
    const std::int64_t group = g.group(), s = g.q_len, skv = g.kv_len, dqk = g.qk_dim(), dv = g.v_dim;
    const std::int64_t rows = group * s;
    const T scale = static_cast<T>(g.scale);
    std::vector<T> qb(static_cast<std::size_t>(rows * dqk)), kb(static_cast<std::size_t>(skv * dqk));
    std::vector<T> vb(static_cast<std::size_t>(skv * dv)), yb(static_cast<std::size_t>(rows * dv));
    // Rows of scores at a time: at most 4M of them in memory.
    const std::int64_t chunk = std::clamp<std::int64_t>((std::int64_t{1} << 22) / skv, 1, rows);
    std::vector<T> scores(static_cast<std::size_t>(chunk * skv));
    std::vector<char> has_weights(static_cast<std::size_t>(chunk));
    const HeadStrides vs = head_strides(g.layout, skv, g.kv_heads, dv), ys = head_strides(g.layout, s, g.q_heads, dv);
    for (std::int64_t b = 0; b < g.batch; ++b) {
        for (std::int64_t kvh = 0; kvh < g.kv_heads; ++kvh) {
            // Gather this KV head's keys and values, and its G query heads' rows (row gi * S + i).
            std::int64_t offset = 0;
            for (std::size_t p = 0; p < g.qk_parts.size(); ++p) {
                const std::int64_t width = g.qk_parts[p];
                const HeadStrides ks = head_strides(g.layout, skv, g.kv_heads, width);
                const HeadStrides qs = head_strides(g.layout, s, g.q_heads, width);
                for (std::int64_t j = 0; j < skv; ++j) {
                    const T* src = k_parts[p] + b * ks.batch + j * ks.seq + kvh * ks.head;
                    std::copy(src, src + width, kb.begin() + j * dqk + offset);
                }
                for (std::int64_t gi = 0; gi < group; ++gi)
                    for (std::int64_t i = 0; i < s; ++i) {
                        const T* src = q_parts[p] + b * qs.batch + i * qs.seq + (kvh * group + gi) * qs.head;
                        std::copy(src, src + width, qb.begin() + (gi * s + i) * dqk + offset);
                    }
                offset += width;
            }
            for (std::int64_t j = 0; j < skv; ++j) {
                const T* src = v + b * vs.batch + j * vs.seq + kvh * vs.head;
                std::copy(src, src + dv, vb.begin() + j * dv);
            }
            // With finite values a masked key's zero weight adds exactly 0, so one product
            // serves every row; otherwise each row multiplies only its allowed keys.
            const bool finite_values = all_finite(vb);
            for (std::int64_t r0 = 0; r0 < rows; r0 += chunk) {
                const std::int64_t m = std::min(chunk, rows - r0);
                gemm<T>(false, true, m, skv, dqk, qb.data() + r0 * dqk, dqk, kb.data(), dqk, scores.data(), skv);
                for (std::int64_t r = 0; r < m; ++r)
                    has_weights[static_cast<std::size_t>(r)] =
                        softmax_row(scores.data() + r * skv, g.allowed_keys((r0 + r) % s), skv, scale);
                if (finite_values) {
                    gemm<T>(false, false, m, dv, skv, scores.data(), skv, vb.data(), dv, yb.data() + r0 * dv, dv);
                } else {
                    for (std::int64_t r = 0; r < m; ++r) {
                        const std::int64_t count = g.allowed_keys((r0 + r) % s);
                        if (has_weights[static_cast<std::size_t>(r)])
                            gemm<T>(false, false, 1, dv, count, scores.data() + r * skv, skv, vb.data(), dv,
                                    yb.data() + (r0 + r) * dv, dv);
                    }
                }
                for (std::int64_t r = 0; r < m; ++r)
                    if (!has_weights[static_cast<std::size_t>(r)])
                        std::fill(yb.begin() + (r0 + r) * dv, yb.begin() + (r0 + r + 1) * dv, T(0));
            }
            for (std::int64_t gi = 0; gi < group; ++gi)
                for (std::int64_t i = 0; i < s; ++i) {
                    const T* src = yb.data() + (gi * s + i) * dv;
                    std::copy(src, src + dv, y + b * ys.batch + i * ys.seq + (kvh * group + gi) * ys.head);
                }
        }
    }
}

template <typename T>
void attention_sparse(const AttentionGeometry& g, const T* q, const T* k, const T* v, const T* indices,
                      std::int64_t top_k, T* y, const std::string& context) {
    const std::int64_t group = g.group(), s1 = g.q_len, s2 = g.kv_len, dk = g.qk_dim(), dv = g.v_dim;
    const T scale = static_cast<T>(g.scale);
    const HeadStrides qs = head_strides(g.layout, s1, g.q_heads, dk), ks = head_strides(g.layout, s2, g.kv_heads, dk);
    const HeadStrides vs = head_strides(g.layout, s2, g.kv_heads, dv), ys = head_strides(g.layout, s1, g.q_heads, dv);
    const HeadStrides is = head_strides(g.layout, s1, g.kv_heads, top_k);
    std::vector<char> seen(static_cast<std::size_t>(s2), 0);
    std::vector<std::int64_t> keys;
    keys.reserve(static_cast<std::size_t>(top_k));
    std::vector<T> qb(static_cast<std::size_t>(group * dk)), kb(static_cast<std::size_t>(top_k * dk));
    std::vector<T> vb(static_cast<std::size_t>(top_k * dv)), scores(static_cast<std::size_t>(group * top_k));
    std::vector<T> yb(static_cast<std::size_t>(group * dv));
    for (std::int64_t b = 0; b < g.batch; ++b)
        for (std::int64_t n2 = 0; n2 < g.kv_heads; ++n2)
            for (std::int64_t i = 0; i < s1; ++i) {
                // The allowed set: distinct listed keys, less those past the causal limit.
                const std::int64_t limit = g.causal ? i + s2 - s1 : s2 - 1;
                const T* list = indices + b * is.batch + i * is.seq + n2 * is.head;
                keys.clear();
                for (std::int64_t t = 0; t < top_k; ++t) {
                    const T raw = list[t];
                    if (!(raw >= 0 && raw < static_cast<T>(s2)) || raw != std::floor(raw))
                        throw Error(context + "sparseIndices[" + std::to_string(b) + ", " + std::to_string(i) + ", " +
                                    std::to_string(n2) + ", " + std::to_string(t) + "] (in the layout's order B, S1, "
                                    "N2, topK) is " + std::to_string(static_cast<double>(raw)) +
                                    "; every index must be in [0, " + std::to_string(s2) + ")");
                    const auto j = static_cast<std::int64_t>(raw);
                    if (j > limit || seen[static_cast<std::size_t>(j)]) continue;
                    seen[static_cast<std::size_t>(j)] = 1;
                    keys.push_back(j);
                }
                for (auto j : keys) seen[static_cast<std::size_t>(j)] = 0;
                const auto count = static_cast<std::int64_t>(keys.size());
                std::fill(yb.begin(), yb.end(), T(0));
                if (count > 0) {
                    for (std::int64_t c = 0; c < count; ++c) {
                        const std::int64_t j = keys[static_cast<std::size_t>(c)];
                        const T* ksrc = k + b * ks.batch + j * ks.seq + n2 * ks.head;
                        const T* vsrc = v + b * vs.batch + j * vs.seq + n2 * vs.head;
                        std::copy(ksrc, ksrc + dk, kb.begin() + c * dk);
                        std::copy(vsrc, vsrc + dv, vb.begin() + c * dv);
                    }
                    for (std::int64_t gi = 0; gi < group; ++gi) {
                        const T* src = q + b * qs.batch + i * qs.seq + (n2 * group + gi) * qs.head;
                        std::copy(src, src + dk, qb.begin() + gi * dk);
                    }
                    gemm<T>(false, true, group, count, dk, qb.data(), dk, kb.data(), dk, scores.data(), count);
                    for (std::int64_t gi = 0; gi < group; ++gi) {
                        if (!softmax_row(scores.data() + gi * count, count, count, scale)) continue;
                        gemm<T>(false, false, 1, dv, count, scores.data() + gi * count, count, vb.data(), dv,
                                yb.data() + gi * dv, dv);
                    }
                }
                for (std::int64_t gi = 0; gi < group; ++gi) {
                    const T* src = yb.data() + gi * dv;
                    std::copy(src, src + dv, y + b * ys.batch + i * ys.seq + (n2 * group + gi) * ys.head);
                }
            }
}

void add_attention_work(WorkModel& w, const AttentionWork& a) {
    const double blocks = std::max(1.0, a.batch) * static_cast<double>(a.rows);
    const auto keys = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::floor(a.allowed_scores / blocks)));
    // A block of fewer rows than a 16 x 16 fractal is a matrix-vector product a vector unit
    // can run (decode).
    const bool skinny = a.rows < 16;
    w.contractions.push_back(Contraction{a.dtype, DType::f32, std::max(1.0, a.batch), a.rows, keys, a.qk_dim, skinny});
    w.contractions.push_back(Contraction{a.dtype, DType::f32, std::max(1.0, a.batch), a.rows, a.v_dim, keys, skinny});
    w.add_vector(OpClass::cmp, DType::f32, a.allowed_scores);
    w.add_vector(OpClass::add, DType::f32, 2 * a.allowed_scores);
    w.add_vector(OpClass::exp, DType::f32, a.allowed_scores);
    w.add_vector(OpClass::mul, DType::f32, a.q_elements + a.y_elements);
    // No cube_vector_bytes: on hardware whose cube and vector cores meet in global memory
    // (Ascend 910B) the scores' trip there is already the QK contraction's result, which the
    // model sends through FixPipe, as it does the PV partial sums; the crossing would charge
    // the scores a second time on FixPipe (and the probabilities' way back, which MTE3 writes,
    // to FixPipe as well), and the bound must not exceed what a fused kernel moves.
    // cann-bench (docs/hap.md): per allowed score mul (scale) + exp 2 + add (sum) + div 4 = 8;
    // per masked score a select (the mask), 1.
    add_formula_terms(w, a.dtype, FormulaMath::in_fp32, a.allowed_scores,
                      {{OpClass::mul, 1}, {OpClass::exp, 1}, {OpClass::add, 1}, {OpClass::div, 1}});
    if (a.masked_scores > 0) add_formula_terms(w, a.dtype, FormulaMath::in_fp32, a.masked_scores, {{OpClass::select, 1}});
}

ValueRange attention_input_range(const CaseDraw& d) {
    if (d.range_group == RangeGroup::type_boundary || d.range_group == RangeGroup::special_inf ||
        d.range_group == RangeGroup::special_nan || d.range_group == RangeGroup::zero)
        return d.range;
    const double magnitude = std::max(std::fabs(d.range.lo), std::fabs(d.range.hi));
    if (!(magnitude > 2)) return d.range;
    const double shrink = 2 / magnitude;
    return ValueRange{d.range.lo * shrink, d.range.hi * shrink};
}

double dense_attention_macs(const AttentionGeometry& g) {
    return static_cast<double>(g.batch) * static_cast<double>(g.q_heads) * g.allowed_pairs_per_head() *
           static_cast<double>(g.qk_dim() + g.v_dim);
}

std::int64_t attention_q_len(const AttentionSizing& sizing, std::int64_t kv_len) {
    switch (sizing.pattern) {
        case AttentionPattern::prefill: return kv_len;
        case AttentionPattern::decode: return 1;
        case AttentionPattern::multi_token: return sizing.tokens;
        case AttentionPattern::cross:
            return std::max<std::int64_t>(1, std::llround(static_cast<double>(kv_len) * sizing.ratio));
    }
    return 1;
}

template void attention_dense<double>(const AttentionGeometry&, const std::vector<const double*>&,
                                      const std::vector<const double*>&, const double*, double*);
template void attention_dense<float>(const AttentionGeometry&, const std::vector<const float*>&,
                                     const std::vector<const float*>&, const float*, float*);
template void attention_sparse<double>(const AttentionGeometry&, const double*, const double*, const double*,
                                       const double*, std::int64_t, double*, const std::string&);
template void attention_sparse<float>(const AttentionGeometry&, const float*, const float*, const float*,
                                      const float*, std::int64_t, float*, const std::string&);

}  // namespace hb
