// gather(x, index, dim=0): torch.gather. index has x's rank and, along every dimension but
// dim, at most x's size; y has index's shape and x's dtype, and
//   y[i_0, ..., i_{n-1}] = x[i_0, ..., index[i_0, ..., i_{n-1}], ..., i_{n-1}]  (at position dim).
// Index values must lie in [0, x.shape[dim]) (torch rejects negative ones too); fix_inputs
// replaces generated values outside that range by uniform draws inside it.
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "ops/axis_view.hpp"
#include "ops/formula_count.hpp"
#include "ops/index_inputs.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

// Calls visit(j, base) for every element j of the index (row-major), where base is the
// offset in x of that element's coordinates with the coordinate along `axis` set to 0.
template <typename Visit>
void for_each_index_element(const Shape& index_shape, const Shape& x_shape, int axis, Visit visit) {
    const auto x_strides = row_major_strides(x_shape);
    const std::int64_t n = numel(index_shape);
    const std::size_t rank = index_shape.size();
#pragma omp parallel for schedule(static) if (n >= 65536)
    for (std::int64_t j = 0; j < n; ++j) {
        std::int64_t rest = j, base = 0;
        for (std::size_t d = rank; d-- > 0;) {
            const std::int64_t coordinate = rest % index_shape[d];
            rest /= index_shape[d];
            if (static_cast<int>(d) != axis) base += coordinate * x_strides[d];
        }
        visit(j, base);
    }
}

// Expected bytes of x a gather must fetch with uniformly drawn indices. Memory moves whole
// sectors (32 bytes: Ascend GM/UB blocks, GPU sectors; CPU lines are larger), so an element
// costs its sector, and a sector is read once if any output element selects inside it. Only
// the part of x the index can reach counts (index.shape[d] <= x.shape[d] for d != dim).
double gathered_x_bytes(const Problem& p) {
    constexpr double sector_bytes = 32;
    const auto& x = p.input("x").tensors.at(0);
    const auto& index = p.input("index").tensors.at(0);
    if (index.numel() == 0 || x.numel() == 0) return 0;
    const int axis = normalize_dim(p.attr_int("dim"), std::max<std::size_t>(1, x.shape.size()), p.context());
    const double size = static_cast<double>(dtype_size(x.dtype));
    double outer = 1, inner = 1;
    for (int d = 0; d < static_cast<int>(index.shape.size()); ++d) {
        if (d < axis) outer *= static_cast<double>(index.shape[d]);
        if (d > axis) inner *= static_cast<double>(index.shape[d]);
    }
    const double along = x.shape.empty() ? 1 : static_cast<double>(x.shape[axis]);
    const double draws = index.shape.empty() ? 1 : static_cast<double>(index.shape[axis]);
    const double per_sector = std::max(1.0, std::floor(sector_bytes / size));
    if (inner == 1) {
        // Gathering along a contiguous line: each draw lands in one of the line's sectors.
        const double sectors = std::ceil(along / per_sector);
        const double touched = sectors * (1 - std::pow(1 - 1 / sectors, draws));
        return outer * std::min(along * size, touched * sector_bytes);
    }
    // A sector holds `width` neighbouring columns of one position along dim; it is skipped
    // only if none of the draws of any of its columns selects that position.
    const double width = std::min(per_sector, inner);
    const double untouched = std::pow(1 - 1 / along, draws * width);
    return outer * along * inner * size * (1 - untouched);
}

}  // namespace

class GatherOp final : public Operator {
  public:
    std::string name() const override { return "gather"; }
    int level() const override { return 2; }
    std::string baseline_description() const override {
        return "an OpenMP-threaded C++ gather, all dtypes: oneDNN has no gather primitive; index rows "
               "(all dims but the last) spread over threads, each row a contiguous loop";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const auto& x = p.input("x").tensors.at(0);
        const auto& index = p.input("index").tensors.at(0);
        if (!is_integer(index.dtype) || index.dtype == DType::boolean || index.dtype == DType::u8)
            throw Error(p.context() + "index has dtype " + std::string(dtype_name(index.dtype)) +
                        "; it must be int8, int16, int32 or int64");
        if (index.shape.size() != x.shape.size())
            throw Error(p.context() + "index has rank " + std::to_string(index.shape.size()) + " (shape " +
                        shape_to_string(index.shape) + ") but x has rank " + std::to_string(x.shape.size()) +
                        "; torch.gather needs equal ranks");
        const int axis = normalize_dim(p.attr_int("dim"), std::max<std::size_t>(1, x.shape.size()),
                                       p.context() + "x of shape " + shape_to_string(x.shape));
        for (std::size_t d = 0; d < x.shape.size(); ++d)
            if (static_cast<int>(d) != axis && index.shape[d] > x.shape[d])
                throw Error(p.context() + "index shape " + shape_to_string(index.shape) + " exceeds x shape " +
                            shape_to_string(x.shape) + " in dimension " + std::to_string(d) +
                            "; only dimension dim = " + std::to_string(axis) + " may be larger");
        if (!x.shape.empty() && x.shape[static_cast<std::size_t>(axis)] == 0 && index.numel() > 0)
            throw Error(p.context() + "x has size 0 along dim " + std::to_string(axis) + "; there is nothing to gather");
        ArgSpec y;
        y.name = "y";
        y.tensors.push_back(TensorSpec{x.dtype, index.shape});
        return {y};
    }

    void golden(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const override {
        const auto& x = in[0].one();
        const auto& index = in[1].one();
        const int axis = normalize_dim(p.attr_int("dim"), std::max<std::size_t>(1, x.spec.shape.size()), name());
        const std::int64_t axis_stride = x.spec.shape.empty() ? 1 : row_major_strides(x.spec.shape)[static_cast<std::size_t>(axis)];
        auto& y = out[0].one().v;
        for_each_index_element(index.spec.shape, x.spec.shape, axis, [&](std::int64_t j, std::int64_t base) {
            const auto k = static_cast<std::int64_t>(index.v[static_cast<std::size_t>(j)]);
            y[static_cast<std::size_t>(j)] = x.v[static_cast<std::size_t>(base + k * axis_stride)];
        });
    }

    // A gather copies elements: the same-precision reference is the golden.
    void same_precision(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const override {
        golden(p, in, out);
    }

    WorkModel work(const Problem& p) const override {
        const auto& index = p.input("index").tensors.at(0);
        const auto& y = p.outputs.at(0).tensors.at(0);
        const double n = static_cast<double>(y.numel());
        WorkModel w;
        w.bytes_read = static_cast<double>(index.bytes()) + gathered_x_bytes(p);
        w.bytes_written = static_cast<double>(y.bytes());
        // One address computation (index * stride + base) per element; no arithmetic on values.
        w.add_vector(OpClass::fma, DType::i64, n);
        // cann-bench (docs/hap.md): one element moved by index per output element.
        add_formula(w, p.input("x").tensors.at(0).dtype, FormulaMath::compare, n, {{OpClass::select, 1}});
        w.parallel_items = n;
        w.innermost = index.shape.empty() ? 1 : index.shape.back();
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        enum DimKind { first, last, negative_outer, middle };
        const DimKind kind = sampler.cycle(std::vector<DimKind>{first, last, negative_outer, middle});
        const int rank = kind == last || kind == first ? sampler.pick_rank(1, 4) : sampler.pick_rank(2, 4);
        std::int64_t dim = 0;
        switch (kind) {
            case first: dim = 0; break;
            case last: dim = -1; break;
            case negative_outer: dim = -static_cast<std::int64_t>(sampler.rng().uniform_int(2, rank)); break;
            case middle: dim = sampler.rng().uniform_int(1, rank - 1); break;
        }
        const int axis = dim < 0 ? rank + static_cast<int>(dim) : static_cast<int>(dim);
        // The narrower dtype sets the alignment unit, so that an aligned case is aligned for
        // both tensors. int8 indices only where the size along dim fits them (decided below).
        DType index_dtype = sampler.pick(std::vector<DType>{DType::i32, DType::i64, DType::i32, DType::i64, DType::i8});
        const DType narrower = dtype_size(index_dtype) < dtype_size(d.dtype) ? index_dtype : d.dtype;
        const Shape x_shape = sampler.shape(std::max<std::int64_t>(1, d.target_elements * 3 / 5), rank, narrower, d.aligned);
        Rng& rng = sampler.rng();
        Shape index_shape = x_shape;
        // Along dim: a quarter of x's size up to one and a half times it (indices repeat).
        const double ratio = sampler.pick(std::vector<double>{0.25, 0.5, 1.0, 1.5});
        auto& along = index_shape[static_cast<std::size_t>(axis)];
        along = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(static_cast<double>(along) * ratio)));
        const std::int64_t align_unit = 512 / static_cast<std::int64_t>(dtype_size(narrower));
        if (axis == rank - 1 && d.aligned) along = std::max(align_unit, along / align_unit * align_unit);
        if (axis == rank - 1 && !d.aligned && along * static_cast<std::int64_t>(dtype_size(narrower)) % 512 == 0) along += 1;
        // Half the cases shrink one other dimension (torch allows index smaller than x
        // there); an aligned case keeps the innermost one.
        if (rank >= 2 && rng.uniform01() < 0.5) {
            std::vector<int> others;
            for (int k = 0; k < rank; ++k)
                if (k != axis && x_shape[static_cast<std::size_t>(k)] > 1 && !(d.aligned && k == rank - 1)) others.push_back(k);
            if (!others.empty()) {
                auto& s = index_shape[static_cast<std::size_t>(sampler.pick(others))];
                s = rng.uniform_int(1, s - 1);
            }
        }
        const std::int64_t size_along = x_shape[static_cast<std::size_t>(axis)];
        if (index_dtype == DType::i8 && size_along > 128) index_dtype = DType::i32;
        out.inputs.at(0).shapes = {x_shape};
        out.inputs.at(1).shapes = {index_shape};
        out.inputs.at(1).dtype = index_dtype;
        out.inputs.at(1).range = ValueRange{0, static_cast<double>(size_along - 1)};
        out.attrs = {{"dim", AttrValue::of_int(dim)}};
    }

    // Indices outside [0, x.shape[dim]) (from a hand-written range) are redrawn inside it.
    void fix_inputs(const Problem& p, std::vector<Arg>& inputs, Rng& rng) const override {
        const Tensor& x = inputs.at(0).tensors.at(0);
        Tensor& index = inputs.at(1).tensors.at(0);
        const int axis = normalize_dim(p.attr_int("dim"), std::max<std::size_t>(1, x.spec.shape.size()), name());
        const std::int64_t size = x.spec.shape.empty() ? 1 : x.spec.shape[static_cast<std::size_t>(axis)];
        redraw_out_of_range_indices(index, size, rng);
    }
};

HB_REGISTER_OPERATOR(GatherOp)

}  // namespace hb
