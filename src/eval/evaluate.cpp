#include "eval/evaluate.hpp"

#include <sched.h>
#include <unistd.h>

#include <cmath>
#include <ctime>
#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "core/build_info.hpp"
#include "core/error.hpp"
#include "hap/hardware_source.hpp"
#include "hap/solver.hpp"
#include "measure/input_rotation.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "suite/inputs.hpp"
#include "suite/split.hpp"
#include "suite/task_dir.hpp"
#include "targets/cpu/compiler.hpp"
#include "targets/target.hpp"
#include "verify/distinct_indices.hpp"
#include "verify/precision_gate.hpp"
#include "verify/thresholds.hpp"
#include "verify/written_length.hpp"

namespace fs = std::filesystem;

namespace hb {

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::vector<int> allowed_cpus() {
    cpu_set_t set;
    std::vector<int> cpus;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set)) cpus.push_back(c);
    if (cpus.empty()) cpus.push_back(0);
    return cpus;
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

std::string ranges_of(const CaseSpec& c) {
    std::string s;
    for (const auto& in : c.inputs)
        if (in.present) s += (s.empty() ? "" : " ") + (in.range ? in.range->to_string() : std::string("default"));
    return s;
}

CaseStatus status_of(RunOutcome o) {
    switch (o) {
        case RunOutcome::ok: return CaseStatus::pass;
        case RunOutcome::kernel_error: return CaseStatus::kernel_error;
        case RunOutcome::crash: return CaseStatus::crash;
        case RunOutcome::timeout: return CaseStatus::timeout;
        case RunOutcome::out_of_bounds: return CaseStatus::out_of_bounds;
        case RunOutcome::input_mutation: return CaseStatus::input_mutation;
        case RunOutcome::load_error: return CaseStatus::compile_error;
        case RunOutcome::async_work: return CaseStatus::async_work;
        case RunOutcome::sandbox_violation: return CaseStatus::sandbox_violation;
        case RunOutcome::resource_limit: return CaseStatus::resource_limit;
    }
    return CaseStatus::crash;
}

// What a worker may map: the timed-input pool, a few copies of the largest case (inputs,
// outputs, shared memory, guard pages), and per thread its stack and malloc arena.
std::uint64_t worker_memory_limit(const std::vector<Problem>& problems, const TimingPlan& plan, int threads) {
    std::uint64_t largest = 0;
    for (const auto& p : problems) {
        std::uint64_t bytes = 0;
        for (const auto* args : {&p.inputs, &p.outputs})
            for (const auto& a : *args)
                for (const auto& t : a.tensors) bytes += static_cast<std::uint64_t>(t.bytes());
        largest = std::max(largest, bytes);
    }
    return static_cast<std::uint64_t>(plan.pool_bytes) + 4 * largest + (4ull << 30) +
           static_cast<std::uint64_t>(threads) * (128ull << 20);
}

// Two correctness calls on identical inputs may differ only as a reordered reduction can:
// within the gate's tau on the relative scale (integer outputs: its absolute tolerance).
std::string nondeterminism_finding(const Problem& problem, const CaseRun& run) {
    static const std::map<DType, double> no_overrides;
    const auto& overrides = problem.proto ? problem.proto->tau_overrides : no_overrides;
    for (const auto& [name, difference] : run.max_call_difference) {
        for (const auto& out : problem.outputs) {
            if (out.name != name || out.tensors.empty()) continue;
            const Thresholds th = thresholds_for(out.tensors[0].dtype, overrides);
            const double allowed = th.integer() ? th.abs_tolerance() : th.tau;
            if (difference > allowed)
                return fmt::format("two calls on identical inputs gave different {} (largest difference {:.3g}, allowed {:.3g}): "
                                   "the kernel reads memory it did not initialize, or races",
                                   name, difference, allowed);
        }
    }
    return "";
}

struct References {
    ValueArgs<double> inputs, golden, same_precision;
    bool has_same_precision = false;
};

// The golden; the same-precision reference waits until the gate needs it (gate_case).
References compute_references(const Operator& op, const Problem& p, const std::vector<Arg>& inputs) {
    References r;
    r.inputs = values_from_args(inputs);
    r.golden = values_for_specs<double>(p.outputs);
    r.same_precision = values_for_specs<double>(p.outputs);
    for (auto& a : r.same_precision)
        for (auto& t : a.tensors) t.v.clear();
    op.golden(p, r.inputs, r.golden);
    return r;
}

// Runs the precision gate; the same-precision reference is computed only when the
// fallback needs it (the gate reports that by throwing an internal error for an empty one).
// Outputs of data-dependent length: a reported length the judge refuses fails here too
// (timed and baseline outputs come this way unjudged), and the gate sees only the prefix.
GateResult gate_case(const Operator& op, const Problem& p, const std::vector<Arg>& outputs, References& refs) {
    ValueArgs<double> candidate = values_from_args(outputs);
    const bool variable = has_variable_length_outputs(p);
    if (variable) {
        if (const auto lengths = judge_written_lengths(p, candidate, refs.golden); lengths.status != CaseStatus::pass) {
            GateResult refused;
            refused.reason = lengths.reason;
            return refused;
        }
        candidate = cut_to_written_prefix(p, refs.golden, std::move(candidate));
    }
    const Problem gated = variable ? written_prefix_problem(p, refs.golden) : Problem{};
    const Problem& gp = variable ? gated : p;
    const ValueArgs<double> golden_cut = variable ? cut_to_written_prefix(p, refs.golden, refs.golden) : ValueArgs<double>{};
    const ValueArgs<double>& golden = variable ? golden_cut : refs.golden;
    auto gate = [&] {
        GateResult result = variable ? run_precision_gate(gp, candidate, golden,
                                                          cut_to_written_prefix(p, refs.golden, refs.same_precision), refs.inputs)
                                     : run_precision_gate(gp, candidate, golden, refs.same_precision, refs.inputs);
        apply_distinct_index_rule(gp, candidate, result);
        return result;
    };
    if (!refs.has_same_precision) {
        try {
            return gate();
        } catch (const Error& e) {
            if (e.code() != ExitCode::internal) throw;
        }
        refs.same_precision = values_for_specs<double>(p.outputs);
        op.same_precision(p, refs.inputs, refs.same_precision);
        refs.has_same_precision = true;
    }
    return gate();
}

// Outputs of data-dependent length, before anything looks at their values: both correctness
// calls' lengths within the capacity, the first call's equal to the golden's
// (verify/written_length.hpp). Empty when the lengths pass.
WrittenLengthVerdict judge_reported_lengths(const Problem& p, const CaseRun& run, const References& refs) {
    ValueArgs<double> reported(run.outputs.size());
    for (std::size_t a = 0; a < run.outputs.size(); ++a) {
        reported[a].name = run.outputs[a].name;
        for (const auto& t : run.outputs[a].tensors)
            reported[a].tensors.push_back({t.spec, {}, run.outputs[a].variable_length ? run.outputs[a].written_length : -1});
    }
    for (std::size_t a = 0; a < p.outputs.size() && a < run.second_call_written_lengths.size(); ++a) {
        if (!p.outputs[a].present || !p.outputs[a].variable_length) continue;
        if (auto v = check_length_in_capacity(p.outputs[a], run.second_call_written_lengths[a], "the second correctness call");
            v.status != CaseStatus::pass)
            return v;
    }
    return judge_written_lengths(p, reported, refs.golden);
}

// Two correctness calls that reported different lengths for an output of data-dependent
// length; "" when they agree.
std::string length_nondeterminism(const Problem& p, const CaseRun& run) {
    for (std::size_t a = 0; a < p.outputs.size() && a < run.second_call_written_lengths.size(); ++a) {
        if (!p.outputs[a].present || !p.outputs[a].variable_length) continue;
        if (run.outputs[a].written_length != run.second_call_written_lengths[a])
            return fmt::format("two calls on identical inputs reported different lengths of {} ({} and {})",
                               p.outputs[a].name, run.outputs[a].written_length, run.second_call_written_lengths[a]);
    }
    return "";
}

// Two-trial mode, trial 2: inputs regenerated with seed + 1, 0.01 added to every floating one.
std::vector<Arg> second_trial_inputs(const Operator& op, const Problem& p, std::uint64_t eval_seed) {
    auto inputs = generate_inputs(p, op, eval_seed + 1);
    for (auto& a : inputs)
        for (auto& t : a.tensors)
            if (is_floating(t.spec.dtype))
                for (std::int64_t i = 0; i < t.numel(); ++i) t.set(static_cast<std::size_t>(i), t.get(static_cast<std::size_t>(i)) + 0.01);
    return inputs;
}

struct OperatorPlan {
    const TaskEntry* entry;
    const Operator* op;
    std::vector<Problem> problems;
};

}  // namespace

RunResult evaluate(const EvalOptions& options, const std::function<void(const Progress&)>& on_progress) {
    const auto run_start = Clock::now();
    RunResult run;
    run.hapbench_version = hapbench_version();
    run.started_at = iso_now();
    run.target = options.target;
    run.submission = options.submission_dir;
    run.tasks_dir = options.tasks_dir;
    run.profile = options.profile;
    run.split = options.split;
    run.eval_seed = options.eval_seed;

    if (options.split != "public" && options.split != "hidden")
        throw Error("--split must be public or hidden, not '" + options.split + "'");
    if (options.split == "hidden" && !options.hidden_seed)
        throw Error("--split hidden needs --hidden-seed S (the secret seed the hidden cases are drawn from)");
    if (!fs::is_directory(options.submission_dir))
        throw Error("submission directory '" + options.submission_dir + "' does not exist");
    run.hidden_seed = options.hidden_seed.value_or(0);

    // Read and validate everything before any work: a bad case file stops the run here.
    const TaskDir tasks = load_task_dir(options.tasks_dir, options.profile, options.ops);
    run.suite_hash = tasks.suite_hash;
    std::vector<OperatorPlan> plans;
    int total_cases = 0;
    for (const auto& entry : tasks.tasks) {
        OperatorPlan plan{&entry, find_operator(entry.op), {}};
        if (plan.op) {
            std::vector<CaseSpec> specs = options.split == "hidden"
                ? generate_cases(*plan.op, entry.proto, profile_by_name(options.profile), *options.hidden_seed,
                                 options.hidden_count, 1)
                : entry.cases;
            for (const auto& spec : specs) {
                if (!options.case_ids.empty() &&
                    std::find(options.case_ids.begin(), options.case_ids.end(), spec.case_id) == options.case_ids.end())
                    continue;
                plan.problems.push_back(resolve_problem(entry.proto, *plan.op, spec));
            }
            total_cases += static_cast<int>(plan.problems.size());
        }
        plans.push_back(std::move(plan));
    }
    // A public split with no cases file for the profile (the shipped suite has cpu cases
    // only) would otherwise "pass" an empty run.
    if (total_cases == 0 && options.split == "public" && !tasks.has_cases())
        throw Error("no public cases for profile '" + options.profile + "' in " + options.tasks_dir +
                    " (no levelN/<op>/cases." + options.profile + ".yaml or cases.yaml); draw some with `hapbench gen-cases --profile " +
                    options.profile + "`, or use --split hidden");
    if (!options.case_ids.empty() && total_cases == 0)
        throw Error("no case matches the --case ids given");

    const auto target = make_target(options.target);
    const std::vector<int> all_cpus = allowed_cpus();
    const int threads = options.threads > 0 ? std::min<int>(options.threads, static_cast<int>(all_cpus.size()))
                                            : static_cast<int>(all_cpus.size());
    run.threads = threads;
    run.cpus.assign(all_cpus.begin(), all_cpus.begin() + threads);
    run.sandbox = options.sandbox;
    run.timing_plan = {{"warmup", options.plan.warmup}, {"min_repeat", options.plan.min_repeat},
                       {"max_repeat", options.plan.max_repeat}, {"target_s", options.plan.target_s},
                       {"verified_timed_calls", options.verified_timed_calls}, {"no_perf", options.no_perf},
                       {"two_trial", options.two_trial}, {"op_timeout_s", options.op_timeout_s},
                       {"build_timeout_s", options.build_timeout_s}, {"cache_eviction", "clflushopt of inputs, outputs, workspace before every call"},
                       {"input_rotation", "circular shift per timed call, fresh addresses"}};
    run.compiler = {{"version", cpu_compiler_version()}, {"command", target->build_description()}};
    run.libraries = {{"onednn", dnnl_version()}};

    // Correctness-only runs need no hardware model unless one is named: no calibration.
    std::optional<HardwareModel> model;
    if (!options.no_perf || !options.hardware.empty()) model = resolve_hardware_model(options.hardware, false, options.recalibrate);
    if (model && hardware_kind_name(model->kind) != target->hardware_kind())
        throw Error(fmt::format("hardware model '{}' describes a {} device, but the {} target scores against a model of "
                                "kind {}: omit --hardware for this machine's own, or name one of kind {}",
                                model->name, hardware_kind_name(model->kind), target->name(), target->hardware_kind(),
                                target->hardware_kind()));
    run.hardware = model ? hardware_model_summary(*model) : nlohmann::json{{"name", "none"}, {"origin", "not used: --no-perf"}};
    const bool calibrated = model && model->provenance.origin == PeakOrigin::calibrated;

    const std::string work_dir = options.work_dir.empty()
        ? (fs::temp_directory_path() / ("hapbench-" + std::to_string(getpid()))).string()
        : options.work_dir;
    fs::create_directories(work_dir);
    const std::string baseline_dir = options.baseline_dir.empty() ? self_dir() + "/baselines" : options.baseline_dir;

    std::random_device entropy;  // the verified subset is undisclosed and unpredictable
    std::mt19937_64 verify_rng((static_cast<std::uint64_t>(entropy()) << 32) ^ entropy());

    Progress progress;
    progress.cases_total = total_cases;
    auto report_progress = [&](const std::string& op, std::int64_t case_id) {
        progress.op = op;
        progress.case_id = case_id;
        progress.elapsed_s = seconds_since(run_start);
        progress.eta_s = progress.cases_done > 0
            ? progress.elapsed_s / progress.cases_done * (progress.cases_total - progress.cases_done) : 0;
        if (on_progress) on_progress(progress);
    };

    for (auto& plan : plans) {
        OperatorResult opr;
        opr.op = plan.entry->op;
        opr.level = plan.entry->level;
        if (!plan.op) {
            opr.state = "not_implemented";
            opr.message = "hapbench does not implement " + opr.op + " yet (known: " + known_operator_names() + ")";
            run.operators.push_back(std::move(opr));
            continue;
        }
        const Operator& op = *plan.op;
        opr.baseline = op.baseline_description();
        auto fail_all = [&](CaseStatus status, const std::string& message) {
            for (const auto& p : plan.problems) {
                CaseResult c;
                c.op = opr.op;
                c.level = opr.level;
                c.case_id = p.case_id();
                c.status = status;
                c.message = message;
                c.signature = signature_of(p);
                c.input_elements = p.spec.total_input_elements();
                c.attrs = p.attrs;
                c.value_range = ranges_of(p.spec);
                opr.cases.push_back(std::move(c));
                ++progress.cases_done;
            }
        };

        const std::string source = (fs::path(options.submission_dir) / (opr.op + ".cpp")).string();
        if (!fs::exists(source)) {
            opr.state = "missing";
            opr.message = "the submission has no " + opr.op + ".cpp";
            fail_all(CaseStatus::missing, opr.message);
        } else {
            report_progress(opr.op, 0);
            const auto build_start = Clock::now();
            const BuildResult build = target->build(opr.op, source, work_dir + "/build", options.build_timeout_s);
            run.phases.build_s += seconds_since(build_start);
            run.phases.sandbox_s += build.check_seconds;
            opr.build = BuildInfo{build.command, build.log, build.seconds, build.ok};
            if (!build.ok) {
                opr.state = "compile_error";
                opr.message = "compile error: " + build.log.substr(0, 600);
                fail_all(CaseStatus::compile_error, opr.message);
            } else if (!build.rejection.empty()) {
                opr.state = "delegation";
                opr.message = build.rejection;
                fail_all(CaseStatus::delegation, opr.message);
            }
        }
        if (opr.state.empty()) {
            opr.state = "evaluated";
            SessionOptions session_options{threads, run.cpus, work_dir + "/" + opr.op + ".candidate.log"};
            session_options.sandbox = options.sandbox;
            session_options.memory_limit_bytes = worker_memory_limit(plan.problems, options.plan, threads);
            session_options.cpu_limit_s = options.op_timeout_s * threads + 60;
            auto candidate = target->open_session(opr.op, opr.build.ok ? work_dir + "/build/" + opr.op + ".so" : "", session_options);
            const std::string baseline_path = baseline_dir + "/" + opr.op + ".so";
            std::unique_ptr<KernelSession> baseline;
            if (fs::exists(baseline_path)) {
                // The baseline is hapbench's own code: limited, not sandboxed (oneDNN JIT-compiles).
                SessionOptions base_options{threads, run.cpus, work_dir + "/" + opr.op + ".baseline.log"};
                base_options.sandbox = false;
                base_options.memory_limit_bytes = session_options.memory_limit_bytes;
                base_options.cpu_limit_s = session_options.cpu_limit_s;
                baseline = target->open_session(opr.op, baseline_path, base_options);
            }
            const auto candidate_deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.op_timeout_s));
            const auto baseline_deadline = candidate_deadline;
            bool budget_spent = false;

            for (const auto& problem : plan.problems) {
                report_progress(opr.op, problem.case_id());
                CaseResult c;
                c.op = opr.op;
                c.level = opr.level;
                c.case_id = problem.case_id();
                c.signature = signature_of(problem);
                c.input_elements = problem.spec.total_input_elements();
                c.attrs = problem.attrs;
                c.value_range = ranges_of(problem.spec);
                if (model) {
                    const HapResult hap = solve(op.work(problem), *model);
                    c.t_hw_us = hap.t_hw_us;
                    c.bottleneck = hap.bottleneck_group;
                    c.bottleneck_unit = hap.bottleneck_unit;
                    c.unit_us = hap.unit_us;
                }

                if (budget_spent) {
                    c.status = CaseStatus::timeout;
                    c.message = "not run: the operator's " + std::to_string(static_cast<int>(options.op_timeout_s)) +
                                " s time budget was spent by an earlier case";
                    opr.cases.push_back(std::move(c));
                    ++progress.cases_done;
                    continue;
                }

                auto t0 = Clock::now();
                const std::vector<Arg> inputs = generate_inputs(problem, op, options.eval_seed);
                run.phases.inputs_s += seconds_since(t0);
                t0 = Clock::now();
                References refs = compute_references(op, problem, inputs);
                run.phases.golden_s += seconds_since(t0);

                RunRequest request;
                request.time = !options.no_perf;
                request.plan = options.plan;
                const int verify_count = options.verified_timed_calls;
                request.choose_verified = [&](int repeat) {
                    std::set<int> chosen;
                    std::uniform_int_distribution<int> pick(1, std::max(1, repeat));
                    while (static_cast<int>(chosen.size()) < std::min(verify_count, repeat)) chosen.insert(pick(verify_rng));
                    return chosen;
                };
                t0 = Clock::now();
                CaseRun cand = candidate->run_case(problem, inputs, request, candidate_deadline);
                run.phases.candidate_s += seconds_since(t0);
                run.phases.sandbox_s += cand.sandbox_us * 1e-6;
                c.status = status_of(cand.outcome);
                c.message = cand.message;
                c.nondeterministic_elements = cand.nondeterministic_elements;
                if (cand.outcome == RunOutcome::timeout) budget_spent = true;

                t0 = Clock::now();
                if (cand.outcome == RunOutcome::ok && has_variable_length_outputs(problem)) {
                    if (const auto lengths = judge_reported_lengths(problem, cand, refs); lengths.status != CaseStatus::pass) {
                        c.status = lengths.status;
                        c.message = lengths.reason;
                    }
                }
                if (cand.outcome == RunOutcome::ok) {
                    for (const auto& u : cand.unwritten)
                        if (u.count > 0 && c.status == CaseStatus::pass) {
                            c.status = CaseStatus::output_unwritten;
                            c.message = std::to_string(u.count) + " elements of output " + u.output +
                                        (u.tensor_index ? "[" + std::to_string(u.tensor_index) + "]" : "") +
                                        " were never written (first at flat index " + std::to_string(u.first_index) + ")";
                        }
                }
                if (c.status == CaseStatus::pass) {
                    if (auto finding = length_nondeterminism(problem, cand); !finding.empty()) {
                        c.status = CaseStatus::nondeterministic;
                        c.message = finding;
                    }
                }
                if (c.status == CaseStatus::pass) {
                    if (auto finding = nondeterminism_finding(problem, cand); !finding.empty()) {
                        c.status = CaseStatus::nondeterministic;
                        c.message = finding;
                    }
                }
                if (c.status == CaseStatus::pass) {
                    const GateResult gate = gate_case(op, problem, cand.outputs, refs);
                    c.gate = to_json(gate);
                    if (!gate.passed) {
                        c.status = CaseStatus::precision_fail;
                        c.message = gate.reason;
                    }
                }
                if (c.status == CaseStatus::pass && options.two_trial) {
                    const auto inputs2 = second_trial_inputs(op, problem, options.eval_seed);
                    References refs2 = compute_references(op, problem, inputs2);
                    RunRequest correctness_only;
                    correctness_only.time = false;
                    CaseRun cand2 = candidate->run_case(problem, inputs2, correctness_only, candidate_deadline);
                    if (cand2.outcome != RunOutcome::ok) {
                        c.status = status_of(cand2.outcome);
                        c.message = "trial 2: " + cand2.message;
                    } else {
                        const GateResult gate2 = gate_case(op, problem, cand2.outputs, refs2);
                        if (!gate2.passed) {
                            c.status = CaseStatus::precision_fail;
                            c.message = "trial 2 (seed + 1, inputs + 0.01): " + gate2.reason;
                        }
                    }
                }
                // Verify the undisclosed subset of timed calls against their own inputs.
                if (c.status == CaseStatus::pass) {
                    for (const auto& kept : cand.kept) {
                        std::vector<Arg> variant = allocate_args(problem.inputs, false);
                        for (std::size_t a = 0; a < inputs.size(); ++a) fill_variant(inputs[a], kept.variant, variant[a]);
                        References vrefs = compute_references(op, problem, variant);
                        const GateResult vgate = gate_case(op, problem, kept.outputs, vrefs);
                        ++c.verified_timed_calls;
                        if (!vgate.passed) {
                            c.status = CaseStatus::cached_or_stale_output;
                            c.message = "timed call " + std::to_string(kept.variant) +
                                        " returned outputs that do not match its inputs: " + vgate.reason;
                            break;
                        }
                    }
                }
                run.phases.verify_s += seconds_since(t0);

                c.candidate.samples_us = cand.samples_us;
                c.candidate.stats = summarize(cand.samples_us);
                c.t_cand_us = c.candidate.stats.median;

                // The baseline, right after the candidate on the same inputs.
                if (options.no_perf) {
                    c.baseline_status = "not measured: --no-perf";
                } else if (!baseline) {
                    c.baseline_status = "not measured: no baseline library " + baseline_path;
                } else {
                    t0 = Clock::now();
                    RunRequest base_request;
                    base_request.plan = options.plan;
                    candidate->suspend();
                    CaseRun base = baseline->run_case(problem, inputs, base_request, baseline_deadline);
                    candidate->resume();
                    run.phases.baseline_s += seconds_since(t0);
                    if (base.outcome != RunOutcome::ok) {
                        c.baseline_status = "failed: " + base.message;
                    } else {
                        const GateResult bgate = gate_case(op, problem, base.outputs, refs);
                        c.baseline.samples_us = base.samples_us;
                        c.baseline.stats = summarize(base.samples_us);
                        c.t_base_measured_us = c.baseline.stats.median;
                        c.baseline_status = bgate.passed ? "measured" : "measured; its outputs fail the gate: " + bgate.reason;
                    }
                }
                // The reference's baseline floor (10 us) is ten times its T_HW floor (1 us) on
                // accelerators; the cpu models have neither.
                if (model) c.t_base_us = capped_baseline_us(c.t_base_measured_us, c.t_hw_us, model->floor_us * 10);
                if (c.status == CaseStatus::pass && c.candidate.measured() && model) {
                    const double limit = calibrated ? c.t_hw_us * (1 - options.calibrated_margin) : c.t_hw_us;
                    if (c.t_cand_us < limit) {
                        c.status = CaseStatus::impossible_time;
                        c.audit.push_back(fmt::format(
                            "IMPOSSIBLE_TIME: measured {:.2f} us < T_HW {:.2f} us{}", c.t_cand_us, c.t_hw_us,
                            calibrated ? " minus the " + std::to_string(static_cast<int>(options.calibrated_margin * 100)) + "% calibration margin (if the model was calibrated on a busy "
                                         "machine its peaks are too low: run `hapbench eval --recalibrate` on an idle one)"
                                       : ""));
                        c.message = c.audit.back();
                    } else {
                        c.score_i = case_performance_score(c.t_cand_us, c.t_base_us, c.t_hw_us);
                    }
                    if (c.t_cand_us > 0) c.speedup = c.t_base_us / c.t_cand_us;
                }
                if (c.nondeterministic_elements > 0)
                    c.audit.push_back("two identical calls differed in " + std::to_string(c.nondeterministic_elements) +
                                      " output elements, within the tolerance");
                opr.cases.push_back(std::move(c));
                ++progress.cases_done;
            }
        }
        std::vector<CaseScoreInput> score_inputs;
        double log_speedup = 0;
        int speedups = 0;
        for (const auto& c : opr.cases) {
            score_inputs.push_back({c.status, c.score_i});
            if (c.speedup > 0) {
                log_speedup += std::log(c.speedup);
                ++speedups;
            }
        }
        opr.score = operator_score(score_inputs, opr.state == "compile_error" || opr.state == "delegation");
        opr.geomean_speedup = speedups ? std::exp(log_speedup / speedups) : 0;
        run.level_scores[opr.level] += opr.score.op_score;
        run.total_score += opr.score.op_score;
        run.operators.push_back(std::move(opr));
    }
    if (options.work_dir.empty()) {
        std::error_code ignored;
        fs::remove_all(work_dir, ignored);
    }
    run.phases.total_s = seconds_since(run_start);
    report_progress("", 0);
    return run;
}

}  // namespace hb
