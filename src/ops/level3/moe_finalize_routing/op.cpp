// moe_finalize_routing(expanded_permuted_rows, expanded_src_to_dst_row, skip1?, skip2?, bias?,
// scales?, expert_for_source_row?, drop_pad_mode=0) -> out (operators-l3-l4.md): the combine
// step at the end of an MoE layer.
//   R = expanded_permuted_rows: [NUM_ROWS*K, H] (modes 0 and 2) or [E, C, H] (modes 1 and 3,
//       "drop pad": a capacity of C rows per expert), seen as [num_dst, H];
//   idx = expanded_src_to_dst_row int32 [NUM_ROWS*K]; K = scales.shape[1] (1 without scales);
//   skip1, skip2 [NUM_ROWS, H] (skip2 only with skip1); bias [E, H] (only with
//   expert_for_source_row); scales [NUM_ROWS, K] (R's dtype, or float32);
//   expert_for_source_row int32 [NUM_ROWS, K].
//   out[r] = skip1[r] + skip2[r] (those present; zeros without) then, for k = 0..K-1 in
//   order: v = idx[p] with p = k*NUM_ROWS + r (modes 0/1, column layout) or r*K + k (modes
//   2/3, row layout); v == -1 adds nothing (a dropped token, honoured in every mode);
//   otherwise out[r] += scales[r, k] * (R[v] + bias[e]) with e = expert_for_source_row[r, k]
//   (bias added BEFORE scaling; an e outside [0, E), like the gating op's finished-row
//   sentinel E, drops the bias only; scale 1 without scales).
// out is [NUM_ROWS, H] in R's dtype. The golden is fp64; the same-precision reference
// accumulates in fp32 (fp16/bf16 widened, as the native golden run does).
// Input contract (fix_inputs, after the reference's get_input): idx is injective, every
// entry other than -1 names its own destination row. Modes 0/2: a random permutation of
// [0, NUM_ROWS*K). Modes 1/3: kept_rows() positions, chosen at random, get distinct random
// rows of [0, E*C); the others are -1. With bias, about one source row in 16 gets the
// sentinel E in all its K expert ids.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"
#include "ops/suite_budget.hpp"

namespace hb {

namespace {

bool drop_pad(std::int64_t mode) { return mode == 1 || mode == 3; }
bool row_layout(std::int64_t mode) { return mode == 2 || mode == 3; }

// The shape of a case once its arguments are checked.
struct Routing {
    std::int64_t mode = 0;
    std::int64_t num_rows = 0, k = 1, hidden = 0, num_dst = 0, experts = 0;  // experts: bias rows
    std::int64_t entries() const { return num_rows * k; }
    std::int64_t position(std::int64_t r, std::int64_t slot) const {
        return row_layout(mode) ? r * k + slot : slot * num_rows + r;
    }
};

std::string describe(const TensorSpec& t) { return std::string(dtype_name(t.dtype)) + " " + shape_to_string(t.shape); }

// Checks every argument against the others; throws with the first mismatch.
Routing routing_of(const Problem& p) {
    Routing g;
    g.mode = p.attr_int("drop_pad_mode");
    if (g.mode < 0 || g.mode > 3)
        throw Error(p.context() + "drop_pad_mode is " + std::to_string(g.mode) +
                    "; it must be 0 (drop less, column layout), 1 (drop pad, column), 2 (drop less, row) or 3 "
                    "(drop pad, row)");
    const TensorSpec& rows = p.input("expanded_permuted_rows").tensors.at(0);
    const TensorSpec& idx = p.input("expanded_src_to_dst_row").tensors.at(0);
    if (rows.dtype != DType::f32 && rows.dtype != DType::f16 && rows.dtype != DType::bf16)
        throw Error(p.context() + "expanded_permuted_rows is " + std::string(dtype_name(rows.dtype)) +
                    "; expected float32, float16 or bfloat16");
    const std::size_t want_rank = drop_pad(g.mode) ? 3 : 2;
    if (rows.shape.size() != want_rank)
        throw Error(p.context() + "expanded_permuted_rows has shape " + shape_to_string(rows.shape) + "; drop_pad_mode " +
                    std::to_string(g.mode) + " needs " + (drop_pad(g.mode) ? "[E, C, H]" : "[NUM_ROWS * K, H]"));
    g.hidden = rows.shape.back();
    g.num_dst = numel(rows.shape) / std::max<std::int64_t>(1, g.hidden);
    if (g.hidden == 0) g.num_dst = drop_pad(g.mode) ? rows.shape[0] * rows.shape[1] : rows.shape[0];
    if (idx.dtype != DType::i32 || idx.shape.size() != 1)
        throw Error(p.context() + "expanded_src_to_dst_row is " + describe(idx) + "; expected int32 [NUM_ROWS * K]");
    const ArgSpec& scales = p.input("scales");
    if (scales.present) {
        const TensorSpec& s = scales.tensors.at(0);
        if (s.shape.size() != 2 || s.shape[1] < 1)
            throw Error(p.context() + "scales has shape " + shape_to_string(s.shape) + "; expected [NUM_ROWS, K]");
        if (s.dtype != rows.dtype && s.dtype != DType::f32)
            throw Error(p.context() + "scales is " + std::string(dtype_name(s.dtype)) +
                        "; it must have expanded_permuted_rows' dtype or be float32");
        g.k = s.shape[1];
    }
    if (idx.shape[0] % g.k != 0)
        throw Error(p.context() + "expanded_src_to_dst_row has " + std::to_string(idx.shape[0]) +
                    " entries, not a multiple of K = " + std::to_string(g.k) + " (scales' last dim)");
    g.num_rows = idx.shape[0] / g.k;
    if (scales.present && scales.tensors.at(0).shape[0] != g.num_rows)
        throw Error(p.context() + "scales has " + std::to_string(scales.tensors.at(0).shape[0]) + " rows; NUM_ROWS is " +
                    std::to_string(g.num_rows) + " (expanded_src_to_dst_row's length / K)");
    if (!drop_pad(g.mode) && g.num_dst != idx.shape[0])
        throw Error(p.context() + "expanded_permuted_rows has " + std::to_string(g.num_dst) +
                    " rows; in drop_pad_mode " + std::to_string(g.mode) + " it must have NUM_ROWS * K = " +
                    std::to_string(idx.shape[0]) + " (one per entry of expanded_src_to_dst_row)");
    const Shape row_shape = {g.num_rows, g.hidden};
    const char* skip_names[] = {"skip1", "skip2"};
    for (const char* name : skip_names) {
        const ArgSpec& skip = p.input(name);
        if (!skip.present) continue;
        const TensorSpec& t = skip.tensors.at(0);
        if (t.dtype != rows.dtype || t.shape != row_shape)
            throw Error(p.context() + name + " is " + describe(t) + "; expected " + std::string(dtype_name(rows.dtype)) +
                        " " + shape_to_string(row_shape));
    }
    if (p.input("skip2").present && !p.input("skip1").present)
        throw Error(p.context() + "skip2 is given without skip1; give skip1 alone, or both");
    const ArgSpec& bias = p.input("bias");
    const ArgSpec& experts = p.input("expert_for_source_row");
    if (bias.present) {
        const TensorSpec& b = bias.tensors.at(0);
        if (b.dtype != rows.dtype || b.shape.size() != 2 || b.shape[1] != g.hidden || b.shape[0] < 1)
            throw Error(p.context() + "bias is " + describe(b) + "; expected " + std::string(dtype_name(rows.dtype)) +
                        " [E, " + std::to_string(g.hidden) + "]");
        if (!experts.present)
            throw Error(p.context() + "bias is given without expert_for_source_row, which says whose bias each row adds");
        g.experts = b.shape[0];
    }
    if (experts.present) {
        const TensorSpec& e = experts.tensors.at(0);
        if (e.dtype != DType::i32 || e.shape != Shape{g.num_rows, g.k})
            throw Error(p.context() + "expert_for_source_row is " + describe(e) + "; expected int32 [" +
                        std::to_string(g.num_rows) + ", " + std::to_string(g.k) + "]");
    }
    return g;
}

// Drop-pad modes: how many entries fix_inputs keeps (the others are -1): 7 in 8 of the
// entries that fit the capacity E*C. The work model reads exactly these rows of R.
std::int64_t kept_rows(std::int64_t entries, std::int64_t num_dst) {
    const std::int64_t fit = std::min(entries, num_dst);
    return fit - fit / 8;
}

}  // namespace

class MoeFinalizeRoutingOp final : public OperatorWithCompute<MoeFinalizeRoutingOp> {
  public:
    std::string name() const override { return "moe_finalize_routing"; }
    int level() const override { return 3; }
    std::string baseline_description() const override {
        return "threaded C++ (OpenMP over source rows; per row the skips and the K gathered, biased and scaled "
               "expert rows accumulated in an fp32 row, one store): oneDNN has no gather or scatter-add, and its "
               "binary primitives would need the gathered rows written out first";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const Routing g = routing_of(p);
        ArgSpec out;
        out.name = "out";
        out.tensors.push_back(
            TensorSpec{p.input("expanded_permuted_rows").tensors.at(0).dtype, {g.num_rows, g.hidden}});
        return {out};
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const Routing g = routing_of(p);
        const T* rows = in[0].one().v.data();
        const T* idx = in[1].one().v.data();
        const T* skip1 = in[2].present ? in[2].one().v.data() : nullptr;
        const T* skip2 = in[3].present ? in[3].one().v.data() : nullptr;
        const T* bias = in[4].present ? in[4].one().v.data() : nullptr;
        const T* scales = in[5].present ? in[5].one().v.data() : nullptr;
        const T* experts = in[6].present ? in[6].one().v.data() : nullptr;
        const std::int64_t h = g.hidden;
        auto& y = out[0].one().v;
        bool bad_index = false;
#pragma omp parallel for schedule(static) if (g.num_rows * h >= 16384) reduction(|| : bad_index)
        for (std::int64_t r = 0; r < g.num_rows; ++r) {
            T* yr = y.data() + r * h;
            for (std::int64_t j = 0; j < h; ++j)
                yr[j] = (skip1 ? skip1[r * h + j] : T(0)) + (skip2 ? skip2[r * h + j] : T(0));
            for (std::int64_t slot = 0; slot < g.k; ++slot) {
                const auto v = static_cast<std::int64_t>(idx[g.position(r, slot)]);
                if (v == -1) continue;
                if (v < 0 || v >= g.num_dst) {
                    bad_index = true;
                    continue;
                }
                const T scale = scales ? scales[r * g.k + slot] : T(1);
                const T* b = nullptr;
                if (bias) {
                    const auto e = static_cast<std::int64_t>(experts[r * g.k + slot]);
                    if (e >= 0 && e < g.experts) b = bias + e * h;
                }
                const T* src = rows + v * h;
                for (std::int64_t j = 0; j < h; ++j) yr[j] += scale * (src[j] + (b ? b[j] : T(0)));
            }
        }
        if (bad_index)
            throw Error(p.context() + "an entry of expanded_src_to_dst_row is outside [0, " + std::to_string(g.num_dst) +
                        ") and is not -1");
    }

    WorkModel work(const Problem& p) const override {
        const Routing g = routing_of(p);
        const TensorSpec& rows = p.input("expanded_permuted_rows").tensors.at(0);
        const double size = static_cast<double>(dtype_size(rows.dtype));
        const double h = static_cast<double>(g.hidden);
        const double terms = static_cast<double>(drop_pad(g.mode) ? kept_rows(g.entries(), g.num_dst) : g.entries());
        const double out_elements = static_cast<double>(g.num_rows) * h;
        WorkModel w;
        // Only the rows of R that some entry names are read (each once: idx is injective);
        // idx, the skips, bias, scales and expert ids whole; out written once.
        w.bytes_read = terms * h * size + static_cast<double>(p.input("expanded_src_to_dst_row").tensors.at(0).bytes());
        for (const char* name : {"skip1", "skip2", "bias", "scales", "expert_for_source_row"})
            if (p.input(name).present) w.bytes_read += static_cast<double>(p.input(name).tensors.at(0).bytes());
        w.bytes_written = out_elements * size;
        // Per output element: skip1 + skip2 (add, with both); per kept term and element: the
        // bias add (with bias) and the scaled accumulate (fma; an add without scales). fp16
        // and bf16 accumulate in fp32: every element loaded and stored is converted.
        // Formula-literal count (cann-bench convention: elementary op or cast 1) per output
        // element: 1 (skip1 + skip2) + K x (bias add + multiply + accumulate) = 1 + 3K.
        const DType compute = DType::f32;
        const bool skip1 = p.input("skip1").present, skip2 = p.input("skip2").present;
        const bool bias = p.input("bias").present;
        if (skip1 && skip2) w.add_vector(OpClass::add, compute, out_elements);
        if (bias) w.add_vector(OpClass::add, compute, terms * h);
        w.add_vector(p.input("scales").present ? OpClass::fma : OpClass::add, compute, terms * h);
        if (rows.dtype != DType::f32) {
            const double loaded = terms * h + (skip1 ? out_elements : 0) + (skip2 ? out_elements : 0) +
                                  (bias ? static_cast<double>(g.experts) * h : 0);
            w.add_vector(OpClass::cast, compute, loaded + out_elements);
        }
        const double k = static_cast<double>(g.k);
        const double adds = (skip1 && skip2 ? k + 1 : skip1 || skip2 ? k : k - 1) + (bias ? k : 0);
        add_formula(w, rows.dtype, FormulaMath::compare, out_elements, {{OpClass::select, k}});
        if (p.input("scales").present)
            add_formula(w, rows.dtype, FormulaMath::in_fp32, out_elements, {{OpClass::add, adds}, {OpClass::mul, k}});
        else
            add_formula(w, rows.dtype, FormulaMath::in_fp32, out_elements, {{OpClass::add, adds}});
        w.parallel_items = static_cast<double>(g.num_rows);
        w.innermost = g.hidden;
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        const std::int64_t mode = sampler.cycle(std::vector<std::int64_t>{0, 1, 0, 2, 0, 3});
        // Which optional inputs a case has (the reference's combinations). Scales and expert
        // ids have an innermost dim of K (never 512 bytes), so an aligned case has neither.
        struct Presence {
            bool skip1, skip2, bias, scales, experts, fp32_scales;
        };
        static const std::vector<Presence> unaligned = {
            {true, true, true, true, true, false},    // everything
            {true, false, true, true, true, false},   // without skip2
            {true, true, true, true, true, true},     // float32 scales with half R
            {false, false, true, true, true, false},  // without skips
            {true, true, false, true, false, false},  // without bias
            {true, true, true, false, true, false},   // without scales (K = 1)
            {false, false, false, false, false, false},
        };
        static const std::vector<Presence> aligned = {
            {true, true, false, false, false, false},
            {false, false, false, false, false, false},
            {true, false, false, false, false, false},
        };
        const Presence with = d.aligned ? sampler.cycle(aligned) : sampler.cycle(unaligned);
        const bool skip1 = with.skip1, skip2 = with.skip2, bias = with.bias, scales = with.scales;
        const bool experts = with.experts;
        const std::int64_t k = scales ? sampler.cycle(std::vector<std::int64_t>{2, 1, 4, 8, 16, 2, 6}) : 1;
        const std::int64_t e = sampler.pick(std::vector<std::int64_t>{8, 16, 32, 64});
        // Elements: R ~ NUM_ROWS*K*H, skips 2*NUM_ROWS*H, the rest small: H from the sampler,
        // NUM_ROWS from the rest of the budget.
        const std::int64_t budget = budgeted_elements(sampler);
        const double per_row = static_cast<double>(k + (skip1 ? 1 : 0) + (skip2 ? 1 : 0));
        const Shape rows_shape = sampler.shape(static_cast<std::int64_t>(static_cast<double>(budget) / per_row * k), 2,
                                               d.dtype, d.aligned);
        const std::int64_t hidden = rows_shape[1];
        std::int64_t num_rows = std::max<std::int64_t>(1, rows_shape[0] / k);
        // An aligned case also needs idx (int32 [NUM_ROWS * K]) at a multiple of 128; small
        // budgets would all round to 128 rows, so the multiple varies (distinct sizes).
        if (d.aligned) {
            std::int64_t blocks = std::max<std::int64_t>(1, std::llround(static_cast<double>(num_rows) / 128));
            if (blocks <= 4) blocks += sampler.rng().uniform_int(0, 4);
            num_rows = 128 * blocks;
        }
        const std::int64_t entries = num_rows * k;
        auto& in = out.inputs;
        if (drop_pad(mode)) {
            // A capacity of 0.8 or 1.25 times the average load per expert: the first drops
            // tokens that do not fit, the second leaves padding rows unused.
            const double factor = sampler.pick(std::vector<double>{0.8, 1.25});
            const std::int64_t capacity = std::max<std::int64_t>(1, std::llround(factor * entries / double(e)));
            in.at(0).shapes = {{e, capacity, hidden}};
            in.at(1).range = ValueRange{-1, static_cast<double>(e * capacity - 1)};
        } else {
            in.at(0).shapes = {{entries, hidden}};
            in.at(1).range = ValueRange{0, static_cast<double>(entries - 1)};
        }
        in.at(1).shapes = {{entries}};
        in.at(1).dtype = DType::i32;
        for (int a : {2, 3}) in.at(a).present = a == 2 ? skip1 : skip2;
        for (int a : {2, 3}) in.at(a).shapes = {{num_rows, hidden}};
        in.at(4).present = bias;
        in.at(4).shapes = {{e, hidden}};
        in.at(5).present = scales;
        in.at(5).shapes = {{num_rows, k}};
        in.at(5).dtype = with.fp32_scales ? DType::f32 : d.dtype;
        in.at(5).range = ValueRange{0, 1};  // routing weights
        in.at(6).present = experts;
        in.at(6).shapes = {{num_rows, k}};
        in.at(6).dtype = DType::i32;
        in.at(6).range = ValueRange{0, static_cast<double>(e - 1)};
        out.attrs = {{"drop_pad_mode", AttrValue::of_int(mode)}};
    }

    // Sums of up to K + 2 terms: +-1e37 keeps them finite in fp32 whatever the order of
    // accumulation (+-3e38 would make a kernel's overflow depend on its summation order);
    // fp16 keeps its limit, where out overflows to inf as the rounded golden does.
    ValueRange boundary_range(DType dtype) const override {
        return dtype == DType::f16 ? ValueRange{-65504, 65504} : ValueRange{-1e37, 1e37};
    }

    void fix_inputs(const Problem& p, std::vector<Arg>& inputs, Rng& rng) const override {
        const Routing g = routing_of(p);
        auto* idx = static_cast<std::int32_t*>(inputs.at(1).tensors.at(0).data());
        const std::int64_t entries = g.entries();
        // A random permutation of the destination rows; its prefix is the injective map.
        std::vector<std::int64_t> dst(static_cast<std::size_t>(g.num_dst));
        std::iota(dst.begin(), dst.end(), 0);
        auto shuffle_prefix = [&](std::vector<std::int64_t>& v, std::int64_t count) {
            for (std::int64_t i = 0; i < count; ++i)
                std::swap(v[static_cast<std::size_t>(i)],
                          v[static_cast<std::size_t>(rng.uniform_int(i, static_cast<std::int64_t>(v.size()) - 1))]);
        };
        const std::int64_t kept = drop_pad(g.mode) ? kept_rows(entries, g.num_dst) : entries;
        shuffle_prefix(dst, kept);
        // Which entries keep a row: a random subset of size `kept` (all of them without drops).
        std::vector<std::int64_t> order(static_cast<std::size_t>(entries));
        std::iota(order.begin(), order.end(), 0);
        shuffle_prefix(order, kept);
        for (std::int64_t i = 0; i < entries; ++i) idx[i] = -1;
        for (std::int64_t i = 0; i < kept; ++i)
            idx[order[static_cast<std::size_t>(i)]] = static_cast<std::int32_t>(dst[static_cast<std::size_t>(i)]);
        // The gating op's finished rows: all K expert ids at the sentinel E, bias dropped.
        if (p.input("bias").present) {
            auto* experts = static_cast<std::int32_t*>(inputs.at(6).tensors.at(0).data());
            for (std::int64_t r = 0; r < g.num_rows; ++r)
                if (rng.uniform01() < 1.0 / 16)
                    for (std::int64_t slot = 0; slot < g.k; ++slot)
                        experts[r * g.k + slot] = static_cast<std::int32_t>(g.experts);
        }
    }
};

HB_REGISTER_OPERATOR(MoeFinalizeRoutingOp)

}  // namespace hb
