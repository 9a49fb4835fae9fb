// cummin(input, dim): running minimum along dim and the int64 index where it was taken, as
// torch.cummin on the CPU (aten's cummax_cummin_helper with less_equal): element k replaces
// the running minimum when it is NaN, or when the running minimum is not NaN and
// x[k] <= minimum. So on ties the index moves to the LAST occurrence, a NaN propagates to
// the end of the line, and each later NaN moves the index to itself. Both outputs have the
// input's shape; values keep the input dtype, indices are int64.
#include <cmath>

#include "core/error.hpp"
#include "ops/axis_view.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

bool replaces(double candidate, double minimum) {
    return std::isnan(candidate) || (!std::isnan(minimum) && candidate <= minimum);
}

// Scans line (o, i); `emit(k, value, index)` receives the running state after element k.
template <typename Load, typename Emit>
void scan_line(const AxisView& v, std::int64_t o, std::int64_t i, Load load, Emit emit) {
    double minimum = 0;
    std::int64_t index = 0;
    for (std::int64_t k = 0; k < v.size; ++k) {
        const double x = load(v.at(o, k, i));
        if (k == 0 || replaces(x, minimum)) {
            minimum = x;
            index = k;
        }
        emit(k, minimum, index);
    }
}

}  // namespace

class CumminOp final : public Operator {
  public:
    std::string name() const override { return "cummin"; }
    int level() const override { return 2; }
    std::string baseline_description() const override {
        return "an OpenMP-threaded C++ scan, all dtypes: oneDNN has no scan primitive; lines along dim "
               "spread over threads, vectorized across the inner dimension, a few long lines scanned in "
               "chunks with the carries of earlier chunks combined first (two passes)";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const auto& x = p.input("input").tensors.at(0);
        // A 0-d input scans one element (torch accepts dim 0 and -1 for it).
        normalize_dim(p.attr_int("dim"), std::max<std::size_t>(1, x.shape.size()),
                      p.context() + "input of shape " + shape_to_string(x.shape));
        ArgSpec values{"values", false, true, {TensorSpec{x.dtype, x.shape}}};
        ArgSpec indices{"indices", false, true, {TensorSpec{DType::i64, x.shape}}};
        return {values, indices};
    }

    void golden(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const override {
        const auto& x = in[0].one();
        const int axis = normalize_dim(p.attr_int("dim"), std::max<std::size_t>(1, x.spec.shape.size()), name());
        const AxisView v = axis_view(x.spec.shape, axis);
        auto& values = out[0].one().v;
        auto& indices = out[1].one().v;
        const auto load = [&](std::int64_t at) { return x.v[static_cast<std::size_t>(at)]; };
#pragma omp parallel for schedule(static) if (v.lines() >= 64)
        for (std::int64_t line = 0; line < v.lines(); ++line) {
            const std::int64_t o = line / v.inner, i = line % v.inner;
            scan_line(v, o, i, load, [&](std::int64_t k, double minimum, std::int64_t index) {
                const auto at = static_cast<std::size_t>(v.at(o, k, i));
                values[at] = minimum;
                indices[at] = static_cast<double>(index);
            });
        }
    }

    // A scan that only selects rounds nothing: the same-precision reference is the golden
    // (an fp32 copy of int32 values would even merge distinct values into ties).
    void same_precision(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const override {
        golden(p, in, out);
    }

    WorkModel work(const Problem& p) const override {
        const auto& x = p.input("input").tensors.at(0);
        const double n = static_cast<double>(x.numel());
        WorkModel w;
        w.bytes_read = static_cast<double>(x.bytes());
        w.bytes_written = static_cast<double>(p.outputs.at(0).tensors.at(0).bytes() + p.outputs.at(1).tensors.at(0).bytes());
        // Per element: one compare (<=, with NaN caught by an unordered compare), a blend of
        // the running value and one of its index (int32 lanes suffice below 2^31).
        w.add_vector(OpClass::cmp, x.dtype, n);
        w.add_vector(OpClass::select, x.dtype, n);
        w.add_vector(OpClass::select, DType::i32, n);
        // Values enter and leave vector compute in the input dtype (bf16 converts both ways).
        w.add_vector_io(x.dtype, 2 * n);
        // cann-bench (docs/hap.md): a running min along dim is a scan: ceil(log2 L) compares per
        // element for a line of length L; the indices are not counted (no output is).
        const int axis = normalize_dim(p.attr_int("dim"), std::max<std::size_t>(1, x.shape.size()), name());
        const double line = x.shape.empty() ? 1.0 : static_cast<double>(x.shape[static_cast<std::size_t>(axis)]);
        add_formula(w, x.dtype, FormulaMath::compare, n, {{OpClass::cmp, std::ceil(std::log2(std::max(1.0, line)))}});
        // A min-scan is associative: a line splits into chunks scanned independently and fixed
        // up with the carry of the chunks before them, so every element is an item.
        w.parallel_items = n;
        w.innermost = x.shape.empty() ? 1 : x.shape.back();
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        // The last dim, the first, an inner dim by a negative number and a middle dim by a
        // positive one, cycled over the batch.
        enum DimKind { last, first, negative_outer, middle };
        const DimKind kind = sampler.cycle(std::vector<DimKind>{last, first, negative_outer, middle});
        const int rank = kind == last || kind == first ? sampler.pick_rank(1, 5) : sampler.pick_rank(2, 5);
        std::int64_t dim = -1;
        switch (kind) {
            case last: dim = -1; break;
            case first: dim = 0; break;
            case negative_outer: dim = -static_cast<std::int64_t>(sampler.rng().uniform_int(2, rank)); break;
            case middle: dim = sampler.rng().uniform_int(1, rank - 1); break;
        }
        out.inputs.at(0).shapes = {sampler.shape(d.target_elements, rank, d.dtype, d.aligned)};
        out.attrs = {{"dim", AttrValue::of_int(dim)}};
    }

    // Ties decide between a correct kernel and one that keeps the first occurrence, but wide
    // fp32/int ranges almost never repeat a running minimum: every third line gets its
    // minimum copied to a random later position, where the running minimum ties.
    void fix_inputs(const Problem& p, std::vector<Arg>& inputs, Rng& rng) const override {
        Tensor& x = inputs.at(0).tensors.at(0);
        const int axis = normalize_dim(p.attr_int("dim"), std::max<std::size_t>(1, x.spec.shape.size()), name());
        const AxisView v = axis_view(x.spec.shape, axis);
        if (v.size < 2) return;
        // The first position of every third line's final minimum (a NaN line is left as it
        // is), then the draws and copies in line order: lines are disjoint, so this is the
        // line-by-line rule's result, bit for bit (scan_every_third_line says why).
        struct Minimum {
            double value;
            std::int64_t first;
            bool nan;
        };
        const std::vector<Minimum> minima = scan_every_third_line<Minimum>(
            x.data(), x.spec.dtype, v, [](double value) { return Minimum{value, 0, std::isnan(value)}; },
            [](Minimum& m, double value, std::int64_t k) {
                if (m.nan) return;
                m.nan = std::isnan(value);
                if (value < m.value) m.value = value, m.first = k;
            });
        for (std::size_t j = 0; j < minima.size(); ++j) {
            const Minimum& m = minima[j];
            if (m.nan || m.first == v.size - 1) continue;
            const std::int64_t line = 3 * static_cast<std::int64_t>(j);
            const std::int64_t o = line / v.inner, i = line % v.inner;
            const std::int64_t target = rng.uniform_int(m.first + 1, v.size - 1);
            copy_element(x.data(), x.spec.dtype, v.at(o, m.first, i), v.at(o, target, i));
        }
    }
};

HB_REGISTER_OPERATOR(CumminOp)

}  // namespace hb
