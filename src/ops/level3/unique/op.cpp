// unique(x, sorted=true, return_inverse=false, return_counts=false): the distinct values of x
// (flattened), as torch.unique. Equality is by value: +0.0 and -0.0 are one value, -inf and
// +inf two, and every NaN is one value (NaN sorts after +inf; torch leaves NaN unspecified
// and the reference's cases have none, numpy merges them by default). Each distinct value is
// represented by its FIRST occurrence in x (the observed behaviour of CPU torch.unique for a
// merged zero; its bits are what y holds).
//   y: sorted=true ascending; sorted=false in order of first occurrence (tf.unique's order;
//      torch leaves it unspecified). Its length is data-dependent: y is allocated with the
//      capacity numel(x) and the kernel reports the number of distinct values through
//      *written_length; only that prefix is judged (verify/written_length.hpp).
//   inverse (return_inverse): int64 of x's shape (the reference golden's shape; its prose
//      says flattened), the position in y of each element's value.
//   counts (return_counts): int64, capacity numel(x), as many entries as y (same length),
//      the occurrences of each value of y.
// Absent outputs (return_* false) must not be written. Every output is compared bit-exactly.
#include <parallel/algorithm>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "ops/formula_count.hpp"
#include "ops/case_budget.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

bool flag(const Problem& p, const std::string& name, bool fallback) {
    const auto it = p.attrs.find(name);
    return it == p.attrs.end() || it->second.type == AttrType::none ? fallback : it->second.as_bool();
}

// An integer whose order is the order of values under the operator's equality: -0 and +0
// map to one key, every NaN to the largest key (after +inf).
std::uint64_t order_key(double v) {
    if (std::isnan(v)) return ~std::uint64_t{0};
    if (v == 0) v = 0.0;
    const auto bits = std::bit_cast<std::uint64_t>(v);
    return (bits >> 63) ? ~bits : bits | (std::uint64_t{1} << 63);
}

// The distinct values of `x`: each value's group in the chosen order, as the first position
// it occurs at and its count; group_of[i] is element i's position in y.
struct Groups {
    std::vector<std::int64_t> first, count, group_of;
};

Groups group_values(const std::vector<double>& x, bool sorted) {
    const auto n = static_cast<std::int64_t>(x.size());
    std::vector<std::pair<std::uint64_t, std::int64_t>> keyed(x.size());
#pragma omp parallel for schedule(static) if (n >= 65536)
    for (std::int64_t i = 0; i < n; ++i) keyed[static_cast<std::size_t>(i)] = {order_key(x[static_cast<std::size_t>(i)]), i};
    // By value, then by position: a group starts at its first occurrence. Keys with positions
    // are distinct, so the parallel sort's result is the one order.
    __gnu_parallel::sort(keyed.begin(), keyed.end());
    Groups g;
    g.group_of.resize(x.size());
    std::vector<std::int64_t> sorted_group(x.size());
    for (std::size_t k = 0; k < keyed.size(); ++k) {
        if (k == 0 || keyed[k].first != keyed[k - 1].first) {
            g.first.push_back(keyed[k].second);
            g.count.push_back(0);
        }
        ++g.count.back();
        sorted_group[static_cast<std::size_t>(keyed[k].second)] = static_cast<std::int64_t>(g.first.size()) - 1;
    }
    if (sorted) {
        g.group_of = std::move(sorted_group);
        return g;
    }
    // Order of first occurrence: walking x in order meets each group first at its first
    // position, which ranks the groups.
    std::vector<std::int64_t> rank_of(g.first.size(), -1);
    Groups out;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const auto group = static_cast<std::size_t>(sorted_group[i]);
        if (rank_of[group] >= 0) continue;
        rank_of[group] = static_cast<std::int64_t>(out.first.size());
        out.first.push_back(g.first[group]);
        out.count.push_back(g.count[group]);
    }
    out.group_of.resize(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) out.group_of[i] = rank_of[static_cast<std::size_t>(sorted_group[i])];
    return out;
}

}  // namespace

class UniqueOp final : public Operator {
  public:
    std::string name() const override { return "unique"; }
    int level() const override { return 3; }
    std::string baseline_description() const override {
        return "threaded C++ as PyTorch's CPU unique works: (value, position) pairs sorted by libstdc++'s parallel "
               "sort on the OpenMP threads, equal runs collapsed to their first occurrence, inverse and counts from "
               "the runs (sorted=false re-ranks the runs by first position): oneDNN has no sort or unique primitive";
    }

    // One output per proto output: hapbench's proto has y, inverse and counts; the
    // reference's (whose cases `hapbench hap` also reads) has y and inverse.
    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const auto& x = p.input("x").tensors.at(0);
        if (x.shape.size() > 8) throw Error(p.context() + "x has rank " + std::to_string(x.shape.size()) + "; unique supports up to 8");
        const std::int64_t n = x.numel();
        if (n < 1) throw Error(p.context() + "x of shape " + shape_to_string(x.shape) + " is empty");
        std::vector<std::string> names = {"y", "inverse", "counts"};
        if (p.proto) {
            names.clear();
            for (const auto& def : p.proto->outputs) names.push_back(def.name);
        }
        std::vector<ArgSpec> outputs;
        for (const auto& name : names) {
            ArgSpec a;
            a.name = name;
            if (name == "y") {
                a.tensors = {TensorSpec{x.dtype, {n}}};
                a.variable_length = true;
            } else if (name == "inverse") {
                a.present = flag(p, "return_inverse", false);
                if (a.present) a.tensors = {TensorSpec{DType::i64, x.shape}};
            } else if (name == "counts") {
                a.present = flag(p, "return_counts", false);
                if (a.present) a.tensors = {TensorSpec{DType::i64, {n}}};
                a.variable_length = true;
            } else {
                throw Error(p.context() + "unique has no output named '" + name + "' (it has y, inverse, counts)");
            }
            outputs.push_back(std::move(a));
        }
        return outputs;
    }

    void golden(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const override {
        const auto& x = in[0].one().v;
        const Groups g = group_values(x, flag(p, "sorted", true));
        const auto distinct = static_cast<std::int64_t>(g.first.size());
        for (auto& arg : out) {
            if (!arg.present) continue;
            auto& t = arg.one();
            if (arg.name == "y") {
                for (std::int64_t r = 0; r < distinct; ++r) t.v[static_cast<std::size_t>(r)] = x[static_cast<std::size_t>(g.first[static_cast<std::size_t>(r)])];
                t.written_length = distinct;
            } else if (arg.name == "counts") {
                for (std::int64_t r = 0; r < distinct; ++r) t.v[static_cast<std::size_t>(r)] = static_cast<double>(g.count[static_cast<std::size_t>(r)]);
                t.written_length = distinct;
            } else if (arg.name == "inverse") {
                for (std::size_t i = 0; i < x.size(); ++i) t.v[i] = static_cast<double>(g.group_of[i]);
            }
        }
    }

    // Selecting and counting round nothing: the same-precision reference is the golden.
    void same_precision(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const override {
        golden(p, in, out);
    }

    // Bytes: x read once; inverse written whole; y and counts hold as many entries as x has
    // distinct values, known only from the data, so the bound charges one entry each (T_HW
    // stays a lower bound). Vector work: every element is compared at least once to place it
    // among the distinct values (a sort adds log2 n comparisons, a hash or a 256-bin count for
    // int8/uint8 does not). Formula-literal count under the cann-bench cost table: 1
    // comparison per input element.
    WorkModel work(const Problem& p) const override {
        const auto& x = p.input("x").tensors.at(0);
        WorkModel w;
        w.bytes_read = static_cast<double>(x.bytes());
        for (const auto& out : p.outputs) {
            if (!out.present || out.tensors.empty()) continue;
            const auto& t = out.tensors[0];
            w.bytes_written += out.variable_length ? static_cast<double>(dtype_size(t.dtype)) : static_cast<double>(t.bytes());
        }
        const double n = static_cast<double>(x.numel());
        w.add_vector(OpClass::cmp, x.dtype, n);
        w.add_vector_io(x.dtype, n);
        // cann-bench (docs/hap.md): a compare per input element.
        add_formula(w, x.dtype, FormulaMath::compare, n, {{OpClass::cmp, 1}});
        w.parallel_items = std::max(1.0, n);
        w.innermost = x.shape.empty() ? 1 : x.shape.back();
        return w;
    }

    // (sorted, return_inverse, return_counts) cycles through all eight combinations.
    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        const int combo = d.index % 8;
        const int rank = sampler.pick_rank(1, 5);
        out.inputs.at(0).shapes = {sampler.shape(budgeted_elements(sampler, 1.2), rank, d.dtype, d.aligned)};
        out.attrs = {{"sorted", AttrValue::of_bool((combo & 1) == 0)},
                     {"return_inverse", AttrValue::of_bool((combo & 2) != 0)},
                     {"return_counts", AttrValue::of_bool((combo & 4) != 0)}};
    }

    // Floating inputs get one -0.0 and one +0.0 at two random positions, in either order: the
    // merged zero must keep the bits of whichever comes first.
    void fix_inputs(const Problem&, std::vector<Arg>& inputs, Rng& rng) const override {
        Tensor& x = inputs.at(0).tensors.at(0);
        if (!is_floating(x.spec.dtype) || x.numel() < 2) return;
        const std::int64_t a = rng.uniform_int(0, x.numel() - 2);
        const std::int64_t b = rng.uniform_int(a + 1, x.numel() - 1);
        const bool negative_first = rng.uniform01() < 0.5;
        x.set(static_cast<std::size_t>(a), negative_first ? -0.0 : 0.0);
        x.set(static_cast<std::size_t>(b), negative_first ? 0.0 : -0.0);
    }
};

HB_REGISTER_OPERATOR(UniqueOp)

}  // namespace hb
