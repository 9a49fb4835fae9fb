// transpose(x, perm): torch.permute(x, perm).contiguous(). y.shape[t] = x.shape[perm[t]] and
//   y[j_0, ..., j_{r-1}] = x[i] with i[perm[t]] = j_t
// (the permute definition; the reference proto's formula writes the permutation on the other
// side, its golden follows permute). Pure data movement: every value is copied bit for bit,
// so the outputs are compared bit-exactly (precision_thresholds 0) and the work model holds
// bytes only. perm entries may be negative (counted from the end, as torch.permute).
#include <algorithm>
#include <numeric>
#include <string>

#include "core/error.hpp"
#include "ops/formula_count.hpp"
#include "ops/case_budget.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

// perm normalized to [0, rank), checked to be a permutation.
std::vector<int> checked_perm(const Problem& p, const Shape& x_shape) {
    const auto& perm = p.attr("perm");
    if (perm.type != AttrType::int_list)
        throw Error(p.context() + "perm must be a list of ints (a permutation of the " + std::to_string(x_shape.size()) +
                    " dimensions of x), got " + perm.to_string());
    const std::size_t rank = x_shape.size();
    if (perm.ints.size() != rank)
        throw Error(p.context() + "perm " + perm.to_string() + " has " + std::to_string(perm.ints.size()) +
                    " entries, but x of shape " + shape_to_string(x_shape) + " has " + std::to_string(rank) + " dimensions");
    std::vector<int> out;
    std::vector<char> seen(rank, 0);
    for (const auto d : perm.ints) {
        const int axis = normalize_dim(d, rank, p.context() + "perm " + perm.to_string() + " for x of shape " + shape_to_string(x_shape));
        if (seen[static_cast<std::size_t>(axis)]++)
            throw Error(p.context() + "perm " + perm.to_string() + " names dimension " + std::to_string(axis) +
                        " twice: it must be a permutation of 0.." + std::to_string(rank - 1));
        out.push_back(axis);
    }
    return out;
}

}  // namespace

class TransposeOp final : public Operator {
  public:
    std::string name() const override { return "transpose"; }
    int level() const override { return 3; }
    std::string baseline_description() const override {
        return "oneDNN reorder (jit:uni where it applies) from x viewed with permuted strides to a plain y, called "
               "as a framework's oneDNN backend would; int16 and int64 (no oneDNN data type) move as pairs of "
               "u8 and s32 lanes of the same bytes, so every bit is copied unchanged";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const auto& x = p.input("x").tensors.at(0);
        if (x.shape.size() > 8)
            throw Error(p.context() + "x has rank " + std::to_string(x.shape.size()) + "; transpose supports up to 8");
        const auto perm = checked_perm(p, x.shape);
        Shape shape;
        for (int d : perm) shape.push_back(x.shape[static_cast<std::size_t>(d)]);
        return {ArgSpec{"y", false, true, {TensorSpec{x.dtype, shape}}}};
    }

    void golden(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const override {
        const auto& x = in[0].one();
        const auto perm = checked_perm(p, x.spec.shape);
        auto& y = out[0].one();
        const std::size_t rank = perm.size();
        const Shape x_strides = contiguous_strides(x.spec.shape);
        // Strides of x in y's dimension order: walking y in row-major order reads x there.
        std::vector<std::int64_t> source_strides(rank);
        for (std::size_t t = 0; t < rank; ++t) source_strides[t] = x_strides[static_cast<std::size_t>(perm[t])];
        const Shape& y_shape = y.spec.shape;
        const std::int64_t n = y.spec.numel();
#pragma omp parallel for schedule(static) if (n >= 65536)
        for (std::int64_t j = 0; j < n; ++j) {
            std::int64_t rest = j, source = 0;
            for (std::size_t t = rank; t-- > 0;) {
                source += (rest % y_shape[t]) * source_strides[t];
                rest /= y_shape[t];
            }
            y.v[static_cast<std::size_t>(j)] = x.v[static_cast<std::size_t>(source)];
        }
    }

    // A copy rounds nothing: the same-precision reference is the golden itself.
    void same_precision(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const override {
        golden(p, in, out);
    }

    // Bytes only: x read once, y written once. No arithmetic is compulsory (formula-literal
    // count under the cann-bench cost table: 0 operations per output element); the index
    // arithmetic of a strided walk is overhead a blocked kernel amortizes.
    WorkModel work(const Problem& p) const override {
        const auto& x = p.input("x").tensors.at(0);
        const auto& y = p.outputs.at(0).tensors.at(0);
        WorkModel w;
        w.bytes_read = static_cast<double>(x.bytes());
        w.bytes_written = static_cast<double>(y.bytes());
        w.parallel_items = std::max<double>(1, static_cast<double>(y.numel()));
        w.innermost = y.shape.empty() ? 1 : y.shape.back();
        // cann-bench (docs/hap.md): one element moved per output, as gather counts it.
        add_formula(w, x.dtype, FormulaMath::compare, static_cast<double>(y.numel()), {{OpClass::select, 1}});
        return w;
    }

    // Permutation classes, cycled: the last two dims swapped (a matrix transpose per batch),
    // outer dims swapped with the innermost kept (BSHD -> BHSD), the innermost moved outward
    // (NHWC -> NCHW), an outer dim moved innermost (NCHW -> NHWC), full reversal, a random
    // permutation, and the identity (a plain copy).
    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        enum Kind { swap_last_two, outer_swap, last_outward, outer_inward, reversal, random_perm, identity };
        const Kind kind = sampler.cycle(std::vector<Kind>{swap_last_two, outer_swap, last_outward, outer_inward, reversal,
                                                          random_perm, identity});
        Rng& rng = sampler.rng();
        int rank = 2;
        switch (kind) {
            case swap_last_two: case reversal: case last_outward: case outer_inward: rank = sampler.pick_rank(2, 5); break;
            case outer_swap: case random_perm: rank = sampler.pick_rank(3, 5); break;
            case identity: rank = sampler.pick_rank(1, 4); break;
        }
        std::vector<std::int64_t> perm(static_cast<std::size_t>(rank));
        std::iota(perm.begin(), perm.end(), 0);
        const auto r = static_cast<std::size_t>(rank);
        switch (kind) {
            case swap_last_two: std::swap(perm[r - 1], perm[r - 2]); break;
            case outer_swap: {
                const auto a = static_cast<std::size_t>(rng.uniform_int(0, rank - 3));
                const auto b = static_cast<std::size_t>(rng.uniform_int(static_cast<std::int64_t>(a) + 1, rank - 2));
                std::swap(perm[a], perm[b]);
                break;
            }
            case last_outward: {  // [0, 3, 1, 2]: the last dim moves to position `to`
                const auto to = static_cast<std::size_t>(rng.uniform_int(0, rank - 2));
                std::rotate(perm.begin() + static_cast<std::ptrdiff_t>(to), perm.end() - 1, perm.end());
                break;
            }
            case outer_inward: {  // [0, 2, 3, 1]: dim `from` moves to the end
                const auto from = static_cast<std::size_t>(rng.uniform_int(0, rank - 2));
                std::rotate(perm.begin() + static_cast<std::ptrdiff_t>(from), perm.begin() + static_cast<std::ptrdiff_t>(from) + 1,
                            perm.end());
                break;
            }
            case reversal: std::reverse(perm.begin(), perm.end()); break;
            case random_perm:
                do {
                    for (std::size_t i = r; i > 1; --i)
                        std::swap(perm[i - 1], perm[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(i) - 1))]);
                } while (std::is_sorted(perm.begin(), perm.end()));
                break;
            case identity: break;
        }
        // Every third permutation is written with negative dims (torch.permute accepts them).
        if (d.index % 3 == 2)
            for (auto& v : perm) v -= rank;
        out.inputs.at(0).shapes = {sampler.shape(budgeted_elements(sampler, 2.0), rank, d.dtype, d.aligned)};
        AttrValue perm_attr;
        perm_attr.type = AttrType::int_list;
        perm_attr.ints = perm;
        out.attrs = {{"perm", perm_attr}};
    }
};

HB_REGISTER_OPERATOR(TransposeOp)

}  // namespace hb
