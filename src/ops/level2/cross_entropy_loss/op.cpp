// cross_entropy_loss(input, target, reduction="mean", ignore_index=-100): PyTorch's
// torch.nn.functional.cross_entropy with class-index targets, no class weights and no label
// smoothing. input is [N, C] or [N, C, d1, ...] (the classes are dim 1), target is int64 of
// input's shape without dim 1, each value a class in [0, C) or ignore_index.
//   per position: loss = logsumexp(input[n, :, ...]) - input[n, target, ...]
//                      = (max - x_t) + log(sum_c e^(x_c - max))   (torch's log_softmax form)
//   none: the per-position losses, target's shape; an ignored position is 0.
//   sum:  their sum (ignored positions add nothing), a 0-d tensor.
//   mean: the sum over the number of non-ignored positions, a 0-d tensor; when every position
//         is ignored that is 0/0 = NaN, as in PyTorch. hapbench never generates such a case
//         (fix_inputs keeps at least one position valid), so no kernel is judged on it.
// The output has input's dtype; fp16/bf16 inputs are computed in fp32 by the same-precision
// reference and the reference kernels. Special values follow the formula, as in torch: a
// NaN or +inf logit, or a row of only -inf, makes the position NaN; a -inf target logit
// among finite ones gives +inf. Ignored positions never read their logits, so they stay 0
// whatever they hold.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/error.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"
#include "ops/axis_view.hpp"

namespace hb {

namespace {

enum class Reduction { none, mean, sum };

Reduction reduction_of(const Problem& p) {
    const std::string r = p.attr_string("reduction");
    if (r == "none") return Reduction::none;
    if (r == "mean") return Reduction::mean;
    if (r == "sum") return Reduction::sum;
    throw Error(p.context() + "reduction '" + r + "' is not one of none, mean, sum");
}

// input viewed as [N, C, inner] with inner the product of d1...; positions = N * inner.
AxisView class_view(const Shape& input) { return axis_view(input, 1); }

// How the per-position ignore_index choices of the sampler map to a value for C classes:
// torch's default, the common -1, class 0, a class inside (C/3 rounded, at least 1) and the
// first value past the classes (C), which a kernel must not use as an index.
enum class IgnoreKind { torch_default, minus_one, class_zero, class_inside, past_classes };

std::int64_t ignore_value(IgnoreKind k, std::int64_t classes) {
    switch (k) {
        case IgnoreKind::torch_default: return -100;
        case IgnoreKind::minus_one: return -1;
        case IgnoreKind::class_zero: return 0;
        case IgnoreKind::class_inside: return std::max<std::int64_t>(1, classes / 3);
        case IgnoreKind::past_classes: return classes;
    }
    return -100;
}

// Positions are summed in blocks of this many, then the block sums are summed: the error of
// the fp32 same-precision reference grows with the block count, not with N (a framework's
// cascade sum does the same).
constexpr std::int64_t sum_block = 1024;

}  // namespace

class CrossEntropyLossOp final : public OperatorWithCompute<CrossEntropyLossOp> {
  public:
    std::string name() const override { return "cross_entropy_loss"; }
    int level() const override { return 2; }
    std::string baseline_description() const override {
        return "threaded C++ (OpenMP over rows of [N, C] or blocks of spatial positions, max, sum of vectorized "
               "exponentials and the target's logit in fp32, the reduction in fp64 per thread): oneDNN has "
               "no cross-entropy, log-softmax-with-gather or NLL primitive; a log_softmax primitive plus a "
               "gather would write and re-read the whole [N, C] log-probability tensor";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const TensorSpec& input = p.input("input").tensors.at(0);
        const TensorSpec& target = p.input("target").tensors.at(0);
        reduction_of(p);  // rejects an unknown reduction before anything runs
        if (!is_floating(input.dtype))
            throw Error(p.context() + "input is " + std::string(dtype_name(input.dtype)) +
                        "; the logits must be float32, float16 or bfloat16");
        if (target.dtype != DType::i64)
            throw Error(p.context() + "target is " + std::string(dtype_name(target.dtype)) +
                        "; class-index targets must be int64");
        if (input.shape.size() < 2)
            throw Error(p.context() + "input has shape " + shape_to_string(input.shape) +
                        "; it must be [N, C] or [N, C, d1, ...] with the classes in dim 1");
        if (input.shape[1] < 1) throw Error(p.context() + "input has no classes (dim 1 is 0)");
        Shape expected = input.shape;
        expected.erase(expected.begin() + 1);
        if (target.shape != expected)
            throw Error(p.context() + "target has shape " + shape_to_string(target.shape) + " but input " +
                        shape_to_string(input.shape) + " needs " + shape_to_string(expected) +
                        " (input's shape without the class dim 1)");
        ArgSpec out;
        out.name = "loss";
        out.tensors.push_back(TensorSpec{input.dtype, reduction_of(p) == Reduction::none ? expected : Shape{}});
        return {out};
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const auto& x = in[0].one();
        const auto& target = in[1].one().v;
        const AxisView v = class_view(x.spec.shape);
        const std::int64_t positions = v.outer * v.inner;
        const std::int64_t ignore = p.attr_int("ignore_index");
        const Reduction reduction = reduction_of(p);
        std::vector<T> loss(static_cast<std::size_t>(positions), T(0));
        std::vector<char> counted(static_cast<std::size_t>(positions), 0);
        bool bad_target = false;
#pragma omp parallel for schedule(static) if (positions * v.size >= 4096) reduction(|| : bad_target)
        for (std::int64_t s = 0; s < positions; ++s) {
            const auto t = static_cast<std::int64_t>(target[static_cast<std::size_t>(s)]);
            if (t == ignore) continue;
            if (t < 0 || t >= v.size) {
                bad_target = true;
                continue;
            }
            const std::int64_t base = (s / v.inner) * v.size * v.inner + s % v.inner;
            auto at = [&](std::int64_t c) { return x.v[static_cast<std::size_t>(base + c * v.inner)]; };
            // NaN wins the max (std::max would drop it), so that it reaches the loss.
            T max = -std::numeric_limits<T>::infinity();
            for (std::int64_t c = 0; c < v.size; ++c) {
                const T e = at(c);
                if (std::isnan(e) || e > max) max = e;
            }
            T sum = 0;
            for (std::int64_t c = 0; c < v.size; ++c) sum += std::exp(at(c) - max);
            loss[static_cast<std::size_t>(s)] = (max - at(t)) + std::log(sum);
            counted[static_cast<std::size_t>(s)] = 1;
        }
        if (bad_target)
            throw Error(p.context() + "a target is outside [0, " + std::to_string(v.size) + ") and is not ignore_index " +
                        std::to_string(ignore));
        auto& y = out[0].one().v;
        if (reduction == Reduction::none) {
            std::copy(loss.begin(), loss.end(), y.begin());
            return;
        }
        T total = 0;
        std::int64_t count = 0;
        for (std::int64_t b = 0; b < positions; b += sum_block) {
            T block = 0;
            for (std::int64_t s = b; s < std::min(positions, b + sum_block); ++s) {
                block += loss[static_cast<std::size_t>(s)];
                count += counted[static_cast<std::size_t>(s)];
            }
            total += block;
        }
        // mean with every position ignored: 0/0 = NaN, as torch.
        y.at(0) = reduction == Reduction::sum ? total : total / static_cast<T>(count);
    }

    WorkModel work(const Problem& p) const override {
        const TensorSpec& input = p.input("input").tensors.at(0);
        const TensorSpec& target = p.input("target").tensors.at(0);
        const TensorSpec& loss = p.outputs.at(0).tensors.at(0);
        const double n = static_cast<double>(input.numel());
        const double positions = static_cast<double>(target.numel());
        WorkModel w;
        // A hardware-limited kernel reads the logits and the targets once (a row, or a block
        // of neighbouring positions, stays on chip between the max and the sum passes) and
        // writes only the losses or the one scalar.
        w.bytes_read = static_cast<double>(input.bytes() + target.bytes());
        w.bytes_written = static_cast<double>(loss.bytes());
        // Per logit: the running max, x - max, e^(x - max) and the sum. Counted in the input's
        // dtype as softmax does, a lower bound for kernels that widen fp16/bf16 to fp32.
        w.add_vector(OpClass::cmp, input.dtype, n);
        w.add_vector(OpClass::add, input.dtype, n);
        w.add_vector(OpClass::exp, input.dtype, n);
        w.add_vector(OpClass::add, input.dtype, n);
        // Per position: the ignore test and its select, log(sum), (max - x_t) + log, and the
        // reduction's add (or nothing for none; counted anyway, it is one add per position).
        w.add_vector(OpClass::cmp, input.dtype, positions);
        w.add_vector(OpClass::select, input.dtype, positions);
        w.add_vector(OpClass::log, input.dtype, positions);
        w.add_vector(OpClass::add, input.dtype, 3 * positions);
        // cann-bench (docs/hap.md): -log(exp(x[target]) / sum(exp(x))), a reduction over the
        // classes: per logit exp and the sum's add; the log, the division and exp(x[target]) are
        // once per position (a reduced row) and not counted.
        add_formula(w, input.dtype, FormulaMath::in_fp32, n, {{OpClass::exp, 1}, {OpClass::add, 1}});
        w.parallel_items = positions;
        w.innermost = input.shape.back();
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        // Every reduction with every kind of ignore_index within the first 15 cases.
        struct Choice {
            const char* reduction;
            IgnoreKind ignore;
        };
        static const std::vector<Choice> choices = {
            {"mean", IgnoreKind::torch_default}, {"sum", IgnoreKind::minus_one},     {"none", IgnoreKind::class_zero},
            {"mean", IgnoreKind::class_inside},  {"sum", IgnoreKind::past_classes},  {"none", IgnoreKind::torch_default},
            {"mean", IgnoreKind::minus_one},     {"sum", IgnoreKind::class_zero},    {"none", IgnoreKind::class_inside},
            {"mean", IgnoreKind::past_classes},  {"sum", IgnoreKind::torch_default}, {"none", IgnoreKind::minus_one},
            {"mean", IgnoreKind::class_zero},    {"sum", IgnoreKind::class_inside},  {"none", IgnoreKind::past_classes},
        };
        const Choice& choice = sampler.cycle(choices);
        const std::int64_t unit = 512 / static_cast<std::int64_t>(dtype_size(d.dtype));
        // Plain [N, C] (the language-model case) in about two draws of five, else 3-D to 5-D.
        const int rank = sampler.pick(std::vector<int>{2, 2, 3, 4, 5});
        Shape input, target;
        if (rank == 2 && (d.aligned || sampler.rng().uniform01() < 0.75)) {
            // [N, C] with C the innermost dim (64 to 16384 classes). An aligned case also
            // needs N (target's innermost) at a multiple of 64 int64 elements.
            input = sampler.shape(d.target_elements, 2, d.dtype, d.aligned);
            if (d.aligned) input[0] = std::max<std::int64_t>(64, (input[0] + 32) / 64 * 64);
            target = {input[0]};
        } else {
            // [N, C, d1, ...] (or [N, C] with few classes): C from binary to a vocabulary-like
            // count, small enough to leave room for positions; the positions' shape comes from
            // the sampler, its innermost dim at least the alignment unit.
            std::vector<std::int64_t> classes;
            for (std::int64_t c : {2, 3, 10, 19, 100, 151, 1000, 1013, 4001})
                if (c * 2 * unit <= d.target_elements) classes.push_back(c);
            if (classes.empty()) classes.push_back(2);
            const std::int64_t c = sampler.pick(classes);
            const std::int64_t positions = std::max<std::int64_t>(1, d.target_elements / (c + 1));
            if (rank == 2) {
                // Few classes in a non-aligned case: C is the innermost dim, below 512 bytes.
                input = {positions, c};
                target = {positions};
            } else {
                target = sampler.shape(positions, rank - 1, d.dtype, d.aligned);
                input = target;
                input.insert(input.begin() + 1, c);
            }
        }
        out.inputs.at(0).shapes = {input};
        out.inputs.at(1).shapes = {target};
        out.inputs.at(1).dtype = DType::i64;
        out.inputs.at(1).range = ValueRange{0.0, static_cast<double>(input[1] - 1)};
        out.attrs = {{"reduction", AttrValue::of_string(choice.reduction)},
                     {"ignore_index", AttrValue::of_int(ignore_value(choice.ignore, input[1]))}};
    }

    // fp16: the dtype's finite range, where a loss (up to max - min = 131008) overflows the
    // output to inf as it does in torch. fp32 and bf16: +-88, the exp-type boundary, where a
    // kernel that does not subtract the max overflows e^x (their full range would make the
    // losses themselves overflow fp32 arithmetic, which measures nothing useful).
    ValueRange boundary_range(DType dtype) const override {
        if (dtype == DType::f16) return {-65504.0, 65504.0};
        return {-88.0, 88.0};
    }

    // Class targets: every target that is neither ignore_index nor a class in [0, C) is
    // redrawn in [0, C) (the generator fills the case's range, which a hand-written case may
    // set wider), then about one position in eight is set to ignore_index. With C >= 2 at
    // least one position stays valid, so 'mean' never divides by zero.
    void fix_inputs(const Problem& p, std::vector<Arg>& inputs, Rng& rng) const override {
        const std::int64_t classes = p.input("input").tensors.at(0).shape.at(1);
        const std::int64_t ignore = p.attr_int("ignore_index");
        Tensor& t = inputs.at(1).tensors.at(0);
        auto* target = static_cast<std::int64_t*>(t.data());
        const auto n = static_cast<std::size_t>(t.numel());
        bool any_valid = false;
        for (std::size_t i = 0; i < n; ++i) {
            if (target[i] != ignore && (target[i] < 0 || target[i] >= classes))
                target[i] = rng.uniform_int(0, classes - 1);
            if (rng.uniform01() < 0.125) target[i] = ignore;
            any_valid = any_valid || target[i] != ignore;
        }
        if (!any_valid && n > 0 && classes >= 2) target[0] = ignore == 0 ? 1 : 0;
    }
};

HB_REGISTER_OPERATOR(CrossEntropyLossOp)

}  // namespace hb
