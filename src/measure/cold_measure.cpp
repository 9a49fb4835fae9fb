#include "measure/cold_measure.hpp"

#include <algorithm>
#include <cstring>

#include "measure/cache_flush.hpp"

namespace hb {

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    const auto at = std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())));
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(at), v.end());
    return v[at];
}

}  // namespace

CallTime call_time(double window_ns, double worker_ns, double overhead_high_ns) {
    const double low = std::max(0.0, window_ns - overhead_high_ns);
    CallTime t;
    t.ns = std::clamp(worker_ns, low, window_ns);
    t.clamped = !(worker_ns >= low && worker_ns <= window_ns);
    return t;
}

namespace {
// Poisons the workspace, and every output or (every_output false) only those of
// data-dependent length, with `poison`; then evicts them and the inputs of `slot`.
void poison_and_flush(const CaseBuffers& buffers, int slot, unsigned char poison, bool every_output) {
    for (const auto& a : buffers.outputs)
        for (const auto& t : a.tensors) {
            if (every_output || a.variable_length) std::memset(t.data, poison, t.bytes());
            flush_range(t.data, t.bytes());
        }
    if (buffers.workspace_bytes) {
        std::memset(buffers.workspace, poison, buffers.workspace_bytes);
        flush_range(buffers.workspace, buffers.workspace_bytes);
    }
    for (const auto& a : buffers.input_slots.at(static_cast<std::size_t>(slot)))
        for (const auto& t : a.tensors) flush_range(t.data, t.bytes());
    flush_fence();
}
}  // namespace

void prepare_call_buffers(const CaseBuffers& buffers, int slot, unsigned char poison) {
    poison_and_flush(buffers, slot, poison, true);
}

void prepare_timed_call_buffers(const CaseBuffers& buffers, int slot) { poison_and_flush(buffers, slot, 0xff, false); }

ColdMeasurement measure_cold(KernelSession& session, const Problem& problem, const Operator& op, const TimingPlan& plan,
                             const TimedInputSeeds& seeds, std::mt19937_64& choice_rng, Clock::time_point deadline) {
    ColdMeasurement m;
    const CaseBuffers& buffers = session.buffers();
    const int slots = static_cast<int>(buffers.input_slots.size());
    auto failed = [&](const CallResult& r, const std::string& which) {
        m.outcome = r.outcome;
        m.message = which + ": " + r.message;
    };

    const std::vector<double> null_windows = session.null_calls(plan.null_calls, deadline);
    m.overhead_ns = quantile(null_windows, 0.5);
    m.overhead_high_ns = quantile(null_windows, 0.95);

    // Every slot takes timed calls in turn (the base inputs' slot too: the correctness calls
    // are done with it), so consecutive calls read different addresses. Warmup on those
    // slots, each call with fresh inputs, at least once on every slot the correctness calls
    // did not use (slot 0 had them): a slot's first call can pay for what a later one does
    // not (on a hypervisor that shadows page tables, 2 to 3 times the call's time), and no
    // timed call may be first. Warmups start on slot 1; timed calls go on in turn after them.
    const int warmups = plan.warmup_calls(slots);
    for (int w = 0; w < warmups; ++w) {
        const int slot = (w + 1) % slots;
        const auto t = Clock::now();
        std::vector<Arg> warm_inputs = borrow_args(buffers.input_slots[static_cast<std::size_t>(slot)]);
        fill_timed_inputs(problem, op, seeds.seed(problem, -1 - w), warm_inputs);
        prepare_timed_call_buffers(buffers, slot);
        m.prepare_s += seconds_since(t);
        const CallResult r = session.call(slot, deadline, CallCheck::quick);
        if (r.outcome != RunOutcome::ok) {
            failed(r, "warmup call " + std::to_string(w + 1));
            return m;
        }
        ++m.warmup_calls;
    }

    bool last_timed = false, last_clamped = false;  // the previous timed call's sample, if it has one
    auto drop_last_sample = [&] {
        if (!last_timed) return;
        m.samples_ns.pop_back();
        m.clamped_calls -= last_clamped ? 1 : 0;
        ++m.unsettled_calls;
        last_timed = false;
    };
    const RelativeSpreadRule rule(plan.stopping);
    const int verified = std::max(0, plan.verified_calls);
    for (int k = 1;; ++k) {
        const int slot = (warmups + k) % slots;
        const std::uint64_t seed = seeds.seed(problem, k);
        auto t = Clock::now();
        std::vector<Arg> inputs = borrow_args(buffers.input_slots[static_cast<std::size_t>(slot)]);
        fill_timed_inputs(problem, op, seed, inputs);
        prepare_timed_call_buffers(buffers, slot);
        m.prepare_s += seconds_since(t);

        const CallResult r = session.call(slot, deadline, CallCheck::quick);
        if (r.outcome != RunOutcome::ok) {
            failed(r, "timed call " + std::to_string(k));
            return m;
        }
        // A call after which the worker was busy (or busy before this one) is not timed: work
        // may have run outside its window. The session says async_work when that is not rare.
        if (r.previous_unsettled) drop_last_sample();
        m.windows_ns.push_back(r.window_ns);
        last_timed = !r.unsettled;
        if (r.unsettled) ++m.unsettled_calls;
        else {
            const CallTime timed = call_time(r.window_ns, r.worker_call_ns, m.overhead_high_ns);
            m.samples_ns.push_back(timed.ns);
            last_clamped = timed.clamped;
            m.clamped_calls += timed.clamped ? 1 : 0;
        }

        // Reservoir sampling: after k calls each has been kept with probability verified / k.
        int keep_at = -1;
        if (static_cast<int>(m.kept.size()) < verified) keep_at = static_cast<int>(m.kept.size());
        else if (verified > 0) {
            const int j = std::uniform_int_distribution<int>(0, k - 1)(choice_rng);
            if (j < verified) keep_at = j;
        }
        if (keep_at == static_cast<int>(m.kept.size())) {
            m.kept.push_back(KeptCall{k, seed, copy_args(buffers.outputs, r.written_lengths), r.written_lengths});
        } else if (keep_at >= 0) {  // replaces an earlier kept call, in its memory
            KeptCall& kept = m.kept[static_cast<std::size_t>(keep_at)];
            kept.call = k;
            kept.seed = seed;
            copy_args_into(buffers.outputs, r.written_lengths, kept.outputs);
            kept.written_lengths = r.written_lengths;
        }
        m.stop = rule.check(m.samples_ns);
        if (m.stop.stop) break;
        if (Clock::now() >= deadline) {
            m.stop.stop = true;
            m.stop.reason = "time_budget";
            break;
        }
    }
    if (const CallResult quiet = session.finish_calls(deadline); quiet.outcome != RunOutcome::ok)
        failed(quiet, "after the timed calls");
    else if (quiet.previous_unsettled)
        drop_last_sample();
    if (m.outcome == RunOutcome::ok && m.samples_ns.empty() && m.unsettled_calls > 0) {
        m.outcome = RunOutcome::async_work;
        m.message = "none of the " + std::to_string(m.unsettled_calls) +
                    " timed calls left the worker idle after it said it was done: work was left running after the call returned";
    }
    return m;
}

}  // namespace hb
