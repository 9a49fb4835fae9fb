// unsorted_segment_sum(data, segment_ids, num_segments): y[i, ...] is the sum of the rows
// data[j, ...] whose segment_ids[j] == i, and 0 for a segment no row names. data is
// [N, ...] (rank >= 1), segment_ids a 1-D [N] int32/int64 tensor with every id in
// [0, num_segments) (the harness draws them so), y is [num_segments, data.shape[1:]] in
// data's dtype. Float sums accumulate in fp32 for fp16/bf16 (rounded once); integer sums
// wrap around in the data dtype (two's complement), as an int32/int64 accumulator does.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

#include "core/error.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

// The product of data's dims after the first: the length of one row.
std::int64_t row_length(const Shape& data) {
    std::int64_t n = 1;
    for (std::size_t d = 1; d < data.size(); ++d) n *= data[d];
    return n;
}

// An integer sum as an int32/int64 accumulator makes it: modulo 2^64 in uint64, then
// narrowed to the dtype's width with two's-complement wrap-around.
double wrap_to_dtype(std::uint64_t sum, DType dtype) {
    if (dtype == DType::i32) return static_cast<double>(static_cast<std::int32_t>(static_cast<std::uint32_t>(sum)));
    return static_cast<double>(static_cast<std::int64_t>(sum));
}

}  // namespace

class UnsortedSegmentSumOp final : public OperatorWithCompute<UnsortedSegmentSumOp> {
  public:
    std::string name() const override { return "unsorted_segment_sum"; }
    int level() const override { return 2; }
    std::string baseline_description() const override {
        return "plain C++ with OpenMP, all dtypes: oneDNN has no scatter or segment reduction; each thread "
               "owns a slice of the trailing dims (one row of y) when a row is long, else sums a block of rows "
               "into private fp32/integer partial outputs that are then added up (the per-thread partial sums "
               "of a framework's CPU index_add); fp16/bf16 accumulate in fp32";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const TensorSpec& data = p.input("data").tensors.at(0);
        const TensorSpec& ids = p.input("segment_ids").tensors.at(0);
        const std::int64_t segments = p.attr_int("num_segments");
        if (data.shape.empty()) throw Error(p.context() + "data is 0-d; it needs a first dimension of rows to segment");
        if (ids.dtype != DType::i32 && ids.dtype != DType::i64)
            throw Error(p.context() + "segment_ids has dtype " + std::string(dtype_name(ids.dtype)) +
                        "; it must be int32 or int64");
        if (ids.shape.size() != 1 || ids.shape[0] != data.shape[0])
            throw Error(p.context() + "segment_ids has shape " + shape_to_string(ids.shape) + " but data has " +
                        shape_to_string(data.shape) + "; it must be 1-D with one id per row of data, [" +
                        std::to_string(data.shape[0]) + "]");
        if (segments < 1)
            throw Error(p.context() + "num_segments is " + std::to_string(segments) + "; it must be at least 1");
        ArgSpec y;
        y.name = "y";
        Shape shape = data.shape;
        shape[0] = segments;
        y.tensors.push_back(TensorSpec{data.dtype, shape});
        return {y};
    }

    // Integer data: the golden's exact integer sums are also what any same-precision
    // accumulator computes, and fp32 could not hold int32 values past 2^24 exactly.
    void same_precision(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const override {
        if (is_integer(p.input("data").tensors.at(0).dtype)) return golden(p, in, out);
        OperatorWithCompute<UnsortedSegmentSumOp>::same_precision(p, in, out);
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const auto& data = in[0].one();
        const auto& ids = in[1].one().v;
        auto& y = out[0].one().v;
        const std::int64_t rows = data.spec.shape[0];
        const std::int64_t len = row_length(data.spec.shape);
        const std::int64_t segments = p.attr_int("num_segments");
        // Ids outside [0, num_segments) are skipped, as TensorFlow drops them; the harness
        // never draws one.
        auto segment_of = [&](std::int64_t j) {
            const auto id = static_cast<std::int64_t>(ids[static_cast<std::size_t>(j)]);
            return id >= 0 && id < segments ? id : -1;
        };
        if (is_integer(data.spec.dtype)) {
            std::vector<std::uint64_t> sums(y.size(), 0);
            for (std::int64_t j = 0; j < rows; ++j) {
                const std::int64_t s = segment_of(j);
                if (s < 0) continue;
                const T* src = data.v.data() + j * len;
                std::uint64_t* dst = sums.data() + s * len;
                for (std::int64_t k = 0; k < len; ++k)
                    dst[k] += static_cast<std::uint64_t>(static_cast<std::int64_t>(src[k]));
            }
            for (std::size_t i = 0; i < y.size(); ++i) y[i] = static_cast<T>(wrap_to_dtype(sums[i], data.spec.dtype));
            return;
        }
        // Rows are added in row order into T accumulators (fp32 for the same-precision
        // reference, as a framework's index_add accumulates, fp64 for the golden).
        std::fill(y.begin(), y.end(), T(0));
#pragma omp parallel for schedule(static) if (len >= 4096)
        for (std::int64_t k0 = 0; k0 < len; k0 += 1024) {
            const std::int64_t k1 = std::min(len, k0 + 1024);
            for (std::int64_t j = 0; j < rows; ++j) {
                const std::int64_t s = segment_of(j);
                if (s < 0) continue;
                const T* src = data.v.data() + j * len;
                T* dst = y.data() + s * len;
                for (std::int64_t k = k0; k < k1; ++k) dst[k] += src[k];
            }
        }
    }

    WorkModel work(const Problem& p) const override {
        const TensorSpec& data = p.input("data").tensors.at(0);
        const TensorSpec& ids = p.input("segment_ids").tensors.at(0);
        const TensorSpec& y = p.outputs.at(0).tensors.at(0);
        WorkModel w;
        // data and the ids are read once; y is written once (empty segments as zeros). An
        // fp16/bf16 kernel keeps its fp32 accumulators in cache when y fits there; when it
        // does not, the extra traffic is the kernel's choice, not a compulsory cost.
        w.bytes_read = static_cast<double>(data.bytes() + ids.bytes());
        w.bytes_written = static_cast<double>(y.bytes());
        // One add per data element, in the data dtype (fp16/bf16 widened to fp32 by the model).
        w.add_vector(OpClass::add, data.dtype, static_cast<double>(data.numel()));
        // cann-bench (docs/hap.md): a segmented sum, a reduction (fp32 for half inputs): one add
        // per data element.
        add_formula(w, data.dtype, FormulaMath::in_fp32, static_cast<double>(data.numel()), {{OpClass::add, 1}});
        // Every data element is an independent addend: threads split the rows into private
        // partial outputs, or split the trailing dims, so the data elements bound the
        // parallelism.
        w.parallel_items = static_cast<double>(data.numel());
        w.innermost = std::max<std::int64_t>(1, row_length(data.shape));
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        // Both id dtypes, and five regimes of segment counts, deterministically across a batch.
        const DType ids_dtype = sampler.cycle(std::vector<DType>{DType::i32, DType::i64});
        enum class Segments { one, few, many, per_row, sparse };
        const Segments kind = sampler.cycle(
            std::vector<Segments>{Segments::one, Segments::few, Segments::many, Segments::per_row, Segments::sparse});
        const int rank = sampler.pick_rank(1, 4);
        // An aligned case aligns the ids too: N a multiple of 512 bytes of the id dtype.
        const std::int64_t ids_unit = d.aligned ? 512 / static_cast<std::int64_t>(dtype_size(ids_dtype)) : 1;
        Shape shape;
        if (rank == 1) {
            shape = sampler.shape(d.target_elements, 1, d.dtype, d.aligned, ids_unit);
        } else {
            shape = sampler.shape(d.target_elements, rank, d.dtype, d.aligned);
            // The rows are what gets segmented: the largest outer dim goes first.
            std::iter_swap(shape.begin(), std::max_element(shape.begin(), shape.end() - 1));
            if (shape[0] % ids_unit != 0) {
                // Round N up to the ids' unit and shrink the middle dims by as much, to keep
                // the element budget.
                const std::int64_t grown = (shape[0] + ids_unit - 1) / ids_unit * ids_unit;
                double factor = static_cast<double>(grown) / static_cast<double>(shape[0]);
                shape[0] = grown;
                for (std::size_t k = 1; k + 1 < shape.size() && factor > 1.5; ++k) {
                    const std::int64_t shrunk = std::max<std::int64_t>(1, std::llround(shape[k] / factor));
                    factor *= static_cast<double>(shrunk) / static_cast<double>(shape[k]);
                    shape[k] = shrunk;
                }
            }
        }
        const std::int64_t n = shape[0];
        std::int64_t segments = 1;
        switch (kind) {
            case Segments::one: segments = 1; break;  // a full reduction over the rows
            case Segments::few: segments = sampler.pick(std::vector<std::int64_t>{2, 3, 7, 11, 16}); break;
            case Segments::many: segments = std::max<std::int64_t>(2, n / 8 + 1); break;
            case Segments::per_row: segments = std::max<std::int64_t>(2, n); break;
            case Segments::sparse: segments = std::max<std::int64_t>(3, n + n / 2 + 1); break;  // most rows of y empty
        }
        out.inputs.at(0).shapes = {shape};
        // int64 data with an infinite range would fill the whole int64 range, past what the
        // fp64 golden holds exactly; it takes the boundary range (+-2^52) instead.
        const double limit = boundary_range(DType::i64).hi;
        if (d.dtype == DType::i64 && (std::isinf(d.range.lo) || std::isinf(d.range.hi) ||
                                      std::fabs(d.range.lo) > limit || std::fabs(d.range.hi) > limit))
            out.inputs.at(0).range = boundary_range(DType::i64);
        out.inputs.at(1).shapes = {Shape{n}};
        out.inputs.at(1).dtype = ids_dtype;
        out.inputs.at(1).range = ValueRange{0, static_cast<double>(segments - 1)};
        out.attrs = {{"num_segments", AttrValue::of_int(segments)}};
    }

    // Ranges that test the type's edge without making the sum's value depend on the order
    // of the additions: fp16 sums run in fp32, so its full range only overflows in the final
    // rounding (the same for every kernel); fp32/bf16 stop at +-3e30, where 3e7 rows still
    // sum below fp32's 3.4e38; int32 uses its full range (sums wrap, exactly defined);
    // int64 stops at +-2^52 so that every value is exact in the fp64 golden.
    ValueRange boundary_range(DType dtype) const override {
        switch (dtype) {
            case DType::f16: return {-65504.0, 65504.0};
            case DType::f32:
            case DType::bf16: return {-3e30, 3e30};
            case DType::i64: return {-4503599627370496.0, 4503599627370496.0};
            default: return Operator::boundary_range(dtype);
        }
    }

    // Ids uniform over the first seven eighths of the segments (all of them when there are
    // fewer than 8), so that the last eighth are always empty and come out 0, and others are
    // empty by chance when rows are few.
    void fix_inputs(const Problem& p, std::vector<Arg>& inputs, Rng& rng) const override {
        Tensor& ids = inputs.at(1).tensors.at(0);
        const std::int64_t segments = p.attr_int("num_segments");
        const std::int64_t used = segments >= 8 ? segments - segments / 8 : segments;
        for (std::int64_t j = 0; j < ids.numel(); ++j)
            ids.set(static_cast<std::size_t>(j), static_cast<double>(rng.uniform_int(0, used - 1)));
    }
};

HB_REGISTER_OPERATOR(UnsortedSegmentSumOp)

}  // namespace hb
