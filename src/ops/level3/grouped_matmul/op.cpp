// grouped_matmul(x, weight, bias?, group_list, split_item, transpose_weight): the
// mixture-of-experts matmul (operators-l3-l4.md). x [M, K] holds the rows of every group one
// after another; group g owns rows [end_{g-1}, end_g) of the cumulative end offsets
// group_list (E of them, non-decreasing, the last M; equal neighbours make an empty group);
// its rows are multiplied by weight[g] ([E, K, N], or [E, N, K] read transposed when
// transpose_weight) and bias[g] ([E, N], optional) is added. y is a list: E tensors [m_g, N]
// for split_item 0 and 1 (an empty group gives a [0, N] tensor), one [M, N] for 2 and 3;
// dtype that of x (float16, bfloat16, float32). bias has x's dtype, or float32 with a
// bfloat16 x.
// The golden is the reference's oracle (full fp64: every product and the sum through
// OpenBLAS dgemm). The same-precision reference is its plain golden: operands widened to
// fp32, an fp32 product (OpenBLAS sgemm), the bias added in fp32, rounded to x's dtype.
// Special values follow IEEE arithmetic: 0 * inf in a product is NaN, as in any matmul.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "ops/dgemm.hpp"
#include "ops/matmul_sampling.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

struct GroupedShape {
    std::int64_t m = 0, k = 0, n = 0, experts = 0;
    bool transpose = false;
    bool single_output = false;          // split_item 2 or 3
    std::vector<std::int64_t> row_begin;  // per group
    std::vector<std::int64_t> rows;       // per group
};

// Every check of the interface, with the message a case author can act on.
GroupedShape grouped_shape(const Problem& p) {
    const std::string where = p.context();
    const TensorSpec& x = p.input("x").tensors.at(0);
    const TensorSpec& w = p.input("weight").tensors.at(0);
    if (x.dtype != DType::f16 && x.dtype != DType::bf16 && x.dtype != DType::f32)
        throw Error(where + "x is " + std::string(dtype_name(x.dtype)) + "; expected float16, bfloat16 or float32");
    if (w.dtype != x.dtype)
        throw Error(where + "weight is " + std::string(dtype_name(w.dtype)) + " but x is " +
                    std::string(dtype_name(x.dtype)) + "; they must match");
    if (x.shape.size() != 2)
        throw Error(where + "x has shape " + shape_to_string(x.shape) + "; expected [M, K]");
    if (w.shape.size() != 3)
        throw Error(where + "weight has shape " + shape_to_string(w.shape) + "; expected [E, K, N] (or [E, N, K] with transpose_weight)");
    GroupedShape s;
    s.m = x.shape[0];
    s.k = x.shape[1];
    s.experts = w.shape[0];
    s.transpose = p.attr_bool("transpose_weight");
    const std::int64_t w_k = s.transpose ? w.shape[2] : w.shape[1];
    s.n = s.transpose ? w.shape[1] : w.shape[2];
    if (s.k < 1 || s.n < 1 || s.m < 1 || s.experts < 1)
        throw Error(where + "x " + shape_to_string(x.shape) + " and weight " + shape_to_string(w.shape) +
                    " need M, K, N and E of at least 1");
    if (w_k != s.k)
        throw Error(where + "weight " + shape_to_string(w.shape) + " has K = " + std::to_string(w_k) + " (transpose_weight " +
                    (s.transpose ? "true: [E, N, K]" : "false: [E, K, N]") + ") but x " + shape_to_string(x.shape) +
                    " has K = " + std::to_string(s.k));
    const auto& bias = p.input("bias");
    if (bias.present) {
        const TensorSpec& b = bias.tensors.at(0);
        if (b.shape != Shape{s.experts, s.n})
            throw Error(where + "bias has shape " + shape_to_string(b.shape) + "; expected [E, N] = " +
                        shape_to_string(Shape{s.experts, s.n}));
        if (b.dtype != x.dtype && !(x.dtype == DType::bf16 && b.dtype == DType::f32))
            throw Error(where + "bias is " + std::string(dtype_name(b.dtype)) + " with x " + std::string(dtype_name(x.dtype)) +
                        "; it must be x's dtype, or float32 with a bfloat16 x");
    }
    const AttrValue& list = p.attr("group_list");
    if (list.type != AttrType::int_list)
        throw Error(where + "group_list must be a list of ints (cumulative end rows of the groups)");
    const auto& ends = list.ints;
    if (static_cast<std::int64_t>(ends.size()) != s.experts)
        throw Error(where + "group_list has " + std::to_string(ends.size()) + " entries but weight has E = " +
                    std::to_string(s.experts) + " experts; it needs one cumulative end row per expert");
    std::int64_t previous = 0;
    for (std::size_t g = 0; g < ends.size(); ++g) {
        if (ends[g] < previous || ends[g] > s.m)
            throw Error(where + "group_list[" + std::to_string(g) + "] = " + std::to_string(ends[g]) +
                        ": the cumulative end rows must be non-decreasing and within [0, M = " + std::to_string(s.m) + "]");
        s.row_begin.push_back(previous);
        s.rows.push_back(ends[g] - previous);
        previous = ends[g];
    }
    if (previous != s.m)
        throw Error(where + "group_list ends at " + std::to_string(previous) + " but x has M = " + std::to_string(s.m) +
                    " rows; the last cumulative end must be M");
    const std::int64_t split = p.attr_int("split_item");
    if (split < 0 || split > 3)
        throw Error(where + "split_item is " + std::to_string(split) + "; expected 0 or 1 (one output per group) or 2 or 3 (one [M, N] output)");
    s.single_output = split >= 2;
    return s;
}

}  // namespace

class GroupedMatmulOp final : public OperatorWithCompute<GroupedMatmulOp> {
  public:
    std::string name() const override { return "grouped_matmul"; }
    int level() const override { return 3; }
    std::string baseline_description() const override {
        return "oneDNN matmul per non-empty group, as a framework's grouped GEMM loops over experts (one primitive per "
               "row count, created once and cached; B read transposed through its strides when transpose_weight; "
               "bias as the matmul's bias): float32 and bfloat16 in their own type (brgemm, AMX or AVX512-BF16 where "
               "present; bf16 into an fp32 destination, since a bf16 one keeps partial sums in bf16), float16 (no "
               "oneDNN 2.6 f16 matmul) and bfloat16 below AVX-512 through fp32 copies of x and the weight";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const GroupedShape s = grouped_shape(p);
        const DType dtype = p.input("x").tensors.at(0).dtype;
        ArgSpec y;
        y.name = "y";
        y.is_list = true;
        if (s.single_output) {
            y.tensors.push_back(TensorSpec{dtype, Shape{s.m, s.n}});
        } else {
            for (std::int64_t rows : s.rows) y.tensors.push_back(TensorSpec{dtype, Shape{rows, s.n}});
        }
        return {y};
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const GroupedShape s = grouped_shape(p);
        const std::vector<T>& x = in[0].one().v;
        const std::vector<T>& w = in[1].one().v;
        const std::vector<T>* bias = in[2].present ? &in[2].one().v : nullptr;
        for (std::int64_t g = 0; g < s.experts; ++g) {
            const std::int64_t rows = s.rows[static_cast<std::size_t>(g)];
            if (rows == 0) continue;
            const std::int64_t first = s.row_begin[static_cast<std::size_t>(g)];
            T* y = s.single_output ? out[0].one().v.data() + first * s.n
                                   : out[0].tensors.at(static_cast<std::size_t>(g)).v.data();
            const T* wg = w.data() + g * s.k * s.n;
            gemm(false, s.transpose, rows, s.n, s.k, x.data() + first * s.k, s.k, wg, s.transpose ? s.k : s.n, y, s.n);
            if (!bias) continue;
            const T* bg = bias->data() + g * s.n;
            for (std::int64_t r = 0; r < rows; ++r)
                for (std::int64_t j = 0; j < s.n; ++j) y[r * s.n + j] += bg[j];
        }
    }

    WorkModel work(const Problem& p) const override {
        const GroupedShape s = grouped_shape(p);
        const TensorSpec& x = p.input("x").tensors.at(0);
        const double size = static_cast<double>(dtype_size(x.dtype));
        const auto& bias = p.input("bias");
        const double bias_size = bias.present ? static_cast<double>(dtype_size(bias.tensors.at(0).dtype)) : 0;
        WorkModel w;
        // Compulsory traffic: x once, the weight and bias of every non-empty group once (an
        // empty group's expert need not be read), y once. Per output element the formula
        // counts K multiplies and K adds, plus one add with bias (2K + 1 under the
        // formula-literal convention of issue 15).
        w.bytes_read = static_cast<double>(x.bytes());
        w.bytes_written = static_cast<double>(s.m * s.n) * size;
        double tiles = 0;
        for (std::int64_t g = 0; g < s.experts; ++g) {
            const std::int64_t rows = s.rows[static_cast<std::size_t>(g)];
            if (rows == 0) continue;
            w.bytes_read += static_cast<double>(s.k * s.n) * size + static_cast<double>(s.n) * bias_size;
            Contraction c;
            c.dtype = x.dtype;
            c.out_dtype = x.dtype;
            c.m = rows;
            c.n = s.n;
            c.k = s.k;
            // Below the cube's 16-row fractal a group is a matrix-vector product that the
            // vector unit can run without padding.
            c.vector_ok = rows < 16;
            w.contractions.push_back(c);
            // 16 x 16 output tiles are the independent items (split-K aside).
            tiles += std::ceil(static_cast<double>(rows) / 16) * std::ceil(static_cast<double>(s.n) / 16);
        }
        if (bias.present) w.add_vector(OpClass::add, DType::f32, static_cast<double>(s.m * s.n));
        if (x.dtype != DType::f32) w.add_vector_io(x.dtype, static_cast<double>(s.m * s.n));
        w.parallel_items = std::max(1.0, tiles);
        w.innermost = s.k;
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        Rng& rng = sampler.rng();
        const double total = static_cast<double>(d.target_elements);
        std::int64_t experts = sampler.cycle(std::vector<std::int64_t>{4, 1, 8, 2, 6, 3, 5, 7});
        const bool transpose = sampler.cycle(std::vector<int>{0, 1, 1, 0, 1}) != 0;
        const std::int64_t split = sampler.cycle(std::vector<std::int64_t>{0, 2, 3, 1});
        // bias: none, x's dtype, or (bfloat16 x) float32.
        const int bias_kind = sampler.cycle(std::vector<int>{1, 0, 2});
        const bool empty_groups = d.index % 6 == 5;
        const auto unit = 512 / static_cast<std::int64_t>(dtype_size(d.dtype));
        // Aligned K and N are multiples of the 512-byte unit, so an expert holds at least
        // unit^2 elements: small aligned cases get fewer experts.
        if (d.aligned) experts = std::clamp<std::int64_t>(static_cast<std::int64_t>(total / (1.3 * unit * unit)), 1, experts);
        if (empty_groups) experts = std::max<std::int64_t>(experts, 3);
        // Rows per group within the MAC cap (M * K * N ~ rows_per_group * E * K * N), and at
        // most about N, so that the weights hold at least half of the elements.
        const double rows_hi =
            std::clamp(std::min(cpu_case_mac_cap / total, std::sqrt(total / static_cast<double>(experts))), 1.0, 512.0);
        const double rows_per_group = log_uniform(sampler, std::min(4.0, rows_hi), rows_hi);
        const double per_expert = total / static_cast<double>(experts);  // ~ K * (rows + N)
        // K near the square root of an expert's elements (within 8x either way): neither
        // extent degenerates to a handful.
        const double k_hi = std::clamp(std::min(4 * std::sqrt(per_expert), per_expert / (rows_per_group + 16)), 16.0, 4096.0);
        const double k_lo = std::clamp(std::sqrt(per_expert) / 8, 16.0, k_hi);
        const std::int64_t k = matmul_extent(sampler, log_uniform(sampler, k_lo, k_hi), 16, 8192, d.aligned, d.dtype);
        const double n_target = std::max(16.0, per_expert / static_cast<double>(k) - rows_per_group);
        const std::int64_t n = matmul_extent(sampler, n_target, 16, 16384, d.aligned, d.dtype);
        // Rounding K and N to the alignment unit can inflate the product: the cap holds anyway.
        const auto m = std::max<std::int64_t>(
            1, std::min<std::int64_t>(std::llround(rows_per_group * static_cast<double>(experts)),
                                      static_cast<std::int64_t>(cpu_case_mac_cap / static_cast<double>(k * n))));

        // Group sizes: random shares of M; two of them empty in every sixth case.
        std::vector<double> share(static_cast<std::size_t>(experts));
        for (auto& v : share) v = rng.uniform(0.3, 1.7);
        if (empty_groups) {
            const auto a = static_cast<std::size_t>(rng.uniform_int(0, experts - 1));
            share[a] = 0;
            share[(a + 1 + static_cast<std::size_t>(rng.uniform_int(0, experts - 2))) % share.size()] = 0;
        }
        const double share_sum = std::accumulate(share.begin(), share.end(), 0.0);
        std::vector<std::int64_t> ends;
        double running = 0;
        for (std::size_t g = 0; g < share.size(); ++g) {
            running += share[g];
            ends.push_back(g + 1 == share.size() ? m : std::llround(static_cast<double>(m) * running / share_sum));
        }

        out.inputs.at(0).shapes = {Shape{m, k}};
        out.inputs.at(1).shapes = {transpose ? Shape{experts, n, k} : Shape{experts, k, n}};
        // The weight's range shrinks until a typical result is small enough that the gate's
        // verdict does not depend on the accumulation order (typical_result_cap). With special
        // values in x the weight is finite: NaN and infinity reach y through x.
        const auto& r = d.range;
        const bool special = std::isnan(r.lo) || std::isinf(r.lo) || std::isinf(r.hi);
        const ValueRange finite_part = special ? ValueRange{-1, 1} : r;
        if (finite_part.lo != finite_part.hi) {
            const ValueMoments moments = uniform_moments(finite_part);
            const double shrink = range_shrink(typical_dot(moments, moments, k), typical_result_cap(d.dtype, k));
            if (shrink < 1 || special) out.inputs.at(1).range = scaled_range(finite_part, shrink);
        }
        CaseInput& bias = out.inputs.at(2);
        bias.present = bias_kind != 0;
        if (bias.present) {
            bias.shapes = {Shape{experts, n}};
            bias.dtype = bias_kind == 2 && d.dtype == DType::bf16 ? DType::f32 : d.dtype;
        }
        AttrValue list;
        list.type = AttrType::int_list;
        list.ints = ends;
        out.attrs = {{"group_list", list},
                     {"split_item", AttrValue::of_int(split)},
                     {"transpose_weight", AttrValue::of_bool(transpose)}};
    }

    // fp16 keeps its own limit on x (the weight's range shrinks, see above).
    // bfloat16 and float32 limits would square to infinity in every fp32 accumulator a
    // kernel keeps (and make NaN from inf - inf where the fp64 golden is finite); +-1e16
    // keeps them finite.
    ValueRange boundary_range(DType dtype) const override {
        return dtype == DType::f16 ? ValueRange{-65504, 65504} : ValueRange{-1e16, 1e16};
    }
};

HB_REGISTER_OPERATOR(GroupedMatmulOp)

}  // namespace hb
