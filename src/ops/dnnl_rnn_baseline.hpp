// What the recurrence baselines (gru, lstm) share, header-only like baseline_support.hpp: the
// call's tensors, and oneDNN's RNN primitives called as PyTorch's oneDNN path calls them. One
// unidirectional primitive per layer and direction (L = 1, D = 1; the reverse direction is
// unidirectional_right2left), reading x (tnc, or ntc for batch-first) or the previous layer's
// output and writing its direction's half of the layer output (or of y) in place through a
// strided descriptor. In every call, as PyTorch does: the weights, held as PyTorch's [G H, in]
// rows, are reordered into the primitive's layout (gru's gates are shuffled from PyTorch's
// (r, z, n) into oneDNN's (z, r, n) first), and the fp32 bias is built (lstm: b_ih + b_hh;
// gru, linear-before-reset: [b_iz + b_hz, b_ir + b_hr, b_in, b_hn]). float32 runs as is;
// bfloat16 runs natively where oneDNN has a bf16 RNN (AVX-512; lstm without projection) and
// otherwise, like float16 (oneDNN 2.6 has no f16 RNN), through fp32 copies of every tensor.
// Buffers come from the case's workspace; primitives and reorders are made once per case
// (hapbench_workspace_bytes).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ops/baseline_support.hpp"

#pragma GCC visibility push(hidden)

namespace hb::baseline {

enum class RnnKind { gru, lstm };

// The call's tensors and attributes, checked.
struct RnnCall {
    RnnKind kind = RnnKind::gru;
    hb_dtype dtype = HB_FLOAT32;
    std::int64_t seq = 0, batch = 0, input = 0, hidden = 0, proj = 0, layers = 1, dirs = 1;
    bool batch_first = false;
    const hb_tensor* x = nullptr;
    const hb_arg *w_ih = nullptr, *w_hh = nullptr, *b_ih = nullptr, *b_hh = nullptr, *w_hr = nullptr;
    const hb_tensor *h0 = nullptr, *c0 = nullptr;
    hb_tensor *y = nullptr, *hn = nullptr, *cn = nullptr;

    bool lstm() const { return kind == RnnKind::lstm; }
    std::int64_t gates() const { return lstm() ? 4 : 3; }
    std::int64_t state() const { return proj > 0 ? proj : hidden; }
    std::int64_t layer_input(std::int64_t l) const { return l == 0 ? input : dirs * state(); }
    std::int64_t cells() const { return layers * dirs; }
};

inline bool rnn_tensor_is(const hb_tensor& t, hb_dtype dtype, std::initializer_list<std::int64_t> dims) {
    if (t.dtype != dtype || t.rank != static_cast<std::int32_t>(dims.size()) || !hb_is_contiguous(&t)) return false;
    int d = 0;
    for (std::int64_t v : dims)
        if (t.shape[d++] != v) return false;
    return true;
}

// Empty on success, else a message for hb_fail.
inline std::string read_rnn_call(const hb_call* call, RnnKind kind, RnnCall& c) {
    const std::string op = kind == RnnKind::lstm ? "lstm" : "gru";
    c.kind = kind;
    const hb_arg* x = hb_input(call, "x");
    c.w_ih = hb_input(call, "weight_ih");
    c.w_hh = hb_input(call, "weight_hh");
    hb_arg* y = hb_output(call, "y");
    hb_arg* hn = hb_output(call, "hn");
    hb_arg* cn = kind == RnnKind::lstm ? hb_output(call, "cn") : nullptr;
    if (!x || !x->present || !c.w_ih || !c.w_hh || !y || !hn || (kind == RnnKind::lstm && !cn))
        return op + ": expected inputs x, weight_ih, weight_hh and outputs y, hn" + (kind == RnnKind::lstm ? ", cn" : "");
    c.x = &x->tensors[0];
    c.y = &y->tensors[0];
    c.hn = &hn->tensors[0];
    if (cn) c.cn = &cn->tensors[0];
    c.dtype = c.x->dtype;
    if (c.dtype != HB_FLOAT32 && c.dtype != HB_FLOAT16 && c.dtype != HB_BFLOAT16)
        return op + ": x must be float32, float16 or bfloat16";
    c.input = hb_attr_int(call, "inputSize", 0);
    c.hidden = hb_attr_int(call, "hiddenSize", 0);
    c.layers = hb_attr_int(call, "numLayers", 1);
    c.proj = kind == RnnKind::lstm ? hb_attr_int(call, "projSize", 0) : 0;
    c.dirs = hb_attr_int(call, "bidirectional", 0) ? 2 : 1;
    c.batch_first = hb_attr_int(call, "batchFirst", 0) != 0;
    const bool bias = hb_attr_int(call, "bias", 1) != 0;
    if (c.input < 1 || c.hidden < 1 || c.layers < 1 || c.proj < 0 || (c.proj > 0 && c.proj >= c.hidden))
        return op + ": inputSize, hiddenSize and numLayers must be positive, projSize in [0, hiddenSize)";
    if (c.x->rank != 3 || c.x->shape[2] != c.input || !hb_is_contiguous(c.x))
        return op + ": x must be a contiguous [S, B, inputSize] ([B, S, inputSize] batch-first)";
    c.seq = c.x->shape[c.batch_first ? 1 : 0];
    c.batch = c.x->shape[c.batch_first ? 0 : 1];
    const auto given = [](const hb_arg* a) { return a && a->present ? a : nullptr; };
    c.b_ih = bias ? given(hb_input(call, "bias_ih")) : nullptr;
    c.b_hh = bias ? given(hb_input(call, "bias_hh")) : nullptr;
    if ((c.b_ih == nullptr) != (c.b_hh == nullptr)) return op + ": give both bias lists or neither";
    c.w_hr = c.proj > 0 ? given(hb_input(call, "weight_hr")) : nullptr;
    if (c.proj > 0 && !c.w_hr) return op + ": projSize > 0 needs weight_hr";
    const std::int64_t gh = c.gates() * c.hidden, cells = c.cells();
    if (c.w_ih->count != cells || c.w_hh->count != cells || (c.b_ih && (c.b_ih->count != cells || c.b_hh->count != cells)) ||
        (c.w_hr && c.w_hr->count != cells))
        return op + ": every weight and bias list needs numLayers x directions tensors";
    for (std::int64_t k = 0; k < cells; ++k) {
        if (!rnn_tensor_is(c.w_ih->tensors[k], c.dtype, {gh, c.layer_input(k / c.dirs)}) ||
            !rnn_tensor_is(c.w_hh->tensors[k], c.dtype, {gh, c.state()}))
            return op + ": weight_ih[k] must be [G H, layer input] and weight_hh[k] [G H, Hs], in x's dtype";
        if (c.b_ih && (!rnn_tensor_is(c.b_ih->tensors[k], c.dtype, {gh}) || !rnn_tensor_is(c.b_hh->tensors[k], c.dtype, {gh})))
            return op + ": bias_ih[k] and bias_hh[k] must be [G H] in x's dtype";
        if (c.w_hr && !rnn_tensor_is(c.w_hr->tensors[k], c.dtype, {c.proj, c.hidden}))
            return op + ": weight_hr[k] must be [projSize, hiddenSize]";
    }
    if (const hb_arg* h0 = given(hb_input(call, "h0"))) c.h0 = &h0->tensors[0];
    if (kind == RnnKind::lstm)
        if (const hb_arg* c0 = given(hb_input(call, "c0"))) c.c0 = &c0->tensors[0];
    if (c.h0 && !rnn_tensor_is(*c.h0, c.dtype, {cells, c.batch, c.state()})) return op + ": h0 must be [L Dn, B, Hs]";
    if (c.c0 && !rnn_tensor_is(*c.c0, c.dtype, {cells, c.batch, c.hidden})) return op + ": c0 must be [L Dn, B, H]";
    const std::int64_t width = c.dirs * c.state();
    if (!(c.batch_first ? rnn_tensor_is(*c.y, c.dtype, {c.batch, c.seq, width})
                        : rnn_tensor_is(*c.y, c.dtype, {c.seq, c.batch, width})) ||
        !rnn_tensor_is(*c.hn, c.dtype, {cells, c.batch, c.state()}) ||
        (c.cn && !rnn_tensor_is(*c.cn, c.dtype, {cells, c.batch, c.hidden})))
        return op + ": y, hn or cn has the wrong shape or dtype";
    return {};
}

// Everything made once per case: the compute type, one primitive per cell, the weights'
// reorders, and where each buffer lies in the workspace.
struct RnnPlan {
    dnnl::memory::data_type ct = dnnl::memory::data_type::f32;  // the primitives' data type
    bool convert = false;  // the call's tensors are converted to and from fp32 around them
    bool has_h0 = false, has_c0 = false;  // the primitives read initial states
    struct Cell {
        std::optional<dnnl::primitive> primitive;
        dnnl::memory::desc src_layer, dst_layer, src_iter, src_iter_c, dst_iter, dst_iter_c;
        dnnl::memory::desc w_layer_user, w_iter_user, w_proj_user, bias;
        dnnl::memory::desc w_layer, w_iter, w_proj;  // as the primitive wants them
        std::optional<dnnl::reorder> r_layer, r_iter, r_proj;
        std::size_t at_w_layer = 0, at_w_iter = 0, at_w_proj = 0, at_bias = 0;
    };
    std::vector<Cell> cells;
    // Workspace offsets (bytes).
    std::size_t at_x = 0, at_layers[2] = {0, 0}, at_stage_ih = 0, at_stage_hh = 0, at_stage_hr = 0;
    std::size_t at_h0 = 0, at_c0 = 0, at_y = 0, at_hn = 0, at_cn = 0;
    std::size_t workspace_bytes = 0;
};

inline std::size_t rnn_align(std::size_t n) { return (n + 63) / 64 * 64; }

inline std::string rnn_plan_key(const RnnCall& c) {
    return std::to_string(static_cast<int>(c.kind)) + "/" + std::to_string(c.dtype) + "/" + std::to_string(c.seq) + "/" +
           std::to_string(c.batch) + "/" + std::to_string(c.input) + "/" + std::to_string(c.hidden) + "/" +
           std::to_string(c.proj) + "/" + std::to_string(c.layers) + "/" + std::to_string(c.dirs) + "/" +
           std::to_string(c.batch_first) + "/" + std::to_string(c.b_ih != nullptr) + "/" + std::to_string(c.h0 != nullptr) +
           "/" + std::to_string(c.c0 != nullptr);
}

// The plan for compute type `ct`, or nothing when oneDNN has no RNN for it on this CPU.
inline std::optional<RnnPlan> make_rnn_plan(const RnnCall& c, dnnl::memory::data_type ct) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    using dims = dnnl::memory::dims;
    RnnPlan plan;
    plan.ct = ct;
    plan.convert = c.dtype != HB_FLOAT32 && !(c.dtype == HB_BFLOAT16 && ct == dt::bf16);
    const std::int64_t S = c.seq, B = c.batch, H = c.hidden, Hs = c.state(), G = c.gates(), width = c.dirs * Hs;
    const std::size_t ct_size = ct == dt::bf16 ? 2 : 4;
    std::size_t bytes = 0;
    auto take = [&](std::size_t n) {
        const std::size_t at = bytes;
        bytes += rnn_align(n);
        return at;
    };
    if (plan.convert) plan.at_x = take(static_cast<std::size_t>(S * B * c.input) * 4);
    if (c.layers > 1) {
        plan.at_layers[0] = take(static_cast<std::size_t>(S * B * width) * ct_size);
        plan.at_layers[1] = take(static_cast<std::size_t>(S * B * width) * ct_size);
    }
    // PyTorch-layout weights in the compute type, where they are not usable as given.
    const bool stage = plan.convert || c.kind == RnnKind::gru;
    const std::int64_t max_in = std::max(c.input, width);
    if (stage) {
        plan.at_stage_ih = take(static_cast<std::size_t>(G * H * max_in) * ct_size);
        plan.at_stage_hh = take(static_cast<std::size_t>(G * H * Hs) * ct_size);
        if (c.proj > 0) plan.at_stage_hr = take(static_cast<std::size_t>(c.proj * H) * ct_size);
    }
    const std::size_t cells = static_cast<std::size_t>(c.cells());
    const bool h_ws = plan.convert;                          // h0, y, hn through fp32 copies
    const bool c_ws = c.lstm() && c.dtype != HB_FLOAT32;     // c in fp32 whatever ct
    // oneDNN's LSTM takes both initial states or neither (PyTorch always passes both): the
    // one the call leaves out is zeros in the workspace.
    plan.has_h0 = c.h0 || (c.lstm() && c.c0);
    plan.has_c0 = c.lstm() && (c.h0 || c.c0);
    if (plan.has_h0 && (h_ws || !c.h0)) plan.at_h0 = take(cells * static_cast<std::size_t>(B * Hs) * (h_ws ? 4 : ct_size));
    if (plan.has_c0 && (c_ws || !c.c0)) plan.at_c0 = take(cells * static_cast<std::size_t>(B * H) * 4);
    if (h_ws) {
        plan.at_y = take(static_cast<std::size_t>(S * B * width) * 4);
        plan.at_hn = take(cells * static_cast<std::size_t>(B * Hs) * 4);
    }
    if (c_ws) plan.at_cn = take(cells * static_cast<std::size_t>(B * H) * 4);
    const dt io = plan.convert ? dt::f32 : ct;  // the type of x, y, h0, hn as the primitive sees them
    for (std::int64_t l = 0; l < c.layers; ++l)
        for (std::int64_t d = 0; d < c.dirs; ++d) {
            RnnPlan::Cell cell;
            const std::int64_t in_l = c.layer_input(l);
            const bool first = l == 0, last = l + 1 == c.layers;
            if (first)
                cell.src_layer = dnnl::memory::desc({S, B, in_l}, io, c.batch_first ? tag::ntc : tag::tnc);
            else
                cell.src_layer = dnnl::memory::desc({S, B, in_l}, ct, tag::tnc);
            // Each direction writes its half of the output rows: a strided [S, B, Hs].
            if (last && c.batch_first)
                cell.dst_layer = dnnl::memory::desc({S, B, Hs}, io, dims{width, S * width, 1});
            else
                cell.dst_layer = dnnl::memory::desc({S, B, Hs}, last ? io : ct, dims{B * width, width, 1});
            const dnnl::memory::desc none;
            cell.src_iter = plan.has_h0 ? dnnl::memory::desc({1, 1, B, Hs}, io, tag::ldnc) : none;
            cell.dst_iter = dnnl::memory::desc({1, 1, B, Hs}, io, tag::ldnc);
            if (c.lstm()) {
                cell.src_iter_c = plan.has_c0 ? dnnl::memory::desc({1, 1, B, H}, dt::f32, tag::ldnc) : none;
                cell.dst_iter_c = dnnl::memory::desc({1, 1, B, H}, dt::f32, tag::ldnc);
            }
            cell.w_layer_user = dnnl::memory::desc({1, 1, in_l, G, H}, ct, tag::ldgoi);
            cell.w_iter_user = dnnl::memory::desc({1, 1, Hs, G, H}, ct, tag::ldgoi);
            const dnnl::memory::desc w_layer_any({1, 1, in_l, G, H}, ct, tag::any);
            const dnnl::memory::desc w_iter_any({1, 1, Hs, G, H}, ct, tag::any);
            cell.bias = dnnl::memory::desc({1, 1, c.lstm() ? G : G + 1, H}, dt::f32, tag::ldgo);
            const auto direction = d == 0 ? dnnl::rnn_direction::unidirectional_left2right
                                          : dnnl::rnn_direction::unidirectional_right2left;
            const auto made = try_create([&] {
                if (c.lstm()) {
                    dnnl::memory::desc w_proj_any;
                    if (c.proj > 0) {
                        cell.w_proj_user = dnnl::memory::desc({1, 1, H, c.proj}, ct, tag::ldoi);
                        w_proj_any = dnnl::memory::desc({1, 1, H, c.proj}, ct, tag::any);
                    }
                    dnnl::lstm_forward::primitive_desc pd(
                        dnnl::lstm_forward::desc(dnnl::prop_kind::forward_inference, direction, cell.src_layer, cell.src_iter,
                                                 cell.src_iter_c, w_layer_any, w_iter_any, dnnl::memory::desc(), w_proj_any,
                                                 cell.bias, cell.dst_layer, cell.dst_iter, cell.dst_iter_c),
                        cpu_engine());
                    cell.w_layer = pd.weights_layer_desc();
                    cell.w_iter = pd.weights_iter_desc();
                    if (c.proj > 0) cell.w_proj = pd.weights_projection_desc();
                    return dnnl::primitive(dnnl::lstm_forward(pd));
                }
                dnnl::lbr_gru_forward::primitive_desc pd(
                    dnnl::lbr_gru_forward::desc(dnnl::prop_kind::forward_inference, direction, cell.src_layer, cell.src_iter,
                                                w_layer_any, w_iter_any, cell.bias, cell.dst_layer, cell.dst_iter),
                    cpu_engine());
                cell.w_layer = pd.weights_layer_desc();
                cell.w_iter = pd.weights_iter_desc();
                return dnnl::primitive(dnnl::lbr_gru_forward(pd));
            });
            if (!made) return std::nullopt;
            cell.primitive = *made;
            auto reorder_to = [&](const dnnl::memory::desc& user, const dnnl::memory::desc& want,
                                  std::optional<dnnl::reorder>& r, std::size_t& at) {
                at = take(want.get_size());
                if (!(user == want)) r = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), user, cpu_engine(), want));
            };
            reorder_to(cell.w_layer_user, cell.w_layer, cell.r_layer, cell.at_w_layer);
            reorder_to(cell.w_iter_user, cell.w_iter, cell.r_iter, cell.at_w_iter);
            if (c.proj > 0) reorder_to(cell.w_proj_user, cell.w_proj, cell.r_proj, cell.at_w_proj);
            cell.at_bias = take(static_cast<std::size_t>((G + 1) * H) * 4);
            plan.cells.push_back(std::move(cell));
        }
    plan.workspace_bytes = bytes;
    return plan;
}

// The plan of a case: bf16 natively where oneDNN has a bf16 RNN, else fp32.
inline const RnnPlan& rnn_plan(const RnnCall& c) {
    static PlanCache<std::string, std::shared_ptr<const RnnPlan>> cache;
    return *cache.get(rnn_plan_key(c), [&] {
        std::optional<RnnPlan> plan;
        // oneDNN 2.6's bf16 LSTM with a projection is broken here: wrong outputs with AVX512-BF16
        // and AMX (72 of 84 outputs off by up to 5x, measured) and a crash in the projection
        // weights' reorder at AVX512_CORE; it runs through fp32 like float16.
        if (c.dtype == HB_BFLOAT16 && c.proj == 0) plan = make_rnn_plan(c, dnnl::memory::data_type::bf16);
        if (!plan) plan = make_rnn_plan(c, dnnl::memory::data_type::f32);
        if (!plan) throw std::runtime_error("oneDNN has no fp32 RNN primitive for this case on this CPU");
        return std::make_shared<const RnnPlan>(std::move(*plan));
    });
}

inline std::size_t dtype_bytes(hb_dtype t) { return t == HB_FLOAT32 ? 4 : 2; }

// Elements of a contiguous tensor in fp32, from any of the three float dtypes.
inline void rnn_widen(const void* src, hb_dtype t, std::int64_t n, float* dst) {
    FlatTensor f;
    f.data = const_cast<void*>(src);
    f.dtype = t;
    f.n = n;
    widen_to_f32(f, dst);
}

inline void rnn_narrow(const float* src, void* dst, hb_dtype t, std::int64_t n) {
    if (t == HB_FLOAT32) {
        std::memcpy(dst, src, static_cast<std::size_t>(n) * sizeof(float));
        return;
    }
    FlatTensor f;
    f.data = dst;
    f.dtype = t;
    f.n = n;
    narrow_from_f32(src, f);
}

inline float rnn_load(const void* data, hb_dtype t, std::int64_t i) {
    switch (t) {
        case HB_FLOAT16: return to_f32(static_cast<const Half*>(data)[i]);
        case HB_BFLOAT16: return to_f32(static_cast<const BFloat16*>(data)[i]);
        default: return static_cast<const float*>(data)[i];
    }
}

// A [G H, n] weight in the compute type ct with PyTorch's row blocks, gru's shuffled from
// (r, z, n) to oneDNN's (z, r, n), into `out`; returns what the primitive's user memory
// points at (the tensor itself when nothing changes).
inline const void* rnn_stage_weight(const RnnCall& c, const hb_tensor& w, std::int64_t n, dnnl::memory::data_type ct, void* out) {
    const std::int64_t H = c.hidden, G = c.gates();
    const bool shuffle = c.kind == RnnKind::gru;
    const bool same_type = (ct == dnnl::memory::data_type::f32 && w.dtype == HB_FLOAT32) ||
                           (ct == dnnl::memory::data_type::bf16 && w.dtype == HB_BFLOAT16);
    if (!shuffle && same_type) return w.data;
    const std::size_t elem = ct == dnnl::memory::data_type::bf16 ? 2 : 4;
    const std::size_t block = static_cast<std::size_t>(H * n);
    for (std::int64_t g = 0; g < G; ++g) {
        const std::int64_t from = shuffle && g < 2 ? 1 - g : g;  // oneDNN gate g reads PyTorch block `from`
        const char* src = static_cast<const char*>(w.data) + static_cast<std::size_t>(from) * block * dtype_bytes(w.dtype);
        char* dst = static_cast<char*>(out) + static_cast<std::size_t>(g) * block * elem;
        if (same_type) std::memcpy(dst, src, block * elem);
        else rnn_widen(src, w.dtype, static_cast<std::int64_t>(block), reinterpret_cast<float*>(dst));
    }
    return out;
}


// lstm's projection weight [P, H] in the compute type ct, into `out` where it must change.
inline const void* rnn_stage_projection(const RnnCall& c, const hb_tensor& w, dnnl::memory::data_type ct, void* out) {
    const bool same_type = (ct == dnnl::memory::data_type::f32 && w.dtype == HB_FLOAT32) ||
                           (ct == dnnl::memory::data_type::bf16 && w.dtype == HB_BFLOAT16);
    if (same_type) return w.data;
    rnn_widen(w.data, w.dtype, c.proj * c.hidden, static_cast<float*>(out));
    return out;
}

// The fp32 bias of cell k: lstm b_ih + b_hh; gru [b_iz + b_hz, b_ir + b_hr, b_in, b_hn].
inline void rnn_bias(const RnnCall& c, std::int64_t k, float* out) {
    const std::int64_t H = c.hidden, G = c.gates(), rows = c.lstm() ? G : G + 1;
    if (!c.b_ih) {
        std::fill(out, out + rows * H, 0.0f);
        return;
    }
    const void* bi = c.b_ih->tensors[k].data;
    const void* bh = c.b_hh->tensors[k].data;
    for (std::int64_t j = 0; j < H; ++j) {
        if (c.lstm()) {
            for (std::int64_t g = 0; g < G; ++g)
                out[g * H + j] = rnn_load(bi, c.dtype, g * H + j) + rnn_load(bh, c.dtype, g * H + j);
        } else {
            out[j] = rnn_load(bi, c.dtype, H + j) + rnn_load(bh, c.dtype, H + j);      // z
            out[H + j] = rnn_load(bi, c.dtype, j) + rnn_load(bh, c.dtype, j);          // r
            out[2 * H + j] = rnn_load(bi, c.dtype, 2 * H + j);                         // b_in
            out[3 * H + j] = rnn_load(bh, c.dtype, 2 * H + j);                         // b_hn
        }
    }
}

// One call: stage and reorder the weights, run every cell in order, convert the outputs.
inline int run_rnn(const hb_call* call, RnnKind kind) {
    RnnCall c;
    if (const std::string error = read_rnn_call(call, kind, c); !error.empty()) return hb_fail(call, 2, error.c_str());
    return guarded(call, [&] {
        const RnnPlan& plan = rnn_plan(c);
        if (!call->workspace || call->workspace_bytes < plan.workspace_bytes)
            return hb_fail(call, 4, "rnn baseline: the workspace is too small");
        char* ws = static_cast<char*>(call->workspace);
        dnnl::stream& stream = cpu_stream();
        const dnnl::engine& eng = cpu_engine();
        const std::int64_t S = c.seq, B = c.batch, H = c.hidden, Hs = c.state(), width = c.dirs * Hs;
        const std::int64_t cells = c.cells();
        const std::size_t io_size = plan.convert ? 4 : dtype_bytes(c.dtype);
        void* x = c.x->data;
        if (plan.convert) {
            rnn_widen(c.x->data, c.dtype, S * B * c.input, reinterpret_cast<float*>(ws + plan.at_x));
            x = ws + plan.at_x;
        }
        char* h0 = nullptr;
        if (plan.has_h0) {
            h0 = c.h0 ? static_cast<char*>(c.h0->data) : ws + plan.at_h0;
            const std::size_t h_bytes = static_cast<std::size_t>(cells * B * Hs) * io_size;
            if (!c.h0) std::memset(h0, 0, h_bytes);  // zero bits are 0.0 in every float type
            else if (plan.convert) {
                h0 = ws + plan.at_h0;
                rnn_widen(c.h0->data, c.dtype, cells * B * Hs, reinterpret_cast<float*>(h0));
            }
        }
        char* c0 = nullptr;
        if (plan.has_c0) {
            c0 = c.c0 && c.dtype == HB_FLOAT32 ? static_cast<char*>(c.c0->data) : ws + plan.at_c0;
            if (!c.c0) std::memset(c0, 0, static_cast<std::size_t>(cells * B * H) * 4);
            else if (c.dtype != HB_FLOAT32) rnn_widen(c.c0->data, c.dtype, cells * B * H, reinterpret_cast<float*>(c0));
        }
        char* y = plan.convert ? ws + plan.at_y : static_cast<char*>(c.y->data);
        char* hn = plan.convert ? ws + plan.at_hn : static_cast<char*>(c.hn->data);
        char* cn = c.cn ? (c.dtype != HB_FLOAT32 ? ws + plan.at_cn : static_cast<char*>(c.cn->data)) : nullptr;
        const std::size_t ct_size = plan.ct == dnnl::memory::data_type::bf16 ? 2 : 4;
        for (std::int64_t l = 0; l < c.layers; ++l) {
            const bool first = l == 0, last = l + 1 == c.layers;
            char* layer_src = first ? static_cast<char*>(x) : ws + plan.at_layers[(l - 1) % 2];
            char* layer_dst = last ? y : ws + plan.at_layers[l % 2];
            const std::size_t dst_size = last ? io_size : ct_size;
            for (std::int64_t d = 0; d < c.dirs; ++d) {
                const std::int64_t k = l * c.dirs + d;
                const RnnPlan::Cell& cell = plan.cells[static_cast<std::size_t>(k)];
                const std::int64_t in_l = c.layer_input(l);
                auto weights = [&](const dnnl::memory::desc& user_desc, const dnnl::memory::desc& want,
                                   const std::optional<dnnl::reorder>& r, std::size_t at, const void* user) {
                    dnnl::memory user_memory(user_desc, eng, const_cast<void*>(user));
                    if (!r) return user_memory;
                    dnnl::memory placed(want, eng, ws + at);
                    r->execute(stream, user_memory, placed);
                    return placed;
                };
                const void* w_ih = rnn_stage_weight(c, c.w_ih->tensors[k], in_l, plan.ct, ws + plan.at_stage_ih);
                const void* w_hh = rnn_stage_weight(c, c.w_hh->tensors[k], Hs, plan.ct, ws + plan.at_stage_hh);
                dnnl::memory w_layer = weights(cell.w_layer_user, cell.w_layer, cell.r_layer, cell.at_w_layer, w_ih);
                dnnl::memory w_iter = weights(cell.w_iter_user, cell.w_iter, cell.r_iter, cell.at_w_iter, w_hh);
                auto* bias = reinterpret_cast<float*>(ws + cell.at_bias);
                rnn_bias(c, k, bias);
                std::unordered_map<int, dnnl::memory> args = {
                    {DNNL_ARG_SRC_LAYER, dnnl::memory(cell.src_layer, eng, layer_src)},
                    {DNNL_ARG_WEIGHTS_LAYER, w_layer},
                    {DNNL_ARG_WEIGHTS_ITER, w_iter},
                    {DNNL_ARG_BIAS, dnnl::memory(cell.bias, eng, bias)},
                    {DNNL_ARG_DST_LAYER, dnnl::memory(cell.dst_layer, eng, layer_dst + static_cast<std::size_t>(d * Hs) * dst_size)},
                    {DNNL_ARG_DST_ITER, dnnl::memory(cell.dst_iter, eng, hn + static_cast<std::size_t>(k * B * Hs) * io_size)},
                };
                if (h0) args[DNNL_ARG_SRC_ITER] = dnnl::memory(cell.src_iter, eng, h0 + static_cast<std::size_t>(k * B * Hs) * io_size);
                if (c.lstm()) {
                    args[DNNL_ARG_DST_ITER_C] = dnnl::memory(cell.dst_iter_c, eng, cn + static_cast<std::size_t>(k * B * H) * 4);
                    if (c0) args[DNNL_ARG_SRC_ITER_C] = dnnl::memory(cell.src_iter_c, eng, c0 + static_cast<std::size_t>(k * B * H) * 4);
                    if (c.proj > 0) {
                        const void* w_hr = rnn_stage_projection(c, c.w_hr->tensors[k], plan.ct, ws + plan.at_stage_hr);
                        args[DNNL_ARG_WEIGHTS_PROJECTION] = weights(cell.w_proj_user, cell.w_proj, cell.r_proj, cell.at_w_proj, w_hr);
                    }
                }
                cell.primitive->execute(stream, args);
            }
        }
        stream.wait();
        if (plan.convert) {
            rnn_narrow(reinterpret_cast<const float*>(y), c.y->data, c.dtype, S * B * width);
            rnn_narrow(reinterpret_cast<const float*>(hn), c.hn->data, c.dtype, cells * B * Hs);
        }
        if (c.cn && c.dtype != HB_FLOAT32) rnn_narrow(reinterpret_cast<const float*>(cn), c.cn->data, c.dtype, cells * B * H);
        return 0;
    });
}

inline std::uint64_t rnn_workspace_bytes(const hb_call* call, RnnKind kind) {
    RnnCall c;
    if (!read_rnn_call(call, kind, c).empty()) return 0;  // the kernel reports the error
    try {
        return rnn_plan(c).workspace_bytes;
    } catch (const std::exception&) {
        return 0;
    }
}

}  // namespace hb::baseline

#pragma GCC visibility pop
