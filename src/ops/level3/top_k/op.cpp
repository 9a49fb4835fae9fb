// top_k(x, k, dim, largest=true): torch.topk(x, k, dim, largest, sorted=True). y holds the k
// largest (or smallest) elements of every slice along dim, sorted descending (ascending for
// smallest); idx (int64) their positions along dim. NaN ranks above +inf: largest=true puts a
// slice's NaNs first, largest=false reaches them only after every number. The order among
// equal values is free, so idx is not compared with the golden's: it is validated by
// gathering (x.gather(dim, idx) must equal the candidate's own y bit for bit) and its indices
// must name k distinct elements of each slice (proto index_gather, distinct: a selection
// takes an element once). y is determined by the multiset of selected values and compared
// bit-exactly (thresholds 0): it is made of input elements, and the inputs hold no -0.0
// (fix_inputs), so no tie between +0 and -0 can make two correct answers differ in bits.
#include <algorithm>
#include <bit>
#include <cmath>
#include <utility>

#include "core/error.hpp"
#include "ops/formula_count.hpp"
#include "ops/axis_view.hpp"
#include "ops/case_budget.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

// int64 values beyond +-2^53 collide in the fp64 golden (ties the kernel does not see).
constexpr double kExactIntegerLimit = 9007199254740992.0;  // 2^53

// An integer whose order is the order of values: -0 and +0 one key, every NaN the largest
// (NaN ranks above +inf).
std::uint64_t order_key(double v) {
    if (std::isnan(v)) return ~std::uint64_t{0};
    if (v == 0) v = 0.0;
    const auto bits = std::bit_cast<std::uint64_t>(v);
    return (bits >> 63) ? ~bits : bits | (std::uint64_t{1} << 63);
}

// Writes the top k of line (o, i): out(r, position) for rank r = 0..k-1. largest: keys
// descending (NaN first); smallest: keys ascending (NaN, the largest key, last). Equal keys
// by position, the golden's own tie order (idx is not compared with it).
template <typename Load, typename Out>
void top_k_of_line(const AxisView& v, std::int64_t o, std::int64_t i, std::int64_t k, bool largest, Load load, Out out,
                   std::vector<std::pair<std::uint64_t, std::int64_t>>& line) {
    line.resize(static_cast<std::size_t>(v.size));
    for (std::int64_t j = 0; j < v.size; ++j) {
        const std::uint64_t key = order_key(load(v.at(o, j, i)));
        line[static_cast<std::size_t>(j)] = {largest ? ~key : key, j};  // ascending order of this is rank order
    }
    std::nth_element(line.begin(), line.begin() + (k - 1), line.end());
    std::sort(line.begin(), line.begin() + k);
    for (std::int64_t r = 0; r < k; ++r) out(r, line[static_cast<std::size_t>(r)].second);
}

struct Checked {
    int axis = 0;
    std::int64_t k = 0;
};

Checked check(const Problem& p, const Shape& shape) {
    if (shape.empty()) throw Error(p.context() + "x must have at least one dimension");
    if (shape.size() > 8) throw Error(p.context() + "x has rank " + std::to_string(shape.size()) + "; top_k supports up to 8");
    Checked c;
    c.axis = normalize_dim(p.attr_int("dim"), shape.size(), p.context() + "x of shape " + shape_to_string(shape));
    c.k = p.attr_int("k");
    const std::int64_t size = shape[static_cast<std::size_t>(c.axis)];
    if (c.k < 1 || c.k > size)
        throw Error(p.context() + "k is " + std::to_string(c.k) + ", but dim " + std::to_string(c.axis) + " of x " +
                    shape_to_string(shape) + " has size " + std::to_string(size) + " (need 1 <= k <= size)");
    return c;
}

bool largest_of(const Problem& p) {
    const auto it = p.attrs.find("largest");
    return it == p.attrs.end() || it->second.type == AttrType::none || it->second.as_bool();
}

}  // namespace

class TopKOp final : public Operator {
  public:
    std::string name() const override { return "top_k"; }
    int level() const override { return 3; }
    std::string baseline_description() const override {
        return "threaded C++ (what PyTorch's CPU topk does: a partial sort of each slice, NaN ranked highest, "
               "slices over OpenMP threads, strided slices gathered into a contiguous buffer first): oneDNN has no "
               "top-k or sort primitive";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const auto& x = p.input("x").tensors.at(0);
        const Checked c = check(p, x.shape);
        Shape shape = x.shape;
        shape[static_cast<std::size_t>(c.axis)] = c.k;
        return {ArgSpec{"y", false, true, {TensorSpec{x.dtype, shape}}},
                ArgSpec{"idx", false, true, {TensorSpec{DType::i64, shape}}}};
    }

    void golden(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const override {
        const auto& x = in[0].one();
        const Checked c = check(p, x.spec.shape);
        const bool largest = largest_of(p);
        const AxisView v = axis_view(x.spec.shape, c.axis);
        AxisView ov = v;
        ov.size = c.k;
        auto& y = out[0].one().v;
        auto& idx = out[1].one().v;
        const auto load = [&](std::int64_t at) { return x.v[static_cast<std::size_t>(at)]; };
#pragma omp parallel if (v.lines() >= 16 && x.spec.numel() >= 65536)
        {
            std::vector<std::pair<std::uint64_t, std::int64_t>> order;
#pragma omp for schedule(dynamic, 16)
            for (std::int64_t line = 0; line < v.lines(); ++line) {
                const std::int64_t o = line / v.inner, i = line % v.inner;
                top_k_of_line(v, o, i, c.k, largest, load, [&](std::int64_t r, std::int64_t position) {
                    const auto at = static_cast<std::size_t>(ov.at(o, r, i));
                    y[at] = x.v[static_cast<std::size_t>(v.at(o, position, i))];
                    idx[at] = static_cast<double>(position);
                }, order);
            }
        }
    }

    // A selection rounds nothing: the same-precision reference is the golden itself.
    void same_precision(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const override {
        golden(p, in, out);
    }

    // Bytes: x read once, y and idx written once. Vector work: every element of x meets at
    // least one comparison against the running k-th value of its slice (a selection cannot
    // skip an element), and the k kept values of a slice are sorted (k log2 k comparisons).
    // Formula-literal count under the cann-bench cost table: 1 comparison per input element
    // plus log2(k) per output element.
    WorkModel work(const Problem& p) const override {
        const auto& x = p.input("x").tensors.at(0);
        const auto& y = p.outputs.at(0).tensors.at(0);
        const Checked c = check(p, x.shape);
        const double n = static_cast<double>(x.numel());
        const double kept = static_cast<double>(y.numel());
        WorkModel w;
        w.bytes_read = static_cast<double>(x.bytes());
        w.bytes_written = static_cast<double>(y.bytes()) + static_cast<double>(p.outputs.at(1).tensors.at(0).bytes());
        w.add_vector(OpClass::cmp, x.dtype, n + kept * std::log2(std::max<double>(2, static_cast<double>(c.k))));
        w.add_vector_io(x.dtype, n + kept);
        // cann-bench (docs/hap.md): a compare per input element, log2 k per kept element.
        add_formula(w, x.dtype, FormulaMath::compare, n, {{OpClass::cmp, 1}});
        add_formula_terms(w, x.dtype, FormulaMath::compare, kept,
                          {{OpClass::cmp, std::log2(std::max<double>(2, static_cast<double>(c.k)))}});
        // A long slice splits into pieces whose candidates merge, so elements are the items.
        w.parallel_items = std::max(1.0, n);
        w.innermost = x.shape.back();
        return w;
    }

    // (dim kind, largest) pairs cycled over the batch; k from a ladder (1 to 2000) cut to the
    // slice, and one case in seven a full sort (k = the whole dim).
    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        enum DimKind { last, first, negative_outer, middle };
        static const std::vector<std::pair<DimKind, bool>> plans = {
            {last, true}, {first, false}, {negative_outer, true}, {middle, false},
            {last, false}, {first, true}, {negative_outer, false}, {middle, true}};
        const auto [kind, largest] = sampler.cycle(plans);
        const int rank = kind == last || kind == first ? sampler.pick_rank(1, 5) : sampler.pick_rank(2, 5);
        std::int64_t dim = -1;
        switch (kind) {
            case last: dim = -1; break;
            case first: dim = 0; break;
            case negative_outer: dim = -sampler.rng().uniform_int(2, rank); break;
            case middle: dim = sampler.rng().uniform_int(1, rank - 1); break;
        }
        Shape shape = sampler.shape(budgeted_elements(sampler, 1.5), rank, d.dtype, d.aligned);
        const auto axis = static_cast<std::size_t>(dim < 0 ? rank + dim : dim);
        std::int64_t& along = shape[axis];
        if (along < 8 && rank > 1) {
            // Give the selection a choice: the largest other outer dim hands over a factor.
            std::size_t donor = axis;
            for (std::size_t t = 0; t + 1 < shape.size(); ++t)
                if (t != axis && (donor == axis || shape[t] > shape[donor])) donor = t;
            if (donor != axis && shape[donor] >= 16) {
                const std::int64_t factor = std::min<std::int64_t>(8, shape[donor] / 2);
                along *= factor;
                shape[donor] /= factor;
            }
        }
        std::int64_t k = sampler.pick(std::vector<std::int64_t>{1, 7, 16, 64, 100, 256, 500, 2000});
        if (d.index % 7 == 3 && along <= 5000) k = along;  // a full sort of a moderate slice
        k = std::clamp<std::int64_t>(k, 1, along);
        out.inputs.at(0).shapes = {shape};
        out.attrs = {{"k", AttrValue::of_int(k)}, {"dim", AttrValue::of_int(dim)}, {"largest", AttrValue::of_bool(largest)}};
    }

    ValueRange boundary_range(DType dtype) const override {
        if (dtype == DType::i64) return {-kExactIntegerLimit, kExactIntegerLimit};
        return Operator::boundary_range(dtype);
    }

    // 1. int64 values are clamped to +-2^53, where the fp64 golden tells every value apart.
    // 2. -0.0 becomes +0.0: y is compared bit for bit and a tie between the two zeros would
    //    let two correct kernels differ in bits.
    // 3. Ties: wide ranges rarely repeat a value, so every third line gets a ranked value
    //    copied over another random element of the line, alternately the k-th (a tie at the
    //    selection boundary: which of the two idx names is free) and the (k-1)-th (two tied
    //    values inside the top k: idx must name both, each once). The selected values stay
    //    determined either way.
    void fix_inputs(const Problem& p, std::vector<Arg>& inputs, Rng& rng) const override {
        Tensor& x = inputs.at(0).tensors.at(0);
        if (x.spec.dtype == DType::i64) {
            auto* values = static_cast<std::int64_t*>(x.data());
            constexpr auto limit = static_cast<std::int64_t>(kExactIntegerLimit);
            for (std::int64_t i = 0; i < x.numel(); ++i) values[i] = std::clamp(values[i], -limit, limit);
        }
        if (is_floating(x.spec.dtype))
            for (std::int64_t i = 0; i < x.numel(); ++i) {
                const double v = x.get(static_cast<std::size_t>(i));
                if (v == 0 && std::signbit(v)) x.set(static_cast<std::size_t>(i), 0.0);
            }
        const Checked c = check(p, x.spec.shape);
        const AxisView v = axis_view(x.spec.shape, c.axis);
        if (v.size < 2) return;
        const bool largest = largest_of(p);
        const auto load = [&](std::int64_t at) { return x.get(static_cast<std::size_t>(at)); };
        std::vector<std::pair<std::uint64_t, std::int64_t>> order;
        for (std::int64_t line = 0; line < v.lines(); line += 3) {
            const std::int64_t o = line / v.inner, i = line % v.inner;
            const std::int64_t rank = line % 6 == 0 ? c.k - 1 : std::max<std::int64_t>(0, c.k - 2);
            std::int64_t kth = 0;
            top_k_of_line(v, o, i, c.k, largest, load, [&](std::int64_t r, std::int64_t position) {
                if (r == rank) kth = position;
            }, order);
            const std::int64_t other = rng.uniform_int(0, v.size - 2);
            const std::int64_t target = other >= kth ? other + 1 : other;
            copy_element(x.data(), x.spec.dtype, v.at(o, kth, i), v.at(o, target, i));
        }
    }
};

HB_REGISTER_OPERATOR(TopKOp)

}  // namespace hb
