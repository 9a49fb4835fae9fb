// apply_rotary_pos_emb(query, key, cos, sin, layout=0, rotaryMode="half"): rotary position
// embedding, out = x * cos + rotate(x) * sin for x = query and x = key.
//   layout 0: query/key are [B, S, N, D]; layout 1: [B, N, S, D]. key may have fewer heads
//     than query (grouped-query attention); B, S and D must agree.
//   cos/sin: [S, D/2] (shared by the batch) or [B, S, D/2], repeated to D by the mode:
//     "half": cos_full = cat(cos, cos), rotate(x) = cat(-x[D/2:], x[:D/2]) (rotate_half);
//     "interleaved": cos_full[2i] = cos_full[2i+1] = cos[i], rotate(x)[2i] = -x[2i+1],
//     rotate(x)[2i+1] = x[2i].
// All four inputs share one dtype; both outputs have it. fp16/bf16 compute in fp32.
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

// The geometry of one case: rows of D elements, and where each row's cos/sin row is.
struct RopeGeometry {
    std::int64_t batch = 1, seq = 1, heads_q = 1, heads_k = 1, dim = 2;
    int layout = 0;
    bool per_batch = false;  // cos/sin are [B, S, D/2]
    bool interleaved = false;

    // The cos/sin row of row `r` of a tensor with `heads` heads.
    std::int64_t table_row(std::int64_t r, std::int64_t heads) const {
        std::int64_t b, s;
        if (layout == 0) {  // r = (b * S + s) * N + n
            b = r / (seq * heads);
            s = (r / heads) % seq;
        } else {  // r = (b * N + n) * S + s
            b = r / (heads * seq);
            s = r % seq;
        }
        return per_batch ? b * seq + s : s;
    }
};

bool is_interleaved(const Problem& p) {
    const std::string mode = p.attr_string("rotaryMode");
    if (mode == "half") return false;
    if (mode == "interleaved") return true;
    throw Error(p.context() + "rotaryMode is \"" + mode + "\"; it must be \"half\" or \"interleaved\"");
}

RopeGeometry geometry(const Problem& p) {
    const TensorSpec& q = p.input("query").tensors.at(0);
    const TensorSpec& k = p.input("key").tensors.at(0);
    const TensorSpec& c = p.input("cos").tensors.at(0);
    const TensorSpec& sn = p.input("sin").tensors.at(0);
    RopeGeometry g;
    const std::int64_t layout = p.attr_int("layout");
    if (layout != 0 && layout != 1)
        throw Error(p.context() + "layout is " + std::to_string(layout) + "; it must be 0 ([B, S, N, D]) or 1 ([B, N, S, D])");
    g.layout = static_cast<int>(layout);
    g.interleaved = is_interleaved(p);
    if (q.shape.size() != 4 || k.shape.size() != 4)
        throw Error(p.context() + "query " + shape_to_string(q.shape) + " and key " + shape_to_string(k.shape) +
                    " must both be 4-D");
    const int seq_axis = g.layout == 0 ? 1 : 2, head_axis = g.layout == 0 ? 2 : 1;
    g.batch = q.shape[0];
    g.seq = q.shape[static_cast<std::size_t>(seq_axis)];
    g.heads_q = q.shape[static_cast<std::size_t>(head_axis)];
    g.heads_k = k.shape[static_cast<std::size_t>(head_axis)];
    g.dim = q.shape[3];
    if (k.shape[0] != g.batch || k.shape[static_cast<std::size_t>(seq_axis)] != g.seq || k.shape[3] != g.dim)
        throw Error(p.context() + "key " + shape_to_string(k.shape) + " must have query " + shape_to_string(q.shape) +
                    "'s batch, sequence and head-dim sizes (only the head count may differ)");
    if (g.dim % 2 != 0)
        throw Error(p.context() + "the head dim D = " + std::to_string(g.dim) + " is odd; rotation pairs need it even");
    if (c.shape != sn.shape)
        throw Error(p.context() + "cos " + shape_to_string(c.shape) + " and sin " + shape_to_string(sn.shape) +
                    " must have the same shape");
    const Shape shared{g.seq, g.dim / 2}, batched{g.batch, g.seq, g.dim / 2};
    if (c.shape == batched && c.shape != shared) g.per_batch = true;
    else if (c.shape != shared)
        throw Error(p.context() + "cos has shape " + shape_to_string(c.shape) + "; it must be [S, D/2] = " +
                    shape_to_string(shared) + " or [B, S, D/2] = " + shape_to_string(batched));
    for (const char* name : {"key", "cos", "sin"})
        if (p.input(name).tensors.at(0).dtype != q.dtype)
            throw Error(p.context() + std::string(name) + " has dtype " +
                        std::string(dtype_name(p.input(name).tensors.at(0).dtype)) + " but query has " +
                        std::string(dtype_name(q.dtype)) + "; all four inputs must share one dtype");
    return g;
}

// out = x * cos + rotate(x) * sin on `rows` rows of D elements.
template <typename T>
void rotate_rows(const RopeGeometry& g, std::int64_t heads, const std::vector<T>& x, const std::vector<T>& cos,
                 const std::vector<T>& sin, std::vector<T>& out) {
    const std::int64_t d = g.dim, h = d / 2;
    const std::int64_t rows = static_cast<std::int64_t>(x.size()) / d;
#pragma omp parallel for schedule(static) if (rows >= 1024)
    for (std::int64_t r = 0; r < rows; ++r) {
        const T* src = x.data() + r * d;
        T* dst = out.data() + r * d;
        const std::int64_t t = g.table_row(r, heads) * h;
        for (std::int64_t i = 0; i < h; ++i) {
            const T c = cos[static_cast<std::size_t>(t + i)], s = sin[static_cast<std::size_t>(t + i)];
            const std::int64_t a = g.interleaved ? 2 * i : i, b = g.interleaved ? 2 * i + 1 : i + h;
            dst[a] = src[a] * c + (-src[b]) * s;
            dst[b] = src[b] * c + src[a] * s;
        }
    }
}

}  // namespace

class ApplyRotaryPosEmbOp final : public OperatorWithCompute<ApplyRotaryPosEmbOp> {
  public:
    std::string name() const override { return "apply_rotary_pos_emb"; }
    int level() const override { return 2; }
    std::string baseline_description() const override {
        return "plain C++ with OpenMP over the rows of D (one fused pass: each row's cos/sin row is looked up, "
               "never broadcast to a full tensor), fp16/bf16 computed in fp32: oneDNN has no rotary embedding, "
               "and composing it from oneDNN binary primitives would need the rotated copy and broadcast "
               "cos/sin tensors materialized (several extra passes over memory)";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        geometry(p);  // validates
        ArgSpec q_out, k_out;
        q_out.name = "query_out";
        q_out.tensors.push_back(p.input("query").tensors.at(0));
        k_out.name = "key_out";
        k_out.tensors.push_back(p.input("key").tensors.at(0));
        return {q_out, k_out};
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const RopeGeometry g = geometry(p);
        const auto& cos = in[2].one().v;
        const auto& sin = in[3].one().v;
        rotate_rows(g, g.heads_q, in[0].one().v, cos, sin, out[0].one().v);
        rotate_rows(g, g.heads_k, in[1].one().v, cos, sin, out[1].one().v);
    }

    WorkModel work(const Problem& p) const override {
        const RopeGeometry g = geometry(p);
        const TensorSpec& q = p.input("query").tensors.at(0);
        const TensorSpec& k = p.input("key").tensors.at(0);
        const TensorSpec& c = p.input("cos").tensors.at(0);
        WorkModel w;
        // query, key and the two tables are read once (the tables are small and stay in
        // cache across heads); both outputs are written once.
        w.bytes_read = static_cast<double>(q.bytes() + k.bytes() + 2 * c.bytes());
        w.bytes_written = static_cast<double>(q.bytes() + k.bytes());
        // Per output element one multiply (x * cos) and one FMA (+ rotate(x) * sin; the sign
        // of the rotation folds into the operand).
        const double n = static_cast<double>(q.numel() + k.numel());
        w.add_vector(OpClass::mul, q.dtype, n);
        w.add_vector(OpClass::fma, q.dtype, n);
        // cann-bench (docs/hap.md): x * cos + rotate(x) * sin per output element: 2 mul, add,
        // and the rotation's negation of half the elements.
        add_formula(w, q.dtype, FormulaMath::elementwise, n, {{OpClass::mul, 2}, {OpClass::add, 1.5}});
        // Rows of D are independent.
        w.parallel_items = n / static_cast<double>(g.dim);
        w.innermost = g.dim;
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        // Every (layout, mode) pair, deterministically across a batch.
        struct Variant {
            std::int64_t layout;
            const char* mode;
        };
        const Variant v = sampler.cycle(
            std::vector<Variant>{{0, "half"}, {1, "half"}, {0, "interleaved"}, {1, "interleaved"}});
        // Head dims: an aligned case needs D/2 (the tables' innermost) to be 512 bytes, so
        // D = 512 for fp16/bf16 and 256 for fp32; non-aligned cases use common head dims.
        const std::int64_t dim = d.aligned ? 2 * 512 / static_cast<std::int64_t>(dtype_size(d.dtype))
                                           : sampler.pick(std::vector<std::int64_t>{64, 80, 96, 128});
        const std::int64_t heads = sampler.pick(std::vector<std::int64_t>{1, 3, 4, 7, 8, 16, 31});
        // Grouped-query attention now and then: key with a quarter of the heads.
        const std::int64_t heads_k = heads >= 4 && sampler.rng().uniform01() < 0.3 ? heads / 4 : heads;
        // Budget: query + key dominate, 2 * B * S * N * D elements (key counted at its own heads).
        const std::int64_t rows = std::max<std::int64_t>(1, d.target_elements / ((heads + heads_k) * dim));
        const std::int64_t seq = std::clamp<std::int64_t>(
            sampler.pick(std::vector<std::int64_t>{1, 17, 61, 127, 255, 511, 1021, 2047, 4093}), 1, rows);
        const std::int64_t batch = std::max<std::int64_t>(1, rows / seq);
        const bool per_batch = batch > 1 && sampler.rng().uniform01() < 0.3;
        auto qk_shape = [&](std::int64_t n) {
            return v.layout == 0 ? Shape{batch, seq, n, dim} : Shape{batch, n, seq, dim};
        };
        const Shape table = per_batch ? Shape{batch, seq, dim / 2} : Shape{seq, dim / 2};
        out.inputs.at(0).shapes = {qk_shape(heads)};
        out.inputs.at(1).shapes = {qk_shape(heads_k)};
        out.inputs.at(2).shapes = {table};
        out.inputs.at(3).shapes = {table};
        // cos and sin hold cosines and sines; the draw's value range (special values
        // included) goes to query and key.
        out.inputs.at(2).range = ValueRange{-1, 1};
        out.inputs.at(3).range = ValueRange{-1, 1};
        out.attrs = {{"layout", AttrValue::of_int(v.layout)}, {"rotaryMode", AttrValue::of_string(v.mode)}};
    }
};

HB_REGISTER_OPERATOR(ApplyRotaryPosEmbOp)

}  // namespace hb
