// moe_re_routing(tokens, expert_token_num_per_rank, per_token_scales?, expert_token_num_type=1,
// idx_type=0): after an MoE all-to-all, the tokens arrive rank-major (rank i's block for
// expert 0, its block for expert 1, ...); this reorders them expert-major (expert j's block
// from rank 0, from rank 1, ...). With c = expert_token_num_per_rank [N, E] (c >= 1, sum A),
// block (i, j) holds c[i, j] consecutive tokens starting at srcStart(i, j) (exclusive prefix
// sum of c in rank-major order) and moves, keeping its order, to dstStart(i, j) (the prefix sum
// in expert-major order): the expert order is stable, ranks ascending within an expert and
// tokens in arrival order within a block.
//   permute_tokens[dst] = tokens[src], permute_per_token_scales[dst] = per_token_scales[src]
//   (an all-zero fp32 vector, still compared, when the scales are absent);
//   permute_token_idx (int32): idx_type 0 the gather index, idx[dst] = src; idx_type 1 the
//   scatter index, idx[src] = dst;
//   expert_token_num[j] (the counts' dtype): expert_token_num_type 1 the count sum_i c[i, j];
//   0 the inclusive cumulative count sum_{j' <= j} sum_i c[i, j'].
// The reference golden implements only (1, 0), returns int64 counts for int32 input and zeros
// for type 0; hapbench implements both attribute values by the CANN definition and keeps the
// counts' dtype. Every output is a copy or an integer: compared bit-exactly / exactly.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "ops/formula_count.hpp"
#include "ops/case_budget.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

struct Blocks {
    std::int64_t ranks = 0, experts = 0;
    std::vector<std::int64_t> count, src_start, dst_start;  // rank-major: block i * experts + j
};

// Offsets of every block from the counts; throws when they are not a valid routing of `rows`.
Blocks blocks_of(const Problem& p, const std::vector<double>& counts, std::int64_t ranks, std::int64_t experts,
                 std::int64_t rows) {
    Blocks b;
    b.ranks = ranks;
    b.experts = experts;
    const auto cells = static_cast<std::size_t>(ranks * experts);
    b.count.resize(cells);
    b.src_start.resize(cells);
    b.dst_start.resize(cells);
    std::int64_t total = 0;
    for (std::size_t k = 0; k < cells; ++k) {
        const double c = counts[k];
        if (!(c >= 0) || c != std::floor(c))
            throw Error(p.context() + "expert_token_num_per_rank[" + std::to_string(k / experts) + ", " +
                        std::to_string(k % experts) + "] is " + std::to_string(c) + "; counts must be non-negative integers");
        b.count[k] = static_cast<std::int64_t>(c);
        b.src_start[k] = total;
        total += b.count[k];
    }
    if (total != rows)
        throw Error(p.context() + "expert_token_num_per_rank sums to " + std::to_string(total) + ", but tokens has " +
                    std::to_string(rows) + " rows");
    std::int64_t at = 0;
    for (std::int64_t j = 0; j < experts; ++j)
        for (std::int64_t i = 0; i < ranks; ++i) {
            b.dst_start[static_cast<std::size_t>(i * experts + j)] = at;
            at += b.count[static_cast<std::size_t>(i * experts + j)];
        }
    return b;
}

std::int64_t attr_or(const Problem& p, const std::string& name, std::int64_t fallback) {
    const auto it = p.attrs.find(name);
    return it == p.attrs.end() || it->second.type == AttrType::none ? fallback : it->second.as_int();
}

}  // namespace

class MoeReRoutingOp final : public Operator {
  public:
    std::string name() const override { return "moe_re_routing"; }
    int level() const override { return 3; }
    std::string baseline_description() const override {
        return "threaded C++: block offsets by two prefix sums, then token rows spread over OpenMP threads, each a "
               "contiguous memcpy to its expert-major place with its scale and index: oneDNN has no permutation or "
               "gather primitive";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const auto& tokens = p.input("tokens").tensors.at(0);
        const auto& counts = p.input("expert_token_num_per_rank").tensors.at(0);
        if (tokens.shape.size() != 2)
            throw Error(p.context() + "tokens must be 2-D [A, H], got shape " + shape_to_string(tokens.shape));
        if (counts.shape.size() != 2)
            throw Error(p.context() + "expert_token_num_per_rank must be 2-D [N, E], got shape " + shape_to_string(counts.shape));
        if (counts.dtype != DType::i32 && counts.dtype != DType::i64)
            throw Error(p.context() + "expert_token_num_per_rank must be int32 or int64, got " + std::string(dtype_name(counts.dtype)));
        const std::int64_t rows = tokens.shape[0], ranks = counts.shape[0], experts = counts.shape[1];
        if (ranks < 1 || experts < 1)
            throw Error(p.context() + "expert_token_num_per_rank " + shape_to_string(counts.shape) + " needs N, E >= 1");
        if (rows < ranks * experts)
            throw Error(p.context() + "tokens has " + std::to_string(rows) + " rows, fewer than the " +
                        std::to_string(ranks * experts) + " cells of expert_token_num_per_rank " +
                        shape_to_string(counts.shape) + " (every cell routes at least one token)");
        const ArgSpec& scales = p.input("per_token_scales");
        if (scales.present) {
            const auto& s = scales.tensors.at(0);
            if (s.shape != Shape{rows} || s.dtype != DType::f32)
                throw Error(p.context() + "per_token_scales must be float32 [" + std::to_string(rows) + "], got " +
                            std::string(dtype_name(s.dtype)) + " " + shape_to_string(s.shape));
        }
        const std::int64_t type = attr_or(p, "expert_token_num_type", 1), idx_type = attr_or(p, "idx_type", 0);
        if (type != 0 && type != 1)
            throw Error(p.context() + "expert_token_num_type is " + std::to_string(type) + " (0: cumulative counts, 1: counts)");
        if (idx_type != 0 && idx_type != 1)
            throw Error(p.context() + "idx_type is " + std::to_string(idx_type) + " (0: gather index, 1: scatter index)");
        return {ArgSpec{"permute_tokens", false, true, {TensorSpec{tokens.dtype, tokens.shape}}},
                ArgSpec{"permute_per_token_scales", false, true, {TensorSpec{DType::f32, {rows}}}},
                ArgSpec{"permute_token_idx", false, true, {TensorSpec{DType::i32, {rows}}}},
                ArgSpec{"expert_token_num", false, true, {TensorSpec{counts.dtype, {experts}}}}};
    }

    void golden(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const override {
        const auto& tokens = in[0].one();
        const auto& counts = in[1].one();
        const bool has_scales = in[2].present && !in[2].tensors.empty();
        const std::int64_t rows = tokens.spec.shape[0], width = tokens.spec.shape[1];
        const Blocks b = blocks_of(p, counts.v, counts.spec.shape[0], counts.spec.shape[1], rows);
        const bool scatter_index = attr_or(p, "idx_type", 0) == 1;
        auto& y = out[0].one().v;
        auto& scales = out[1].one().v;
        auto& idx = out[2].one().v;
        auto& per_expert = out[3].one().v;
#pragma omp parallel for schedule(dynamic) if (rows * width >= 65536)
        for (std::size_t k = 0; k < b.count.size(); ++k)
            for (std::int64_t t = 0; t < b.count[k]; ++t) {
                const std::int64_t src = b.src_start[k] + t, dst = b.dst_start[k] + t;
                std::copy_n(tokens.v.begin() + src * width, width, y.begin() + dst * width);
                scales[static_cast<std::size_t>(dst)] = has_scales ? in[2].one().v[static_cast<std::size_t>(src)] : 0.0;
                if (scatter_index) idx[static_cast<std::size_t>(src)] = static_cast<double>(dst);
                else idx[static_cast<std::size_t>(dst)] = static_cast<double>(src);
            }
        double running = 0;
        for (std::int64_t j = 0; j < b.experts; ++j) {
            double sum = 0;
            for (std::int64_t i = 0; i < b.ranks; ++i) sum += static_cast<double>(b.count[static_cast<std::size_t>(i * b.experts + j)]);
            running += sum;
            per_expert[static_cast<std::size_t>(j)] = attr_or(p, "expert_token_num_type", 1) == 1 ? sum : running;
        }
    }

    // Copies and integer sums round nothing: the same-precision reference is the golden.
    void same_precision(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const override {
        golden(p, in, out);
    }

    // Bytes: tokens, counts and scales read once; the four outputs written once. Vector work:
    // the two prefix sums over the N x E counts (formula-literal count: 0 operations per token
    // element; 2 adds per count cell). A permutation of whole rows needs no arithmetic.
    WorkModel work(const Problem& p) const override {
        const auto& tokens = p.input("tokens").tensors.at(0);
        const auto& counts = p.input("expert_token_num_per_rank").tensors.at(0);
        const ArgSpec& scales = p.input("per_token_scales");
        WorkModel w;
        w.bytes_read = static_cast<double>(tokens.bytes() + counts.bytes() + (scales.present ? scales.tensors.at(0).bytes() : 0));
        for (const auto& out : p.outputs)
            for (const auto& t : out.tensors) w.bytes_written += static_cast<double>(t.bytes());
        w.add_vector(OpClass::add, DType::i32, 2.0 * static_cast<double>(counts.numel()));
        // cann-bench (docs/hap.md): one element moved per permuted token element (and scale and
        // index), 2 additions per count cell for the two prefix sums.
        const double moved = static_cast<double>(tokens.numel()) + 2.0 * static_cast<double>(tokens.shape.at(0));
        add_formula(w, tokens.dtype, FormulaMath::compare, moved, {{OpClass::select, 1}});
        add_formula_terms(w, counts.dtype, FormulaMath::compare, static_cast<double>(counts.numel()), {{OpClass::add, 2}});
        w.parallel_items = static_cast<double>(std::max<std::int64_t>(1, tokens.shape.at(0)));
        w.innermost = tokens.shape.at(1);
        return w;
    }

    // Attributes cycle over all four (expert_token_num_type, idx_type) pairs, the counts
    // dtype over int32/int64, and the scales are absent in one case of five. An aligned case
    // aligns every input: H at 512 bytes, E at 512 bytes of counts (128 int32 or 64 int64
    // experts), A a multiple of 128 (fp32 scales).
    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        const DType counts_dtype = sampler.cycle(std::vector<DType>{DType::i32, DType::i64, DType::i64, DType::i32});
        const bool with_scales = d.index % 5 != 3;
        const std::int64_t type = d.index % 2 == 0 ? 1 : 0;
        const std::int64_t idx_type = (d.index / 2) % 2;
        const std::int64_t experts = d.aligned ? (counts_dtype == DType::i64 ? 64 : 128)
                                               : sampler.pick(std::vector<std::int64_t>{1, 3, 7, 8, 16, 32, 61});
        const std::int64_t target = budgeted_elements(sampler, 2.0);
        Shape tokens = sampler.shape(target, 2, d.dtype, d.aligned);
        std::int64_t& rows = tokens[0];
        std::int64_t& width = tokens[1];
        // At least two tokens per cell (a multiple of 128 when the scales must be aligned).
        // A small budget with wide rows gets more, narrower rows instead, drawn so that
        // small cases do not all collapse onto one shape.
        const std::int64_t row_unit = d.aligned && with_scales ? 128 : 1;
        const std::int64_t min_rows = (2 * experts + row_unit - 1) / row_unit * row_unit;
        if (rows < min_rows) {
            rows = min_rows + row_unit * sampler.rng().uniform_int(0, 3);
            const std::int64_t width_unit = d.aligned ? 512 / static_cast<std::int64_t>(dtype_size(d.dtype)) : 1;
            width = std::max(width_unit, target / rows / width_unit * width_unit);
            if (!d.aligned && (width * static_cast<std::int64_t>(dtype_size(d.dtype))) % 512 == 0) width += 1;
        }
        if (d.aligned && with_scales) rows = (rows + 127) / 128 * 128;
        std::int64_t ranks = sampler.pick(std::vector<std::int64_t>{1, 2, 4, 8, 16, 64});
        while (ranks > 1 && ranks * experts * 2 > rows) ranks /= 2;
        out.inputs.at(0).shapes = {tokens};
        out.inputs.at(1).shapes = {{ranks, experts}};
        out.inputs.at(1).dtype = counts_dtype;
        out.inputs.at(2).present = with_scales;
        out.inputs.at(2).dtype = DType::f32;
        if (with_scales) out.inputs.at(2).shapes = {{rows}};
        else out.inputs.at(2).range.reset();
        out.attrs = {{"expert_token_num_type", AttrValue::of_int(type)}, {"idx_type", AttrValue::of_int(idx_type)}};
    }

    // The counts are replaced by a valid routing: every cell at least one token (the CANN
    // contract), the remaining A - N*E tokens spread by random, skewed weights (some experts
    // get many tokens, some few), so that a kernel which assumes uniform blocks fails. The
    // reference's hook uses uniform blocks; the contract, not the stream, is what must hold.
    void fix_inputs(const Problem&, std::vector<Arg>& inputs, Rng& rng) const override {
        Tensor& counts = inputs.at(1).tensors.at(0);
        const std::int64_t rows = inputs.at(0).tensors.at(0).spec.shape.at(0);
        const std::int64_t cells = counts.numel();
        std::vector<double> weight(static_cast<std::size_t>(cells));
        double total_weight = 0;
        for (auto& w : weight) {
            const double e = -std::log(std::max(rng.uniform01(), 1e-300));
            w = e * e;  // squared exponentials: a few heavy experts
            total_weight += w;
        }
        const std::int64_t spare = rows - cells;
        std::vector<std::int64_t> c(static_cast<std::size_t>(cells), 1);
        std::int64_t given = 0;
        for (std::size_t k = 0; k < c.size(); ++k) {
            const auto extra = static_cast<std::int64_t>(std::floor(static_cast<double>(spare) * weight[k] / total_weight));
            c[k] += extra;
            given += extra;
        }
        for (; given < spare; ++given) ++c[static_cast<std::size_t>(rng.uniform_int(0, cells - 1))];
        for (std::int64_t k = 0; k < cells; ++k) counts.set(static_cast<std::size_t>(k), static_cast<double>(c[static_cast<std::size_t>(k)]));
    }
};

HB_REGISTER_OPERATOR(MoeReRoutingOp)

}  // namespace hb
