#include "eval/evaluate.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "core/build_info.hpp"
#include "core/cache_dir.hpp"
#include "core/cpu_affinity.hpp"
#include "core/error.hpp"
#include "eval/baseline_timing.hpp"
#include "eval/build_submission.hpp"
#include "eval/golden_cache.hpp"
#include "eval/judge_candidate.hpp"
#include "eval/prepare_case.hpp"
#include "eval/score_case.hpp"
#include "eval/verify_timed_calls.hpp"
#include "hap/hardware_source.hpp"
#include "measure/cold_measure.hpp"
#include "measure/harness_environment.hpp"
#include "ops/resolve.hpp"
#include "targets/target.hpp"

namespace fs = std::filesystem;

namespace hb {

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

Clock::time_point after_seconds(double s) {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

std::string iso_now() {
    char buf[32];
    const std::time_t t = std::time(nullptr);
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

std::string self_dir() {
    char self[4096];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return ".";
    self[n] = '\0';
    return fs::path(self).parent_path().string();
}

std::string signature_of(const Problem& p) {
    std::string s;
    for (const auto& in : p.inputs) {
        if (!in.present) continue;
        if (!s.empty()) s += ", ";
        s += in.name + ":";
        if (in.tensors.empty()) continue;
        s += std::string(dtype_name(in.tensors[0].dtype));
        if (in.is_list) s += "[" + std::to_string(in.tensors.size()) + "]x";
        s += shape_to_string(in.tensors[0].shape);
    }
    return s;
}

// The same text from a case as written, for operators hapbench cannot resolve.
std::string signature_of(const CaseSpec& c, const Proto& proto) {
    std::string s;
    for (std::size_t i = 0; i < c.inputs.size() && i < proto.inputs.size(); ++i) {
        const CaseInput& in = c.inputs[i];
        if (!in.present) continue;
        if (!s.empty()) s += ", ";
        s += proto.inputs[i].name + ":";
        if (in.shapes.empty()) continue;
        s += std::string(dtype_name(in.dtype));
        if (in.is_list) s += "[" + std::to_string(in.shapes.size()) + "]x";
        s += shape_to_string(in.shapes[0]);
    }
    return s;
}

std::string ranges_of(const CaseSpec& c) {
    std::string s;
    for (const auto& in : c.inputs)
        if (in.present) s += (s.empty() ? "" : " ") + (in.range ? in.range->to_string() : std::string("default"));
    return s;
}

std::uint64_t input_bytes_of(const Problem& p) {
    std::uint64_t bytes = 0;
    for (const auto& a : p.inputs)
        for (const auto& t : a.tensors) bytes += t.bytes();
    return bytes;
}

// What a worker may map: its input slots and outputs, the largest case a few times over for
// the kernel's own buffers, and per thread its stack and malloc arena.
std::uint64_t worker_memory_limit(const std::vector<Problem>& problems, int threads) {
    std::uint64_t largest = 0, slots = 0;
    for (const auto& p : problems) {
        std::uint64_t bytes = input_bytes_of(p);
        slots = std::max(slots, static_cast<std::uint64_t>(TimingPlan::input_slots) * bytes);
        for (const auto& a : p.outputs)
            for (const auto& t : a.tensors) bytes += static_cast<std::uint64_t>(t.bytes());
        largest = std::max(largest, bytes);
    }
    return slots + 4 * largest + (4ull << 30) + static_cast<std::uint64_t>(threads) * (128ull << 20);
}

CaseResult describe_case(const OperatorResult& o, const Problem& p) {
    CaseResult c;
    c.op = o.op;
    c.level = o.level;
    c.case_id = p.case_id();
    c.signature = signature_of(p);
    c.input_elements = p.spec.total_input_elements();
    c.attrs = p.attrs;
    c.value_range = ranges_of(p.spec);
    return c;
}

TimingResult timing_from(const ColdMeasurement& m) {
    TimingResult t;
    for (double ns : m.samples_ns) t.samples_us.push_back(ns / 1e3);
    t.stats = summarize(t.samples_us);
    t.overhead_us = m.overhead_ns / 1e3;
    t.overhead_high_us = m.overhead_high_ns / 1e3;
    t.clamped_calls = m.clamped_calls;
    t.unsettled_calls = m.unsettled_calls;
    t.warmup_calls = m.warmup_calls;
    t.stop_reason = m.stop.reason;
    t.relative_error = m.stop.relative_error;
    t.unstable = !m.stop.target_met;
    t.source = "measured";
    return t;
}

// Everything an evaluation shares across operators.
struct RunContext {
    RunContext(const EvalOptions& o, RunResult& r, std::unique_ptr<Target> t)
        : options(o), run(r), target(std::move(t)) {}
    const EvalOptions& options;
    RunResult& run;
    std::unique_ptr<Target> target;
    std::optional<HardwareModel> model;
    Convention convention = Convention::hapbench;
    std::string work_dir, baseline_dir;
    std::optional<GoldenCache> goldens;
    std::string baseline_cache_dir;  // empty: no baseline cache
    SubmissionBuild builds;          // the submission's operators, built before the first case
    TimedInputSeeds seeds;
    std::mt19937_64 choice_rng{std::random_device{}()};  // which timed calls are verified: undisclosed
    Progress progress;
    Clock::time_point started = Clock::now();
    std::function<void(const Progress&)> on_progress;

    void report(const std::string& op, std::int64_t case_id) {
        progress.op = op;
        progress.case_id = case_id;
        progress.elapsed_s = seconds_since(started);
        progress.eta_s = progress.cases_done > 0
            ? progress.elapsed_s / progress.cases_done * (progress.cases_total - progress.cases_done) : 0;
        if (on_progress) on_progress(progress);
    }
    SessionOptions session_options(const std::string& op, const std::string& role, const std::vector<Problem>& problems) const {
        SessionOptions s{run.threads, run.cpus, work_dir + "/" + op + "." + role + ".log"};
        s.memory_limit_bytes = worker_memory_limit(problems, run.threads);
        s.cpu_limit_s = options.op_timeout_s * run.threads + 60;
        s.planned_cases = problems;
        return s;
    }
};

std::string candidate_source(const RunContext& ctx, const std::string& op) {
    return (fs::path(ctx.options.submission_dir) / (op + ".cpp")).string();
}

// The candidate's build, from the submission's build stage (which built every operator whose
// source exists); sets the operator's state when it cannot run.
bool build_candidate(RunContext& ctx, OperatorResult& opr) {
    const auto prebuilt = ctx.builds.results.find(opr.op);
    if (prebuilt == ctx.builds.results.end()) {
        opr.state = "missing";
        opr.message = "the submission has no " + opr.op + ".cpp";
        return false;
    }
    const BuildResult& build = prebuilt->second;
    ctx.run.phases.sandbox_s += build.check_seconds;
    opr.build = BuildInfo{build.command, build.log, build.seconds, build.ok};
    if (!build.ok) {
        opr.state = "compile_error";
        opr.message = "compile error: " + build.log.substr(0, 600);
        return false;
    }
    if (!build.rejection.empty()) {
        opr.state = "delegation";
        opr.message = build.rejection;
        return false;
    }
    return true;
}

// The candidate's part of one case: load, judge, time, verify. Fills c's status, gate and
// candidate timing.
void run_candidate(RunContext& ctx, KernelSession& session, const PreparedCase& prepared, CaseResult& c,
                   Clock::time_point deadline) {
    const Problem& problem = prepared.problem();
    const auto start = Clock::now();
    const CallResult loaded = session.load_case(problem, TimingPlan::input_slots, deadline);
    ctx.run.phases.load_s += seconds_since(start);
    if (loaded.outcome != RunOutcome::ok) {
        c.status = status_of(loaded.outcome);
        c.message = loaded.message;
        ctx.run.phases.candidate_s += seconds_since(start);
        return;
    }
    const auto judging = Clock::now();
    Judgement j = judge_candidate(session, prepared, deadline);
    if (j.status == CaseStatus::pass && ctx.options.two_trial) {
        Judgement second = judge_second_trial(session, prepared, ctx.options.eval_seed, deadline);
        if (second.status != CaseStatus::pass) j = std::move(second);
    }
    ctx.run.phases.correctness_s += seconds_since(judging);
    // With the baseline cache in use, nothing reads the case's base inputs or references again
    // (a baseline the cache lacks is measured after the operator's cases, from the case
    // prepared again): the timed calls and their verification run without them.
    if (!ctx.baseline_cache_dir.empty()) prepared.drop_references();
    c.status = j.status;
    c.message = j.message;
    c.gate = j.gate;
    c.nondeterministic_elements = j.nondeterministic_elements;
    if (c.nondeterministic_elements > 0 && c.status == CaseStatus::pass)
        c.audit.push_back("two identical calls differed in " + std::to_string(c.nondeterministic_elements) +
                          " output elements, within the tolerance");
    if (c.status != CaseStatus::pass || ctx.options.no_perf) {
        ctx.run.phases.candidate_s += seconds_since(start);
        return;
    }
    const auto timing = Clock::now();
    const ColdMeasurement cold = measure_cold(session, problem, prepared.op(), ctx.options.plan, ctx.seeds,
                                              ctx.choice_rng, deadline);
    ctx.run.phases.timed_calls_s += seconds_since(timing);
    ctx.run.phases.candidate_s += seconds_since(start);
    ctx.run.phases.prepare_calls_s += cold.prepare_s;
    if (cold.outcome != RunOutcome::ok) {
        c.status = status_of(cold.outcome);
        c.message = cold.message;
        return;
    }
    c.candidate = timing_from(cold);
    c.t_cand_us = c.candidate.stats.median;
    const auto verify_start = Clock::now();
    const TimedCallVerdict verdict = verify_timed_calls(prepared.op(), problem, cold.kept, ctx.run.threads);
    ctx.run.phases.verify_s += seconds_since(verify_start);
    c.verified_timed_calls = verdict.verified;
    c.audit.insert(c.audit.end(), verdict.allowances.begin(), verdict.allowances.end());
    if (!verdict.passed) {
        c.status = CaseStatus::cached_or_stale_output;
        c.message = "timed call " + std::to_string(verdict.failing_call) +
                    " returned outputs that do not match its own inputs: " + verdict.reason;
    }
}

void record_baseline(CaseResult& c, const BaselineMeasurement& m) {
    c.baseline = m.timing;
    c.baseline_status = m.status;
    if (c.baseline.measured()) c.t_base_measured_us = c.baseline.stats.median;
}

// The baseline's part of a case when it needs no measurement now: --no-perf, no baseline
// library, or a timing the cache holds. False when it must be measured.
bool baseline_without_measuring(RunContext& ctx, const BaselineTimings& baselines, const PreparedCase& prepared,
                                CaseResult& c) {
    if (ctx.options.no_perf) {
        c.baseline_status = "not measured: --no-perf";
        return true;
    }
    if (!baselines.available()) {
        c.baseline_status = "not measured: no baseline library " + baselines.library();
        return true;
    }
    const std::optional<BaselineMeasurement> m = baselines.cached(prepared);
    if (!m) return false;
    ++ctx.run.caches.baselines_from_cache;
    record_baseline(c, *m);
    return true;
}

void measure_baseline(RunContext& ctx, BaselineTimings& baselines, KernelSession& candidate, const PreparedCase& prepared,
                      CaseResult& c, Clock::time_point deadline) {
    // No candidate code may run while the baseline is timed: its worker goes.
    candidate.close();
    const auto start = Clock::now();
    const BaselineMeasurement m = baselines.measure(prepared, ctx.seeds, ctx.choice_rng, deadline);
    ctx.run.phases.baseline_s += seconds_since(start);
    ctx.run.phases.add_split(m.spent);
    ++ctx.run.caches.baselines_measured;
    record_baseline(c, m);
}

OperatorResult evaluate_operator(RunContext& ctx, const SelectedOperator& selected) {
    OperatorResult opr;
    opr.op = selected.entry->op;
    opr.level = selected.entry->level;
    std::vector<Problem> problems;
    if (selected.op)
        for (const auto& spec : selected.cases) problems.push_back(resolve_problem(selected.entry->proto, *selected.op, spec));
    auto fail_all = [&](CaseStatus status) {
        for (const auto& p : problems) {
            CaseResult c = describe_case(opr, p);
            c.status = status;
            c.message = opr.message;
            opr.cases.push_back(std::move(c));
            ++ctx.progress.cases_done;
        }
    };
    if (!selected.op) {
        opr.state = "not_implemented";
        opr.message = "hapbench does not implement " + opr.op + " yet";
        // Its public cases are listed NOT_RUN, so the results show what was left out; a hidden
        // split has none (it is drawn by the operator's own rules, which hapbench lacks).
        // They add nothing to the score and do not make eval fail (exit codes count evaluated
        // cases only).
        if (ctx.options.split.split == "public") {
            const auto& ids = ctx.options.split.case_ids;
            for (const auto& spec : selected.entry->cases) {
                if (!ids.empty() && std::find(ids.begin(), ids.end(), spec.case_id) == ids.end()) continue;
                CaseResult c;
                c.op = opr.op;
                c.level = opr.level;
                c.case_id = spec.case_id;
                c.signature = signature_of(spec, selected.entry->proto);
                c.input_elements = spec.total_input_elements();
                c.attrs = spec.attrs;
                c.value_range = ranges_of(spec);
                c.status = CaseStatus::not_run;
                c.message = opr.message;
                opr.cases.push_back(std::move(c));
            }
        }
        score_operator(opr);
        return opr;
    }
    const Operator& op = *selected.op;
    opr.baseline = op.baseline_description();
    ctx.report(opr.op, 0);
    if (!build_candidate(ctx, opr)) {
        fail_all(opr.state == "missing" ? CaseStatus::missing
                 : opr.state == "delegation" ? CaseStatus::delegation : CaseStatus::compile_error);
        score_operator(opr);
        return opr;
    }
    opr.state = "evaluated";
    SessionOptions candidate_options = ctx.session_options(opr.op, "candidate", problems);
    candidate_options.sandbox = ctx.options.sandbox;
    auto candidate = ctx.target->open_session(opr.op, ctx.work_dir + "/build/" + opr.op + ".so", candidate_options);
    // The baseline is hapbench's own code: limited, not sandboxed (oneDNN generates code).
    SessionOptions baseline_options = ctx.session_options(opr.op, "baseline", problems);
    baseline_options.sandbox = false;
    BaselineTimings baselines(*ctx.target, opr.op, ctx.baseline_dir + "/" + opr.op + ".so", baseline_options,
                              ctx.options.plan, ctx.model ? hardware_fingerprint(*ctx.model) : "", ctx.baseline_cache_dir,
                              false);
    const auto candidate_deadline = after_seconds(ctx.options.op_timeout_s);
    bool budget_spent = false;
    // Baselines kept in the cache (measured once per machine) are measured after the
    // candidate's cases; live ones (--live-baseline, --no-cache) case by case, interleaved
    // with the candidate's, as they always were.
    const bool defer_baselines = !ctx.baseline_cache_dir.empty();
    std::vector<std::size_t> unmeasured;  // indexes into opr.cases (and problems)
    auto score = [&](CaseResult& c) {
        if (ctx.model) score_case(c, *ctx.model, ctx.options.calibrated_margin, ctx.convention);
        ++ctx.progress.cases_done;
    };

    for (const auto& problem : problems) {
        ctx.report(opr.op, problem.case_id());
        CaseResult c = describe_case(opr, problem);
        if (ctx.model) bound_case(c, op, problem, *ctx.model, ctx.convention);
        if (budget_spent) {
            c.status = CaseStatus::timeout;
            c.message = "not run: the operator's " + std::to_string(static_cast<int>(ctx.options.op_timeout_s)) +
                        " s time budget was spent by an earlier case";
            opr.cases.push_back(std::move(c));
            ++ctx.progress.cases_done;
            continue;
        }
        const PreparedCase prepared(op, problem, ctx.options.eval_seed, ctx.goldens ? &*ctx.goldens : nullptr, ctx.run.phases);
        c.golden_source = prepared.golden_source();
        (c.golden_source == "cache" ? ctx.run.caches.goldens_from_cache : ctx.run.caches.goldens_computed)++;
        run_candidate(ctx, *candidate, prepared, c, candidate_deadline);
        if (c.status == CaseStatus::timeout) budget_spent = true;
        const bool to_measure = !baseline_without_measuring(ctx, baselines, prepared, c);
        if (to_measure && defer_baselines) {
            unmeasured.push_back(opr.cases.size());
            opr.cases.push_back(std::move(c));
            continue;
        }
        if (to_measure) measure_baseline(ctx, baselines, *candidate, prepared, c, after_seconds(ctx.options.op_timeout_s));
        score(c);
        opr.cases.push_back(std::move(c));
    }
    // Baselines the cache lacked, after the candidate's last case: its worker closes once, not
    // once a case (a closed worker costs the next case a fresh start and its memory mapped
    // again). Each case's inputs and golden are prepared again (the golden from the cache).
    for (std::size_t index : unmeasured) {
        CaseResult& c = opr.cases[index];
        ctx.report(opr.op, c.case_id);
        const auto start = Clock::now();
        PhaseTimes again;
        const PreparedCase prepared(op, problems[index], ctx.options.eval_seed, ctx.goldens ? &*ctx.goldens : nullptr, again);
        ctx.run.phases.baseline_s += seconds_since(start);
        measure_baseline(ctx, baselines, *candidate, prepared, c, after_seconds(ctx.options.op_timeout_s));
        score(c);
    }
    const SessionFacts facts = candidate->facts();
    ctx.run.phases.sandbox_s += facts.setup_ns_total * 1e-9;
    if (facts.workers_started > 0) {
        ctx.run.sandbox.landlock_abi = facts.landlock_abi;
        ctx.run.sandbox.landlock_note = facts.landlock_note;
    }
    score_operator(opr);
    return opr;
}

}  // namespace

RunResult evaluate(const EvalOptions& options, const std::function<void(const Progress&)>& on_progress) {
    RunResult run;
    run.hapbench_version = hapbench_version();
    run.started_at = iso_now();
    run.target = options.target;
    run.submission = options.submission_dir;
    run.tasks_dir = options.tasks_dir;
    run.profile = options.profile;
    run.split = options.split.split;
    run.eval_seed = options.eval_seed;
    run.no_perf = options.no_perf;
    run.two_trial = options.two_trial;
    run.live_baseline = options.live_baseline;
    run.op_timeout_s = options.op_timeout_s;
    run.build_timeout_s = options.build_timeout_s;
    run.timing_plan = options.plan;
    // An unknown convention is refused before anything is read, built or calibrated.
    const Convention convention = parse_convention(options.convention);
    run.t_hw_convention = std::string(convention_name(convention));

    if (!fs::is_directory(options.submission_dir))
        throw Error("submission directory '" + options.submission_dir + "' does not exist");
    // Read and validate everything before any work: a bad case file stops the run here.
    const CaseSelection selection = select_cases(options.tasks_dir, options.profile, options.ops, options.split);
    run.suite_hash = selection.tasks.suite_hash;
    run.split_id = split_id(options.split, options.profile);

    RunContext ctx{options, run, make_target(options.target)};
    ctx.convention = convention;
    ctx.on_progress = on_progress;
    ctx.progress.cases_total = selection.case_count();
    const std::vector<int> all_cpus = allowed_cpus();
    run.threads = options.threads > 0 ? std::min<int>(options.threads, static_cast<int>(all_cpus.size()))
                                      : static_cast<int>(all_cpus.size());
    run.cpus.assign(all_cpus.begin(), all_cpus.begin() + run.threads);
    run.sandbox.enabled = options.sandbox;
    run.harness_threads_passive = harness_threads_passive();
    run.compiler_version = ctx.target->compiler_version();
    run.compiler_command = ctx.target->build_description();
    run.libraries = {{"onednn", dnnl_version()}};

    // Correctness-only runs need no hardware model unless one is named: no calibration.
    if (!options.no_perf || !options.hardware.empty())
        ctx.model = resolve_hardware_model(options.hardware, false, options.recalibrate);
    if (ctx.model && hardware_kind_name(ctx.model->kind) != ctx.target->hardware_kind())
        throw Error(fmt::format("hardware model '{}' describes a {} device, but the {} target scores against a model of "
                                "kind {}: omit --hardware for this machine's own, or name one of kind {}",
                                ctx.model->name, hardware_kind_name(ctx.model->kind), ctx.target->name(),
                                ctx.target->hardware_kind(), ctx.target->hardware_kind()));
    run.hardware = ctx.model;

    // Caches. A golden is an answer key: it is kept only where the candidate cannot read it.
    run.caches.dir = hapbench_cache_dir();
    if (options.no_cache) {
        run.caches.note = "--no-cache";
    } else if (!options.sandbox) {
        run.caches.note = "golden cache off: --no-sandbox leaves the candidate's files unconfined";
    } else if (!ctx.target->confines_files()) {
        run.caches.note = "golden cache off: this kernel has no Landlock, so a candidate's worker could read it";
    } else {
        run.caches.goldens = true;
        ctx.goldens.emplace(run.caches.dir + "/goldens", golden_cache_limit_bytes());
    }
    if (!options.no_cache && !options.live_baseline && !options.no_perf) {
        run.caches.baselines = true;
        ctx.baseline_cache_dir = run.caches.dir + "/baselines";
    }

    ctx.work_dir = options.work_dir.empty()
        ? (fs::temp_directory_path() / ("hapbench-" + std::to_string(getpid()))).string()
        : options.work_dir;
    fs::create_directories(ctx.work_dir);
    ctx.baseline_dir = options.baseline_dir.empty() ? self_dir() + "/baselines" : options.baseline_dir;

    std::vector<std::pair<std::string, std::string>> sources;
    for (const auto& selected : selection.operators)
        if (std::string source = candidate_source(ctx, selected.entry->op); selected.op && fs::exists(source))
            sources.emplace_back(selected.entry->op, std::move(source));
    ctx.builds = build_submission(*ctx.target, sources, ctx.work_dir + "/build", options.build_timeout_s, run.threads);
    run.phases.build_s += ctx.builds.seconds;

    for (const auto& selected : selection.operators) {
        OperatorResult opr = evaluate_operator(ctx, selected);
        run.level_scores[opr.level] += opr.score.op_score;
        run.total_score += opr.score.op_score;
        run.operators.push_back(std::move(opr));
    }
    if (options.work_dir.empty()) {
        std::error_code ignored;
        fs::remove_all(ctx.work_dir, ignored);
    }
    if (ctx.goldens && ctx.goldens->not_stored() > 0) {
        run.caches.goldens_not_stored = ctx.goldens->not_stored();
        run.caches.note = "goldens not stored: " + ctx.goldens->not_stored_reason();
    }
    run.phases.total_s = seconds_since(ctx.started);
    ctx.report("", 0);
    return run;
}

std::vector<std::string> measure_baselines(const EvalOptions& options, bool refresh,
                                           const std::function<void(const Progress&)>& on_progress) {
    const CaseSelection selection = select_cases(options.tasks_dir, options.profile, options.ops, options.split);
    const auto target = make_target(options.target);
    const HardwareModel model = resolve_hardware_model(options.hardware, false, options.recalibrate);
    const std::vector<int> all_cpus = allowed_cpus();
    const int threads = options.threads > 0 ? std::min<int>(options.threads, static_cast<int>(all_cpus.size()))
                                            : static_cast<int>(all_cpus.size());
    const std::string baseline_dir = options.baseline_dir.empty() ? self_dir() + "/baselines" : options.baseline_dir;
    const std::string cache_dir = options.no_cache ? "" : hapbench_cache_dir() + "/baselines";
    PhaseTimes phases;
    TimedInputSeeds seeds;
    std::mt19937_64 rng{std::random_device{}()};
    Progress progress;
    progress.cases_total = selection.case_count();
    const auto started = Clock::now();
    std::vector<std::string> lines;
    for (const auto& selected : selection.operators) {
        if (!selected.op) continue;
        std::vector<Problem> problems;
        for (const auto& spec : selected.cases) problems.push_back(resolve_problem(selected.entry->proto, *selected.op, spec));
        SessionOptions s{threads, std::vector<int>(all_cpus.begin(), all_cpus.begin() + threads), ""};
        s.sandbox = false;
        s.memory_limit_bytes = worker_memory_limit(problems, threads);
        s.cpu_limit_s = options.op_timeout_s * threads + 60;
        s.planned_cases = problems;
        BaselineTimings baselines(*target, selected.entry->op, baseline_dir + "/" + selected.entry->op + ".so", s,
                                  options.plan, hardware_fingerprint(model), cache_dir, refresh);
        const auto deadline = after_seconds(options.op_timeout_s);
        for (const auto& problem : problems) {
            progress.op = selected.entry->op;
            progress.case_id = problem.case_id();
            progress.elapsed_s = seconds_since(started);
            if (on_progress) on_progress(progress);
            const PreparedCase prepared(*selected.op, problem, options.eval_seed, nullptr, phases);
            std::optional<BaselineMeasurement> m = baselines.cached(prepared);
            const bool from_cache = m.has_value();
            if (!m) m = baselines.measure(prepared, seeds, rng, deadline);
            lines.push_back(fmt::format("{:<26} case {:>3}  {:>12.2f} us  {}{}", selected.entry->op, problem.case_id(),
                                        m->timing.stats.median, m->status, from_cache ? " (cached)" : ""));
            ++progress.cases_done;
        }
    }
    progress.op.clear();
    if (on_progress) on_progress(progress);
    return lines;
}

}  // namespace hb
