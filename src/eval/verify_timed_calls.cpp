#include "eval/verify_timed_calls.hpp"

#include <algorithm>
#include <future>

#include <fmt/format.h>

#include "eval/prepare_case.hpp"
#include "suite/inputs.hpp"

namespace hb {

std::uint64_t verification_bytes(const Problem& problem) {
    std::uint64_t bytes = 0;
    for (const auto* specs : {&problem.inputs, &problem.outputs})
        for (const auto& a : *specs)
            for (const auto& t : a.tensors) bytes += static_cast<std::uint64_t>(t.numel()) * (dtype_size(t.dtype) + 16);
    return bytes;
}

int verification_width(const Problem& problem, int threads) {
    const std::uint64_t one = std::max<std::uint64_t>(1, verification_bytes(problem));
    const auto fits = static_cast<int>(std::min<std::uint64_t>(kVerificationMemoryBytes / one, 1 << 20));
    return std::clamp(fits, 1, std::max(1, threads));
}

TimedCallVerdict verify_timed_calls(const Operator& op, const Problem& problem, const std::vector<KeptCall>& kept,
                                    int threads) {
    std::vector<OutputVerdictSummary> verdicts(kept.size());
    auto check = [&](std::size_t i) {
        std::vector<Arg> inputs = allocate_args(problem.inputs, false, Buffer::Contents::overwritten);
        fill_timed_inputs(problem, op, kept[i].seed, inputs);
        verdicts[i] = judge_against_inputs(op, problem, inputs, kept[i].outputs);
    };
    const auto width = static_cast<std::size_t>(verification_width(problem, threads));
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
