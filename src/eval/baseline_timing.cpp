#include "eval/baseline_timing.hpp"

#include <ctime>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/cache_dir.hpp"
#include "core/sha256.hpp"
#include "eval/judge_candidate.hpp"
#include "hap/hardware_model.hpp"
#include "measure/cold_measure.hpp"

namespace hb {

namespace {

nlohmann::json timing_to_json(const TimingResult& t) {
    return {{"samples_us", t.samples_us}, {"overhead_us", t.overhead_us}, {"overhead_high_us", t.overhead_high_us},
            {"clamped_calls", t.clamped_calls}, {"unsettled_calls", t.unsettled_calls}, {"warmup_calls", t.warmup_calls},
            {"stop_reason", t.stop_reason}, {"relative_error", t.relative_error}, {"unstable", t.unstable}};
}

TimingResult timing_from_json(const nlohmann::json& j) {
    TimingResult t;
    t.samples_us = j.at("samples_us").get<std::vector<double>>();
    t.stats = summarize(t.samples_us);
    t.overhead_us = j.at("overhead_us");
    t.overhead_high_us = j.value("overhead_high_us", 0.0);
    t.clamped_calls = j.value("clamped_calls", 0);
    t.unsettled_calls = j.value("unsettled_calls", 0);
    t.warmup_calls = j.at("warmup_calls");
    t.stop_reason = j.at("stop_reason");
    t.relative_error = j.at("relative_error");
    t.unstable = j.at("unstable");
    return t;
}

std::string file_hash(const std::string& path) {
    const auto bytes = read_file(path);
    return bytes ? sha256_hex(*bytes) : "";
}

}  // namespace

std::string hardware_fingerprint(const HardwareModel& model) { return sha256_hex(to_yaml(model)); }

BaselineTimings::BaselineTimings(const Target& target, std::string op, std::string baseline_library, SessionOptions options,
                                 TimingPlan plan, std::string hardware_fingerprint, std::string cache_dir, bool refresh)
    : target_(target), op_(std::move(op)), library_(std::move(baseline_library)), options_(std::move(options)),
      plan_(std::move(plan)), hardware_fingerprint_(std::move(hardware_fingerprint)), cache_dir_(std::move(cache_dir)),
      refresh_(refresh), library_hash_(file_hash(library_)) {}

BaselineTimings::~BaselineTimings() = default;

void BaselineTimings::close() { session_.reset(); }

// The first line names the timing method: 2 since the worker maps its shared memory
// populated (no page faults on the case's buffers inside timed calls); 3 since the worker's
// threads are bound one CPU each and the harness's OpenMP helpers sleep instead of spinning
// (measure/harness_environment.hpp); 4 since the worker reads every page of an input slot
// when it first binds it, outside the timed window (a hypervisor that shadows page tables
// charged that first access to the first timed call on each slot); 5 since warmup calls run
// on every timed slot and a case has at most three slots; 6 since a case has two slots and
// timed calls alternate between them, the base inputs' slot included; 7 since that slot takes
// no warmup call, the correctness call having warmed it (measure/timing_plan.hpp).
std::string BaselineTimings::key(const PreparedCase& prepared) const {
    return sha256_hex(fmt::format("hapbench baseline timing 7\nhardware={}\nthreads={}\nlibrary={}\nplan={}\nseed={}\n{}",
                                  hardware_fingerprint_, options_.threads, library_hash_, plan_.describe(),
                                  prepared.input_seed(), prepared.problem().canonical()));
}

std::optional<BaselineMeasurement> BaselineTimings::cached(const PreparedCase& prepared) const {
    if (cache_dir_.empty() || refresh_ || !available()) return std::nullopt;
    const auto text = read_file(cache_dir_ + "/" + key(prepared) + ".json");
    if (!text) return std::nullopt;
    try {
        const auto j = nlohmann::json::parse(*text);
        BaselineMeasurement m{timing_from_json(j.at("timing")), j.at("status"), {}};
        m.timing.source = "cache";
        return m;
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;  // a damaged entry is measured again and replaced
    }
}

BaselineMeasurement BaselineTimings::measure(const PreparedCase& prepared, const TimedInputSeeds& seeds,
                                             std::mt19937_64& rng, Clock::time_point deadline) {
    BaselineMeasurement m;
    auto stage = Clock::now();
    auto lap = [&stage] {
        const auto now = Clock::now();
        const double s = std::chrono::duration<double>(now - stage).count();
        stage = now;
        return s;
    };
    if (!session_) session_ = target_.open_session(op_, library_, options_);
    const Problem& problem = prepared.problem();
    const CallResult loaded = session_->load_case(problem, TimingPlan::input_slots, deadline);
    m.spent.load_s = lap();
    if (loaded.outcome != RunOutcome::ok) {
        m.status = "failed: " + loaded.message;
        session_.reset();
        return m;
    }
    // One correctness call: a baseline that computes something else is reported, not hidden.
    const CaseBuffers& buffers = session_->buffers();
    write_inputs(buffers, 0, prepared.inputs());
    prepare_call_buffers(buffers, 0, 0xff);
    const CallResult first = session_->call(0, deadline, CallCheck::thorough);
    if (first.outcome != RunOutcome::ok) {
        m.status = "failed: " + first.message;
        session_.reset();
        return m;
    }
    const OutputVerdictSummary verdict = prepared.judge(copy_args(buffers.outputs, first.written_lengths));
    m.spent.correctness_s = lap();
    TimingPlan plan = plan_;
    plan.verified_calls = 0;  // hapbench's own kernel: its outputs are judged once, above
    const ColdMeasurement cold = measure_cold(*session_, problem, prepared.op(), plan, seeds, rng, deadline);
    m.spent.timed_calls_s = lap();
    m.spent.prepare_calls_s = cold.prepare_s;
    if (cold.outcome != RunOutcome::ok) {
        m.status = "failed: " + cold.message;
        session_.reset();
        return m;
    }
    for (double ns : cold.samples_ns) m.timing.samples_us.push_back(ns / 1e3);
    m.timing.stats = summarize(m.timing.samples_us);
    m.timing.overhead_us = cold.overhead_ns / 1e3;
    m.timing.overhead_high_us = cold.overhead_high_ns / 1e3;
    m.timing.clamped_calls = cold.clamped_calls;
    m.timing.unsettled_calls = cold.unsettled_calls;
    m.timing.warmup_calls = cold.warmup_calls;
    m.timing.stop_reason = cold.stop.reason;
    m.timing.relative_error = cold.stop.relative_error;
    m.timing.unstable = !cold.stop.target_met;
    m.timing.source = "measured";
    m.status = verdict.status == CaseStatus::pass
                   ? "measured"
                   : "measured; its outputs fail (" + status_name(verdict.status) + "): " + verdict.reason;
    if (!cache_dir_.empty() && available()) {
        char when[32];
        const std::time_t t = std::time(nullptr);
        std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
        write_file_atomically(cache_dir_ + "/" + key(prepared) + ".json",
                              nlohmann::json{{"op", op_}, {"case_id", problem.case_id()}, {"measured_at", when},
                                             {"timing", timing_to_json(m.timing)}, {"status", m.status}}
                                  .dump());
    }
    return m;
}

}  // namespace hb
