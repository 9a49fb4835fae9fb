#include "eval/verify_timed_calls.hpp"

#include <algorithm>
#include <future>

#include <fmt/format.h>

#include "eval/prepare_case.hpp"
#include "suite/inputs.hpp"

namespace hb {

TimedCallVerdict verify_timed_calls(const Operator& op, const Problem& problem, const std::vector<KeptCall>& kept,
                                    int threads) {
    std::vector<OutputVerdictSummary> verdicts(kept.size());
    auto check = [&](std::size_t i) {
        std::vector<Arg> inputs = allocate_args(problem.inputs, false);
        fill_timed_inputs(problem, op, kept[i].seed, inputs);
        verdicts[i] = judge_against_inputs(op, problem, inputs, kept[i].outputs);
    };
    const std::size_t width = std::max<std::size_t>(1, static_cast<std::size_t>(std::max(1, threads)));
    for (std::size_t begin = 0; begin < kept.size(); begin += width) {
        std::vector<std::future<void>> running;
        for (std::size_t i = begin; i < std::min(kept.size(), begin + width); ++i)
            running.push_back(std::async(std::launch::async, check, i));
        for (auto& f : running) f.get();
    }
    TimedCallVerdict v;
    for (std::size_t i = 0; i < kept.size(); ++i) {
        ++v.verified;
        if (verdicts[i].status == CaseStatus::precision_fail && verdicts[i].gate)
            if (const std::optional<std::int64_t> allowed = fresh_input_allowance(*verdicts[i].gate)) {
                v.allowances.push_back(fmt::format(
                    "timed call {}: {} error{} beyond the same-precision reference's, allowed on fresh inputs "
                    "(at most 2 x its errors or 1 in 10,000 elements a region; {})",
                    kept[i].call, *allowed, *allowed == 1 ? "" : "s", verdicts[i].reason));
                continue;
            }
        if (verdicts[i].status != CaseStatus::pass && v.passed) {
            v.passed = false;
            v.failing_call = kept[i].call;
            v.reason = verdicts[i].status == CaseStatus::precision_fail
                           ? verdicts[i].reason
                           : status_name(verdicts[i].status) + ": " + verdicts[i].reason;
        }
    }
    return v;
}

}  // namespace hb
