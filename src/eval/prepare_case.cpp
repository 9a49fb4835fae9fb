#include "eval/prepare_case.hpp"

#include "core/error.hpp"
#include "suite/inputs.hpp"

namespace hb {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

ValueArgs<double> compute(const Operator& op, const Problem& problem, const ValueArgs<double>& inputs, bool golden) {
    ValueArgs<double> out = values_for_specs<double>(problem.outputs);
    if (golden) op.golden(problem, inputs, out);
    else op.same_precision(problem, inputs, out);
    return out;
}

}  // namespace

PreparedCase::PreparedCase(const Operator& op, Problem problem, std::uint64_t eval_seed, GoldenCache* cache,
                           PhaseTimes& phases)
    : op_(op), problem_(std::move(problem)), input_seed_(base_input_seed(problem_, eval_seed)), cache_(cache) {
    auto t = std::chrono::steady_clock::now();
    inputs();
    phases.inputs_s += seconds_since(t);

    t = std::chrono::steady_clock::now();
    golden_source_ = load_golden();
    phases.golden_s += seconds_since(t);
}

std::string PreparedCase::load_golden() const {
    const std::string key = cache_ ? GoldenCache::key(op_, problem_, input_seed_, "golden") : "";
    if (cache_)
        if (auto cached = cache_->load(key, problem_)) {
            golden_ = std::move(*cached);
            return "cache";
        }
    golden_ = compute(op_, problem_, input_values(), true);
    if (cache_) cache_->store(key, *golden_);
    return "computed";
}

const std::vector<Arg>& PreparedCase::inputs() const {
    if (inputs_.empty() && !problem_.inputs.empty()) {
        inputs_ = allocate_args(problem_.inputs, false, Buffer::Contents::overwritten);
        fill_inputs(problem_, op_, input_seed_, inputs_);
    }
    return inputs_;
}

const ValueArgs<double>& PreparedCase::golden() const {
    if (!golden_) load_golden();
    return *golden_;
}

void PreparedCase::drop_references() const {
    inputs_.clear();
    golden_.reset();
    input_values_.reset();
    same_precision_.reset();
}

const ValueArgs<double>& PreparedCase::input_values() const {
    if (!input_values_) input_values_ = values_from_args(inputs());
    return *input_values_;
}

const ValueArgs<double>& PreparedCase::same_precision() const {
    if (same_precision_) return *same_precision_;
    const std::string key = cache_ ? GoldenCache::key(op_, problem_, input_seed_, "same_precision") : "";
    if (cache_)
        if (auto cached = cache_->load(key, problem_)) return *(same_precision_ = std::move(*cached));
    same_precision_ = compute(op_, problem_, input_values(), false);
    if (cache_) cache_->store(key, *same_precision_);
    return *same_precision_;
}

OutputVerdictSummary PreparedCase::judge(const std::vector<Arg>& candidate) const {
    static const ValueArgs<double> no_inputs;  // the gate reads none: no fp64 copy of them is made
    return judge_outputs(problem_, values_from_args(candidate), golden(),
                         SamePrecisionReference([this]() -> const ValueArgs<double>& { return same_precision(); }),
                         gate_reads_inputs(problem_) ? input_values() : no_inputs);
}

OutputVerdictSummary judge_against_inputs(const Operator& op, const Problem& problem, const std::vector<Arg>& inputs,
                                          const std::vector<Arg>& candidate) {
    // The fp64 inputs are dropped once the golden is computed, unless the gate gathers from
    // them, and widened again only if a fallback asks for the same-precision reference: so
    // they and the candidate's fp64 outputs are never held at once (on a 22.7-million-element
    // elementwise case, 180 MB less at the harness's peak, each MB of which costs a first touch).
    std::optional<ValueArgs<double>> input_values = values_from_args(inputs);
    const ValueArgs<double> golden = compute(op, problem, *input_values, true);
    const bool gate_reads = gate_reads_inputs(problem);
    if (!gate_reads) input_values.reset();
    static const ValueArgs<double> no_inputs;
    std::optional<ValueArgs<double>> same_precision;
    return judge_outputs(problem, values_from_args(candidate), golden,
                         SamePrecisionReference([&]() -> const ValueArgs<double>& {
                             if (!same_precision) {
                                 if (!input_values) input_values = values_from_args(inputs);
                                 same_precision = compute(op, problem, *input_values, false);
                             }
                             return *same_precision;
                         }),
                         gate_reads ? *input_values : no_inputs);
}

}  // namespace hb
