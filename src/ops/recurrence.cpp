#include "ops/recurrence.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "ops/dgemm.hpp"
#include "ops/formula_count.hpp"
#include "ops/suite_budget.hpp"

namespace hb {

namespace {

bool is_lstm(const RecurrenceConfig& c) { return c.cell == RecurrentCell::lstm; }

std::string dtype_shape(const TensorSpec& t) { return std::string(dtype_name(t.dtype)) + " " + shape_to_string(t.shape); }

std::size_t input_index(const Problem& p, const std::string& name) {
    for (std::size_t i = 0; i < p.inputs.size(); ++i)
        if (p.inputs[i].name == name) return i;
    throw Error(p.context() + "the proto has no input '" + name + "'", ExitCode::internal);
}

// A list input of cells() tensors with the given shapes (shape_of(k) for list entry k).
template <typename ShapeOf>
void check_list(const Problem& p, const RecurrenceConfig& c, const std::string& name, ShapeOf shape_of,
                const std::string& layout) {
    const ArgSpec& a = p.input(name);
    if (static_cast<std::int64_t>(a.tensors.size()) != c.cells())
        throw Error(p.context() + name + " holds " + std::to_string(a.tensors.size()) + " tensors; expected numLayers x " +
                    "directions = " + std::to_string(c.layers) + " x " + std::to_string(c.directions) + " = " +
                    std::to_string(c.cells()) + " (list index layer * directions + direction)");
    for (std::int64_t k = 0; k < c.cells(); ++k) {
        const TensorSpec& t = a.tensors[static_cast<std::size_t>(k)];
        const Shape expected = shape_of(k / c.directions);
        if (t.dtype != c.dtype || t.shape != expected)
            throw Error(p.context() + name + "[" + std::to_string(k) + "] (layer " + std::to_string(k / c.directions) +
                        ", direction " + std::to_string(k % c.directions) + ") is " + dtype_shape(t) + "; expected " +
                        std::string(dtype_name(c.dtype)) + " " + shape_to_string(expected) + " " + layout);
    }
}

void check_state(const Problem& p, const RecurrenceConfig& c, const std::string& name, std::int64_t size) {
    const ArgSpec& a = p.input(name);
    if (!a.present) return;
    const Shape expected = {c.cells(), c.batch, size};
    const TensorSpec& t = a.tensors.at(0);
    if (t.dtype != c.dtype || t.shape != expected)
        throw Error(p.context() + name + " is " + dtype_shape(t) + "; expected " + std::string(dtype_name(c.dtype)) + " " +
                    shape_to_string(expected) + " [numLayers x directions, B, " + (size == c.hidden ? "H" : "P") +
                    "] (never batch-first)");
}

}  // namespace

double RecurrenceConfig::macs_per_step(std::int64_t layer) const {
    const double gh = static_cast<double>(gates() * hidden);
    double m = gh * static_cast<double>(layer_input(layer)) + gh * static_cast<double>(state());
    if (proj > 0) m += static_cast<double>(proj * hidden);
    return m;
}

double RecurrenceConfig::total_macs() const {
    double per_row = 0;
    for (std::int64_t l = 0; l < layers; ++l) per_row += static_cast<double>(directions) * macs_per_step(l);
    return per_row * static_cast<double>(seq * batch);
}

RecurrenceConfig recurrence_config(const Problem& p, RecurrentCell cell) {
    RecurrenceConfig c;
    c.cell = cell;
    const TensorSpec& x = p.input("x").tensors.at(0);
    c.dtype = x.dtype;
    if (x.dtype != DType::f32 && x.dtype != DType::f16 && x.dtype != DType::bf16)
        throw Error(p.context() + "x is " + std::string(dtype_name(x.dtype)) + "; expected float32, float16 or bfloat16");
    c.input = p.attr_int("inputSize");
    c.hidden = p.attr_int("hiddenSize");
    c.layers = p.attr_int("numLayers");
    c.bias = p.attr_bool("bias");
    c.batch_first = p.attr_bool("batchFirst");
    c.directions = p.attr_bool("bidirectional") ? 2 : 1;
    if (cell == RecurrentCell::lstm) c.proj = p.attr_int("projSize");
    if (c.input < 1 || c.hidden < 1 || c.layers < 1)
        throw Error(p.context() + "inputSize " + std::to_string(c.input) + ", hiddenSize " + std::to_string(c.hidden) +
                    ", numLayers " + std::to_string(c.layers) + ": each must be at least 1");
    if (c.proj < 0 || (c.proj > 0 && c.proj >= c.hidden))
        throw Error(p.context() + "projSize is " + std::to_string(c.proj) + "; it must be 0 (no projection) or in [1, " +
                    "hiddenSize) = [1, " + std::to_string(c.hidden) + ")");
    const double dropout = p.attr_float("dropout");
    if (!(dropout >= 0 && dropout <= 1))
        throw Error(p.context() + "dropout is " + std::to_string(dropout) +
                    "; it must be in [0, 1] (it is never applied: the module is evaluated in eval mode)");
    if (x.shape.size() != 3 || x.shape[2] != c.input)
        throw Error(p.context() + "x has shape " + shape_to_string(x.shape) + "; expected " +
                    (c.batch_first ? "[B, S, inputSize]" : "[S, B, inputSize]") + " with inputSize = " +
                    std::to_string(c.input));
    c.seq = x.shape[c.batch_first ? 1 : 0];
    c.batch = x.shape[c.batch_first ? 0 : 1];
    if (c.seq < 1 || c.batch < 1)
        throw Error(p.context() + "x has shape " + shape_to_string(x.shape) + "; the sequence and the batch must be non-empty");
    // The projection decides the shapes of every list, so its weights are checked first.
    if (cell == RecurrentCell::lstm) {
        const bool hr = p.input("weight_hr").present;
        if (c.proj > 0 && !hr)
            throw Error(p.context() + "projSize is " + std::to_string(c.proj) + " but weight_hr is absent; give one [projSize, " +
                        "hiddenSize] tensor per layer and direction");
        if (c.proj == 0 && hr)
            throw Error(p.context() + "weight_hr is given but projSize is 0; set projSize to its first dim or drop it");
    }
    const std::int64_t gh = c.gates() * c.hidden;
    const std::string gate_rows = cell == RecurrentCell::gru ? "3 x hiddenSize rows (r, z, n)" : "4 x hiddenSize rows (i, f, g, o)";
    check_list(p, c, "weight_ih", [&](std::int64_t l) { return Shape{gh, c.layer_input(l)}; },
               "[" + gate_rows + ", layer input: inputSize for layer 0, directions x " +
                   std::string(c.proj > 0 ? "projSize" : "hiddenSize") + " above]");
    check_list(p, c, "weight_hh", [&](std::int64_t) { return Shape{gh, c.state()}; },
               "[" + gate_rows + ", " + (c.proj > 0 ? "projSize" : "hiddenSize") + "]");
    const bool bias_ih = p.input("bias_ih").present, bias_hh = p.input("bias_hh").present;
    if (bias_ih != bias_hh)
        throw Error(p.context() + std::string(bias_ih ? "bias_ih is given without bias_hh" : "bias_hh is given without bias_ih") +
                    "; give both lists or neither");
    if (!c.bias && bias_ih)
        throw Error(p.context() + "bias is false but bias_ih and bias_hh are given; drop them or set bias true");
    c.bias_given = c.bias && bias_ih;
    if (c.bias_given) {
        check_list(p, c, "bias_ih", [&](std::int64_t) { return Shape{gh}; }, "[" + gate_rows + "]");
        check_list(p, c, "bias_hh", [&](std::int64_t) { return Shape{gh}; }, "[" + gate_rows + "]");
    }
    if (cell == RecurrentCell::lstm) {
        if (c.proj > 0) check_list(p, c, "weight_hr", [&](std::int64_t) { return Shape{c.proj, c.hidden}; }, "[projSize, hiddenSize]");
        c.c0_given = p.input("c0").present;
        check_state(p, c, "c0", c.hidden);
    }
    c.h0_given = p.input("h0").present;
    check_state(p, c, "h0", c.state());
    return c;
}

std::vector<ArgSpec> recurrence_outputs(const RecurrenceConfig& c) {
    const std::int64_t width = c.directions * c.state();
    ArgSpec y, hn;
    y.name = "y";
    y.tensors.push_back(TensorSpec{c.dtype, c.batch_first ? Shape{c.batch, c.seq, width} : Shape{c.seq, c.batch, width}});
    hn.name = "hn";
    hn.tensors.push_back(TensorSpec{c.dtype, Shape{c.cells(), c.batch, c.state()}});
    if (!is_lstm(c)) return {y, hn};
    ArgSpec cn;
    cn.name = "cn";
    cn.tensors.push_back(TensorSpec{c.dtype, Shape{c.cells(), c.batch, c.hidden}});
    return {y, hn, cn};
}

namespace {

// C = A * B^T (+ C when accumulate) with A [m, k] and B [n, k], row-major.
void gemm_abt(std::int64_t m, std::int64_t n, std::int64_t k, const double* a, const double* b, double* c, bool accumulate) {
    dgemm(false, true, m, n, k, 1.0, a, k, b, k, accumulate ? 1.0 : 0.0, c, n);
}
void gemm_abt(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, const float* b, float* c, bool accumulate) {
    sgemm(false, true, m, n, k, 1.0f, a, k, b, k, accumulate ? 1.0f : 0.0f, c, n);
}

template <typename T>
T sigmoid(T v) {
    return T(1) / (T(1) + std::exp(-v));
}

}  // namespace

template <typename T>
void run_recurrence(const Problem& p, const RecurrenceConfig& c, const ValueArgs<T>& in, ValueArgs<T>& out) {
    const std::int64_t S = c.seq, B = c.batch, H = c.hidden, Hs = c.state(), GH = c.gates() * H;
    const auto& x = in[input_index(p, "x")].one().v;
    const auto& w_ih = in[input_index(p, "weight_ih")].tensors;
    const auto& w_hh = in[input_index(p, "weight_hh")].tensors;
    const auto* b_ih = c.bias_given ? &in[input_index(p, "bias_ih")].tensors : nullptr;
    const auto* b_hh = c.bias_given ? &in[input_index(p, "bias_hh")].tensors : nullptr;
    const auto* w_hr = c.proj > 0 ? &in[input_index(p, "weight_hr")].tensors : nullptr;
    const T* h0 = c.h0_given ? in[input_index(p, "h0")].one().v.data() : nullptr;
    const T* c0 = c.c0_given ? in[input_index(p, "c0")].one().v.data() : nullptr;
    T* hn = out[1].one().v.data();
    T* cn = is_lstm(c) ? out[2].one().v.data() : nullptr;

    // The layer input, time-major [S, B, in_l].
    std::vector<T> layer_in(static_cast<std::size_t>(S * B * c.input));
    for (std::int64_t t = 0; t < S; ++t)
        for (std::int64_t b = 0; b < B; ++b) {
            const std::int64_t from = c.batch_first ? (b * S + t) * c.input : (t * B + b) * c.input;
            std::copy_n(x.begin() + from, c.input, layer_in.begin() + (t * B + b) * c.input);
        }
    std::vector<T> layer_out(static_cast<std::size_t>(S * B * c.directions * Hs));
    std::vector<T> gx(static_cast<std::size_t>(S * B * GH)), gh(static_cast<std::size_t>(B * GH));
    std::vector<T> h(static_cast<std::size_t>(B * Hs)), h_next(static_cast<std::size_t>(B * H));
    std::vector<T> cell(static_cast<std::size_t>(B * H));
    for (std::int64_t l = 0; l < c.layers; ++l) {
        const std::int64_t in_l = c.layer_input(l);
        for (std::int64_t d = 0; d < c.directions; ++d) {
            const auto k = static_cast<std::size_t>(l * c.directions + d);
            // The input projection of every step at once: gx = layer_in W_ih^T + b_ih.
            gemm_abt(S * B, GH, in_l, layer_in.data(), w_ih[k].v.data(), gx.data(), false);
            if (b_ih)
                for (std::int64_t r = 0; r < S * B; ++r)
                    for (std::int64_t j = 0; j < GH; ++j) gx[static_cast<std::size_t>(r * GH + j)] += (*b_ih)[k].v[static_cast<std::size_t>(j)];
            const std::size_t state_at = k * static_cast<std::size_t>(B);
            for (std::int64_t i = 0; i < B * Hs; ++i) h[static_cast<std::size_t>(i)] = h0 ? h0[state_at * Hs + i] : T(0);
            for (std::int64_t i = 0; i < B * H; ++i) cell[static_cast<std::size_t>(i)] = c0 ? c0[state_at * H + i] : T(0);
            for (std::int64_t s = 0; s < S; ++s) {
                const std::int64_t t = d == 0 ? s : S - 1 - s;
                // The recurrent product gh = h W_hh^T + b_hh, kept apart from gx because
                // gru's reset gate multiplies only its n block.
                gemm_abt(B, GH, Hs, h.data(), w_hh[k].v.data(), gh.data(), false);
                for (std::int64_t b = 0; b < B; ++b) {
                    const T* gxr = gx.data() + (t * B + b) * GH;
                    T* ghr = gh.data() + b * GH;
                    if (b_hh)
                        for (std::int64_t j = 0; j < GH; ++j) ghr[j] += (*b_hh)[k].v[static_cast<std::size_t>(j)];
                    for (std::int64_t j = 0; j < H; ++j) {
                        const auto at = static_cast<std::size_t>(b * H + j);
                        if (!is_lstm(c)) {
                            const T r = sigmoid(gxr[j] + ghr[j]);
                            const T z = sigmoid(gxr[H + j] + ghr[H + j]);
                            const T n = std::tanh(gxr[2 * H + j] + r * ghr[2 * H + j]);
                            h_next[at] = (T(1) - z) * n + z * h[static_cast<std::size_t>(b * Hs + j)];
                        } else {
                            const T i = sigmoid(gxr[j] + ghr[j]);
                            const T f = sigmoid(gxr[H + j] + ghr[H + j]);
                            const T g = std::tanh(gxr[2 * H + j] + ghr[2 * H + j]);
                            const T o = sigmoid(gxr[3 * H + j] + ghr[3 * H + j]);
                            cell[at] = f * cell[at] + i * g;
                            h_next[at] = o * std::tanh(cell[at]);
                        }
                    }
                }
                // lstm with projection: h = h' W_hr^T, [B, P].
                if (w_hr) gemm_abt(B, c.proj, H, h_next.data(), (*w_hr)[k].v.data(), h.data(), false);
                else std::copy(h_next.begin(), h_next.end(), h.begin());
                for (std::int64_t b = 0; b < B; ++b)
                    std::copy_n(h.begin() + b * Hs, Hs, layer_out.begin() + (t * B + b) * c.directions * Hs + d * Hs);
            }
            std::copy(h.begin(), h.end(), hn + state_at * Hs);
            if (cn) std::copy(cell.begin(), cell.end(), cn + state_at * H);
        }
        layer_in.swap(layer_out);
        layer_out.assign(static_cast<std::size_t>(S * B * c.directions * Hs), T(0));
    }
    // layer_in now holds the last layer's output, time-major.
    auto& y = out[0].one().v;
    const std::int64_t width = c.directions * Hs;
    for (std::int64_t t = 0; t < S; ++t)
        for (std::int64_t b = 0; b < B; ++b) {
            const std::int64_t to = c.batch_first ? (b * S + t) * width : (t * B + b) * width;
            std::copy_n(layer_in.begin() + (t * B + b) * width, width, y.begin() + to);
        }
}

template void run_recurrence<double>(const Problem&, const RecurrenceConfig&, const ValueArgs<double>&, ValueArgs<double>&);
template void run_recurrence<float>(const Problem&, const RecurrenceConfig&, const ValueArgs<float>&, ValueArgs<float>&);

WorkModel recurrence_work(const Problem& p, const RecurrenceConfig& c) {
    const bool lstm = is_lstm(c);
    const DType t = c.dtype;
    const double S = static_cast<double>(c.seq), B = static_cast<double>(c.batch), H = static_cast<double>(c.hidden),
                 Hs = static_cast<double>(c.state());
    const double cells = static_cast<double>(c.cells());
    WorkModel w;
    // Every input is read once (the weights stay on chip across the steps, the states are
    // read once) and every output written once: the intermediate gates and the layers'
    // outputs between layers need not leave the chip.
    for (const auto& a : p.inputs)
        if (a.present)
            for (const auto& tensor : a.tensors) w.bytes_read += static_cast<double>(tensor.bytes());
    for (const auto& o : p.outputs)
        for (const auto& tensor : o.tensors) w.bytes_written += static_cast<double>(tensor.bytes());
    // Per layer and direction: the input projection of all steps as one product (its rows
    // are independent), the recurrent product one step at a time, lstm's projection too.
    for (std::int64_t l = 0; l < c.layers; ++l)
        for (std::int64_t d = 0; d < c.directions; ++d) {
            w.contractions.push_back({t, DType::f32, 1, c.seq * c.batch, c.gates() * c.hidden, c.layer_input(l), false});
            w.contractions.push_back({t, DType::f32, S, c.batch, c.gates() * c.hidden, c.state(), false});
            if (c.proj > 0) w.contractions.push_back({t, DType::f32, S, c.batch, c.proj, c.hidden, false});
        }
    // The cell update per hidden unit and step, in fp32 (the accumulators' precision), with
    // the bias terms in the products' accumulators and each sigmoid as exp, add, div:
    //   gru:  r, z sigmoids (2 exp, 2 add, 2 div); n = tanh(gx_n + r gh_n) (fma, tanh);
    //         h' = n + z (h - n) (add, fma)
    //   lstm: i, f, o sigmoids (3 exp, 3 add, 3 div); g = tanh; c' = f c + i g (mul, fma);
    //         h' = o tanh(c') (tanh, mul)
    // The products add gx and gh for every gate but gru's n block, whose gh term the reset
    // gate scales first. Half dtypes narrow each output element once (cast).
    const double units = cells * S * B * H;  // hidden units updated, over every step
    auto cell_vector = [&](std::vector<VectorWork>& v, double n) {
        if (!lstm) {
            v.push_back({OpClass::exp, DType::f32, 2 * n});
            v.push_back({OpClass::add, DType::f32, 3 * n});
            v.push_back({OpClass::div, DType::f32, 2 * n});
            v.push_back({OpClass::fma, DType::f32, 2 * n});
            v.push_back({OpClass::tanh, DType::f32, n});
        } else {
            v.push_back({OpClass::exp, DType::f32, 3 * n});
            v.push_back({OpClass::add, DType::f32, 3 * n});
            v.push_back({OpClass::div, DType::f32, 3 * n});
            v.push_back({OpClass::fma, DType::f32, n});
            v.push_back({OpClass::mul, DType::f32, 2 * n});
            v.push_back({OpClass::tanh, DType::f32, 2 * n});
        }
    };
    cell_vector(w.vector, units);
    if (t != DType::f32) {
        double outputs = 0;
        for (const auto& o : p.outputs) outputs += static_cast<double>(o.tensors.at(0).numel());
        w.add_vector(OpClass::cast, DType::f32, outputs);
    }
    // What crosses between the matrix and the vector stage: the gate pre-activations (the
    // contractions' results: on hardware whose results leave the matrix unit through global
    // memory the solver already charges them there, FixPipe on the 910B, so they are not
    // stated again), and h going back to the matrix unit for the next step's product.
    const double crossing_per_step = B * Hs * static_cast<double>(dtype_size(t));
    w.cube_vector_bytes = cells * S * crossing_per_step;
    w.parallel_items = cells * S * B * H;
    w.innermost = c.input;

    // The dependent chain: step t of a cell needs its step t - 1, layer l + 1 needs layer l's
    // output at the same step, and with two directions all of it (the reverse direction
    // ends at t = 0, where the forward direction of the next layer starts). The critical
    // path therefore holds S + L - 1 cell steps (one direction: a wavefront over the layers)
    // or L S (bidirectional). One step's items: a hidden unit of one sequence (its G gate
    // rows and its update), B H of them.
    w.chain.steps = c.directions == 2 ? static_cast<double>(c.layers) * S : S + static_cast<double>(c.layers) - 1;
    w.chain.items_per_step = B * H;
    w.chain.contractions.push_back({t, DType::f32, 1, c.batch, c.gates() * c.hidden, c.state(), false});
    if (c.proj > 0) w.chain.contractions.push_back({t, DType::f32, 1, c.batch, c.proj, c.hidden, false});
    cell_vector(w.chain.vector, B * H);
    w.chain.cube_vector_bytes = crossing_per_step;

    // cann-bench (docs/hap.md): the formula as written, per hidden unit and step, in fp32 (it
    // reduces, and lstm is defined in fp32); a sigmoid is negate, exp, add, div; each gate's
    // pre-activation adds its two products and, with bias, b_i* and b_h* (3 adds, 1 without).
    //   gru:  r, z: 2 x (3 + 2) adds, exp, div; n = tanh(W_in x + b_in + r (W_hn h + b_hn)):
    //         3 adds, mul, tanh; h' = (1 - z) n + z h: 2 adds, 2 muls. With bias: add 15,
    //         mul 3, exp 2, div 2, tanh 1 (32 operations); without: add 9 (26).
    //   lstm: 4 gates x 3 adds, 3 sigmoids x 2 adds, c' = f c + i g (2 muls, add),
    //         h' = o tanh(c') (mul, tanh): add 19, mul 3, exp 3, div 3, tanh 2 (44); without
    //         bias add 11 (36). The matrix products are priced from the contractions.
    const double gate_adds = c.bias ? 3 : 1;
    if (!lstm)
        add_formula(w, t, FormulaMath::in_fp32, units,
                    {{OpClass::add, 2 * (gate_adds + 2) + gate_adds + 2}, {OpClass::mul, 3}, {OpClass::exp, 2},
                     {OpClass::div, 2}, {OpClass::tanh, 1}});
    else
        add_formula(w, t, FormulaMath::in_fp32, units,
                    {{OpClass::add, 4 * gate_adds + 6 + 1}, {OpClass::mul, 3}, {OpClass::exp, 3}, {OpClass::div, 3},
                     {OpClass::tanh, 2}});
    return w;
}

namespace {

// One public case's recurrence pattern (cycled over the cases): layers, directions, layout,
// bias, initial states, lstm's projection, dropout.
struct Pattern {
    std::int64_t layers;
    bool bidirectional, batch_first;
    int bias;  // 0: bias false; 1: bias true with both lists; 2: bias true without lists (zeros)
    bool h0, c0, proj;
    double dropout;
};

const std::vector<Pattern>& patterns(RecurrentCell cell) {
    // Every attribute value within the first few cases: 1-3 layers, both directions, both
    // layouts, the three bias forms, with and without initial states, dropout 0.1 in a
    // multi-layer case (never applied), and for lstm the projection (one and two layers,
    // both directions).
    static const std::vector<Pattern> gru = {
        {1, false, false, 1, false, false, false, 0.0}, {1, true, false, 1, false, false, false, 0.0},
        {2, false, false, 1, true, false, false, 0.0},  {3, false, false, 1, false, false, false, 0.1},
        {2, true, false, 1, false, false, false, 0.0},  {1, false, true, 1, false, false, false, 0.0},
        {1, false, false, 0, false, false, false, 0.0}, {1, true, false, 2, false, false, false, 0.0},
        {1, false, false, 1, true, false, false, 0.0},  {2, true, true, 1, true, false, false, 0.0},
        {1, true, false, 0, false, false, false, 0.0},  {3, true, false, 1, false, false, false, 0.0},
        {1, false, false, 2, true, false, false, 0.0},  {2, false, false, 2, false, false, false, 0.0},
        {1, true, false, 1, true, false, false, 0.0},   {1, false, true, 0, false, false, false, 0.0},
        {3, false, false, 1, true, false, false, 0.0},  {1, false, false, 1, false, false, false, 0.0},
        {2, true, false, 1, false, false, false, 0.0},  {2, false, true, 1, false, false, false, 0.1},
    };
    static const std::vector<Pattern> lstm = {
        {1, false, false, 1, false, false, false, 0.0}, {1, true, false, 1, false, false, false, 0.0},
        {1, false, false, 1, false, false, true, 0.0},  {2, false, false, 1, true, true, false, 0.0},
        {3, false, false, 1, false, false, false, 0.1}, {2, false, false, 1, false, false, true, 0.0},
        {1, false, true, 1, false, false, false, 0.0},  {1, false, false, 0, false, false, false, 0.0},
        {2, true, false, 1, false, false, false, 0.0},  {1, true, false, 2, true, true, false, 0.0},
        {1, false, false, 1, true, false, false, 0.0},  {1, false, false, 1, false, true, false, 0.0},
        {1, true, false, 1, false, false, true, 0.0},   {2, true, true, 1, false, false, false, 0.0},
        {1, false, false, 0, true, true, true, 0.0},    {3, true, false, 1, false, false, false, 0.0},
        {1, false, true, 1, true, true, true, 0.0},     {2, false, false, 2, false, false, false, 0.0},
        {1, true, false, 0, false, false, false, 0.0},  {2, false, false, 1, true, true, false, 0.0},
    };
    return cell == RecurrentCell::gru ? gru : lstm;
}

AttrValue int_attr(std::int64_t v) { return AttrValue::of_int(v); }

// Weights drawn as PyTorch initializes them, U(-k, k) with k near 1/sqrt(H) (a power of two),
// so that the recurrence neither explodes nor dies whatever the case's range does to x.
ValueRange weight_range(std::int64_t hidden) {
    const double k = std::ldexp(1.0, -static_cast<int>(std::lround(0.5 * std::log2(static_cast<double>(hidden)))));
    return ValueRange{-k, k};
}

}  // namespace

void sample_recurrence_case(CaseSampler& sampler, CaseSpec& out, RecurrentCell cell) {
    const auto& d = sampler.draw();
    Pattern pat = sampler.cycle(patterns(cell));
    const bool lstm = cell == RecurrentCell::lstm;
    // Every case is non-aligned (the operators' can_align): odd, prime and power-of-two sizes.
    const std::vector<std::int64_t> hiddens = {8, 16, 16, 24, 31, 32, 48, 63, 64, 96, 127, 128, 200, 255, 256, 384, 511};
    const std::vector<std::int64_t> inputs = {16, 31, 32, 63, 64, 100, 127, 128, 255, 256, 384, 511, 512, 1000, 1023, 2047, 3001, 4095};
    const std::vector<std::int64_t> batches = {1, 2, 3, 4, 5, 7, 8, 13, 16, 31, 32, 64};
    const double target = static_cast<double>(level4_budgeted_elements(sampler));
    const Profile& prof = sampler.profile();
    struct Choice {
        std::int64_t s = 0, b = 0, i = 0, h = 0, p = 0;
        double total = 0;
    } best;
    double best_gap = 1e300;
    // Shapes within a quarter of the budget are equally good: one of them at random, so that
    // the cases spread over sequence-heavy (small H), weight-heavy (large H, few steps) and
    // balanced recurrences instead of the closest fit, which favours one kind.
    std::vector<Choice> good;
    for (int attempt = 0; attempt < 400; ++attempt) {
        Choice ch;
        ch.h = sampler.pick(hiddens);
        ch.i = sampler.pick(inputs);
        ch.b = sampler.pick(batches);
        if (pat.proj) {
            std::vector<std::int64_t> projs;
            for (std::int64_t v : {4, 8, 16, 31})
                if (v < ch.h) projs.push_back(v);
            if (projs.empty()) continue;
            ch.p = sampler.pick(projs);
        }
        RecurrenceConfig c;
        c.cell = cell;
        c.input = ch.i;
        c.hidden = ch.h;
        c.proj = ch.p;
        c.layers = pat.layers;
        c.directions = pat.bidirectional ? 2 : 1;
        double weights = 0;
        for (std::int64_t l = 0; l < c.layers; ++l) {
            double per_cell = static_cast<double>(c.gates() * c.hidden) * static_cast<double>(c.layer_input(l) + c.state());
            if (pat.bias == 1) per_cell += 2.0 * static_cast<double>(c.gates() * c.hidden);
            if (c.proj > 0) per_cell += static_cast<double>(c.proj * c.hidden);
            weights += static_cast<double>(c.directions) * per_cell;
        }
        const double states = static_cast<double>(c.cells() * ch.b) *
                              ((pat.h0 ? static_cast<double>(c.state()) : 0) + (lstm && pat.c0 ? static_cast<double>(c.hidden) : 0));
        double macs_per_row = 0;
        for (std::int64_t l = 0; l < c.layers; ++l) macs_per_row += static_cast<double>(c.directions) * c.macs_per_step(l);
        const double x_room = target - weights - states;
        if (x_room < static_cast<double>(ch.b * ch.i)) continue;
        std::int64_t s = static_cast<std::int64_t>(x_room / static_cast<double>(ch.b * ch.i));
        s = std::min<std::int64_t>(s, static_cast<std::int64_t>(recurrence_macs_cap / (macs_per_row * static_cast<double>(ch.b))));
        s = std::min<std::int64_t>(s, 1024);
        if (s < 1) continue;
        ch.s = s;
        ch.total = static_cast<double>(s * ch.b * ch.i) + weights + states;
        const double gap = std::fabs(std::log(ch.total / target));
        const bool in_regime = prof.regime_of(static_cast<std::int64_t>(ch.total)) == d.regime;
        if (!in_regime) continue;
        if (gap < 0.25) good.push_back(ch);
        if (gap < best_gap) best = ch, best_gap = gap;
    }
    if (!good.empty()) best = sampler.pick(good);
    if (best.s == 0)
        throw Error(std::string(lstm ? "lstm" : "gru") + ": no recurrence of " + std::to_string(pat.layers) +
                        " layer(s) fits a budget of " + std::to_string(static_cast<std::int64_t>(target)) +
                        " elements under the multiply-add cap",
                    ExitCode::internal);
    const std::int64_t dirs = pat.bidirectional ? 2 : 1, cells = pat.layers * dirs;
    const std::int64_t gh = (lstm ? 4 : 3) * best.h, hs = best.p > 0 ? best.p : best.h;
    auto& in = out.inputs;
    const ValueRange wr = weight_range(best.h);
    in.at(0).shapes = {pat.batch_first ? Shape{best.b, best.s, best.i} : Shape{best.s, best.b, best.i}};
    auto list_of = [&](std::size_t at, auto shape_of) {
        in.at(at).present = true;
        in.at(at).shapes.clear();
        for (std::int64_t k = 0; k < cells; ++k) in.at(at).shapes.push_back(shape_of(k / dirs));
        in.at(at).range = wr;
    };
    list_of(1, [&](std::int64_t l) { return Shape{gh, l == 0 ? best.i : dirs * hs}; });
    list_of(2, [&](std::int64_t) { return Shape{gh, hs}; });
    if (pat.bias == 1) {
        list_of(3, [&](std::int64_t) { return Shape{gh}; });
        list_of(4, [&](std::int64_t) { return Shape{gh}; });
    } else {
        in.at(3).present = in.at(4).present = false;
    }
    std::size_t next = 5;
    if (lstm) {
        if (best.p > 0) list_of(5, [&](std::int64_t) { return Shape{best.p, best.h}; });
        else in.at(5).present = false;
        next = 6;
    }
    in.at(next).present = pat.h0;
    if (pat.h0) in.at(next).shapes = {Shape{cells, best.b, hs}};
    if (lstm) {
        in.at(next + 1).present = pat.c0;
        if (pat.c0) in.at(next + 1).shapes = {Shape{cells, best.b, best.h}};
    }
    out.attrs = {{"inputSize", int_attr(best.i)},
                 {"hiddenSize", int_attr(best.h)},
                 {"numLayers", int_attr(pat.layers)},
                 {"bias", AttrValue::of_bool(pat.bias != 0)},
                 {"batchFirst", AttrValue::of_bool(pat.batch_first)},
                 {"dropout", AttrValue::of_float(pat.dropout)},
                 {"bidirectional", AttrValue::of_bool(pat.bidirectional)}};
    if (lstm) out.attrs["projSize"] = int_attr(best.p);
}

}  // namespace hb
