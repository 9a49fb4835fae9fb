#include "targets/cpu/cpu_target.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "core/error.hpp"
#include "suite/inputs.hpp"
#include "targets/cpu/compiler.hpp"
#include "targets/cpu/object_check.hpp"
#include "targets/cpu/worker_process.hpp"

namespace hb {

namespace fs = std::filesystem;

std::string worker_executable() {
    if (const char* env = std::getenv("HAPBENCH_WORKER"); env && *env) return env;
    char self[4096];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        const auto candidate = fs::path(self).parent_path() / "hapbench-worker";
        if (fs::exists(candidate)) return candidate.string();
    }
    throw Error("cannot find hapbench-worker next to the hapbench binary (set HAPBENCH_WORKER)", ExitCode::internal);
}

std::string CpuTarget::build_description() const {
    std::string cmd;
    for (const auto& part : cpu_compile_command("<op>.cpp", "<op>.so")) cmd += (cmd.empty() ? "" : " ") + part;
    return cmd;
}

BuildResult CpuTarget::build(const std::string& op, const std::string& source_path, const std::string& out_dir,
                             double timeout_s) const {
    BuildResult b = compile_cpu_kernel(source_path, out_dir + "/" + op + ".so", timeout_s);
    if (!b.ok) return b;
    const auto check_start = Clock::now();
    ObjectCheck check = check_kernel_source(source_path);
    if (check.ok) {
        try {
            check = check_kernel_object(b.library_path);
        } catch (const Error& e) {
            check = ObjectCheck{false, b.library_path, e.what()};
        }
    }
    if (!check.ok) {
        b.rejected_symbol = check.symbol;
        b.rejection = check.reason;
    }
    b.check_seconds = std::chrono::duration<double>(Clock::now() - check_start).count();
    b.seconds += b.check_seconds;
    return b;
}

namespace {

class CpuSession final : public KernelSession {
  public:
    CpuSession(std::string op, std::string library, SessionOptions options)
        : op_(std::move(op)), library_(std::move(library)), options_(std::move(options)) {}

    CaseRun run_case(const Problem& problem, const std::vector<Arg>& inputs, const RunRequest& request,
                     Clock::time_point deadline) override;
    void suspend() override {
        if (worker_) worker_->stop();
    }
    void resume() override {
        if (worker_) worker_->cont();
    }

  private:
    // Turns a missing or fault event into the run's outcome; the worker is gone afterwards.
    void record_failure(CaseRun& run, const std::optional<nlohmann::json>& event, bool timed_out);

    std::string op_, library_;
    SessionOptions options_;
    std::unique_ptr<WorkerProcess> worker_;
};

void copy_args_from(const char* shm, const std::vector<protocol::ArgLayout>& layout, std::vector<Arg>& args) {
    for (std::size_t a = 0; a < args.size(); ++a)
        for (std::size_t k = 0; k < args[a].tensors.size(); ++k)
            std::memcpy(args[a].tensors[k].data(), shm + layout[a].tensors[k].offset, args[a].tensors[k].bytes());
}

// The lengths a call reported (event field "written_lengths": per output null, a length, or
// [first call, second call]); element `which` of a pair.
void take_written_lengths(const nlohmann::json& event, std::vector<Arg>& args, std::size_t which,
                          std::vector<std::int64_t>* second = nullptr) {
    const auto it = event.find("written_lengths");
    if (second) second->assign(args.size(), -1);
    if (it == event.end() || !it->is_array()) return;
    for (std::size_t a = 0; a < args.size() && a < it->size(); ++a) {
        const auto& l = (*it)[a];
        if (!args[a].variable_length || l.is_null()) continue;
        if (l.is_array()) {
            args[a].written_length = l.at(which).get<std::int64_t>();
            if (second && l.size() > 1) (*second)[a] = l.at(1).get<std::int64_t>();
        } else {
            args[a].written_length = l.get<std::int64_t>();
        }
    }
}

void CpuSession::record_failure(CaseRun& run, const std::optional<nlohmann::json>& event, bool timed_out) {
    const std::string ev = event ? event->value("event", "") : "";
    if (ev == "sandbox_violation") {
        run.outcome = RunOutcome::sandbox_violation;
        run.message = "made the system call " + event->value("syscall", std::string("?")) + " (number " +
                      std::to_string(event->value("number", -1)) + "), which the sandbox does not allow";
        worker_->exit_description();
        return;
    }
    if (ev == "resource_limit") {
        run.outcome = RunOutcome::resource_limit;
        run.message = "ran into the worker's " + event->value("what", std::string("resource")) + " limit";
        worker_->exit_description();
        return;
    }
    if (ev == "async_work") {
        run.outcome = RunOutcome::async_work;
        const std::string phase = event->value("phase", std::string("a"));
        run.message = "outputs of " + (phase == "timed" ? "timed call " + std::to_string(event->value("k", 0)) : std::string("a correctness call")) +
                      " changed after the call returned: work was left running";
        worker_->exit_description();
        return;
    }
    if (ev == "worker_error") {
        run.outcome = RunOutcome::crash;
        run.message = "the worker could not set itself up: " + event->value("message", std::string());
        worker_->kill_now();
        return;
    }
    if (event && ev != "fault" && ev != "garbled") {
        // A well-formed message the protocol does not expect here: only code inside the
        // worker can have written it, and the worker itself does not.
        run.outcome = RunOutcome::sandbox_violation;
        run.message = "an unexpected message arrived on the harness channel (" + event->dump().substr(0, 160) +
                      "): the kernel wrote into it";
        worker_->kill_now();
        return;
    }
    if (timed_out) {
        run.outcome = RunOutcome::timeout;
        run.message = "the operator's time budget ran out while this case was running";
        worker_->kill_now();
        return;
    }
    if (event && event->value("event", "") == "fault") {
        const std::string kind = event->value("kind", "crash");
        const std::string what = event->value("what", "");
        const std::string signal = event->value("signal", "");
        if (kind == "out_of_bounds") {
            run.outcome = RunOutcome::out_of_bounds;
            run.message = "wrote past the end of " + what + " (SIG" + signal + " in its guard page)";
        } else if (kind == "input_mutation") {
            run.outcome = RunOutcome::input_mutation;
            run.message = "wrote into " + what + " (inputs are read-only during calls)";
        } else {
            run.outcome = RunOutcome::crash;
            run.message = "crashed with SIG" + signal;
        }
        worker_->exit_description();
        return;
    }
    run.outcome = RunOutcome::crash;
    if (event && ev == "garbled") {
        run.message = "the worker's channel carried garbage: " + event->value("message", "");
        worker_->kill_now();
        return;
    }
    run.message = "the worker " + worker_->exit_description();
    if (worker_->exit_signal() == SIGSYS) run.outcome = RunOutcome::sandbox_violation;
    if (worker_->exit_signal() == SIGXCPU) run.outcome = RunOutcome::resource_limit;
    const auto tail = worker_->log_tail(400);
    if (!tail.empty()) run.message += "; its last output: " + tail;
}

CaseRun CpuSession::run_case(const Problem& problem, const std::vector<Arg>& inputs, const RunRequest& request,
                             Clock::time_point deadline) {
    CaseRun run;
    if (!worker_ || !worker_->running()) {
        worker_ = std::make_unique<WorkerProcess>(worker_executable(), library_, op_, options_);
        const std::string error = worker_->start(deadline);
        if (!error.empty()) {
            run.outcome = Clock::now() >= deadline ? RunOutcome::timeout : RunOutcome::load_error;
            run.message = error;
            if (worker_->start_event()) record_failure(run, worker_->start_event(), false);
            else if (worker_->exit_signal() == SIGSYS) run.outcome = RunOutcome::sandbox_violation;
            if (run.outcome != RunOutcome::load_error && run.outcome != RunOutcome::timeout)
                run.message = "while loading the kernel (static constructors): " + run.message;
            return run;
        }
    }
    const auto layout = protocol::make_layout(problem.inputs, problem.outputs);
    char* shm = worker_->map_shared(layout.total_bytes);
    for (std::size_t a = 0; a < inputs.size(); ++a)
        for (std::size_t k = 0; k < inputs[a].tensors.size(); ++k)
            std::memcpy(shm + layout.inputs[a].tensors[k].offset, inputs[a].tensors[k].data(), inputs[a].tensors[k].bytes());

    const auto& plan = request.plan;
    nlohmann::json command = {
        {"cmd", "case"},
        {"case_id", problem.case_id()},
        {"layout", protocol::to_json(layout)},
        {"attrs", protocol::attrs_to_json(problem.attrs)},
        {"timing", {{"warmup", plan.warmup}, {"min_repeat", plan.min_repeat}, {"max_repeat", plan.max_repeat},
                    {"target_s", plan.target_s}, {"pool_bytes", plan.pool_bytes}}}};
    bool timed_out = false;
    if (!worker_->send(command)) {
        record_failure(run, std::nullopt, false);
        return run;
    }
    auto event = worker_->receive(deadline, timed_out);
    const std::string kind = event ? event->value("event", "") : "";
    if (kind == "kernel_error") {
        run.outcome = RunOutcome::kernel_error;
        run.message = "returned " + std::to_string(event->value("rc", 0)) + ": " + event->value("message", "");
        return run;
    }
    if (kind != "outputs") {
        record_failure(run, event, timed_out);
        return run;
    }
    run.outputs = allocate_args(problem.outputs, false);
    copy_args_from(shm, layout.outputs, run.outputs);
    take_written_lengths(*event, run.outputs, 0, &run.second_call_written_lengths);
    run.first_call_us = event->value("first_call_ns", 0.0) / 1000.0;
    run.sandbox_us = (event->value("sandbox_ns", 0.0) + worker_->take_setup_ns()) / 1000.0;
    run.workspace_bytes = event->value("workspace_bytes", std::uint64_t{0});
    bool any_unwritten = false;
    for (const auto& u : event->at("unwritten")) {
        UnwrittenReport rep{u.at("output"), u.at("index"), u.at("count"), u.at("first")};
        any_unwritten = any_unwritten || rep.count > 0;
        run.unwritten.push_back(rep);
    }
    for (const auto& d : event->at("nondeterministic")) {
        run.nondeterministic_elements += d.at("count").get<std::int64_t>();
        run.max_call_difference.emplace_back(d.at("output").get<std::string>(), d.value("max_difference", 0.0));
    }

    if (!request.time || any_unwritten) {
        worker_->send({{"cmd", "skip"}});
        return run;
    }
    worker_->send({{"cmd", "time"}});
    std::set<int> verified;
    int expected_k = 1;
    bool planned = false;
    for (;;) {
        event = worker_->receive(deadline, timed_out);
        const std::string ev = event ? event->value("event", "") : "";
        if (ev == "timing_plan" && !planned) {
            planned = true;
            const int repeat = event->value("repeat", 0);
            if (request.choose_verified) verified = request.choose_verified(repeat);
        } else if (ev == "timed" && planned && event->value("k", 0) == expected_k) {
            const int k = expected_k++;
            run.samples_us.push_back(event->value("ns", 0.0) / 1000.0);
            const bool keep = verified.count(k) > 0;
            worker_->send({{"cmd", keep ? "keep" : "drop"}});
            if (keep) {
                auto kept = worker_->receive(deadline, timed_out);
                if (!kept || kept->value("event", "") != "kept") {
                    record_failure(run, kept, timed_out);
                    return run;
                }
                KeptOutputs ko{k, allocate_args(problem.outputs, false)};
                copy_args_from(shm, layout.outputs, ko.outputs);
                take_written_lengths(*kept, ko.outputs, 0);
                run.kept.push_back(std::move(ko));
            }
        } else if (ev == "timing_done" && planned) {
            run.sandbox_us += event->value("sandbox_ns", 0.0) / 1000.0;
            return run;
        } else if (ev == "kernel_error") {
            run.outcome = RunOutcome::kernel_error;
            run.message = "returned " + std::to_string(event->value("rc", 0)) + " during a " +
                          event->value("phase", "timed") + " call: " + event->value("message", "");
            return run;
        } else {
            record_failure(run, event, timed_out);
            return run;
        }
    }
}

}  // namespace

std::unique_ptr<KernelSession> CpuTarget::open_session(const std::string& op, const std::string& library_path,
                                                       const SessionOptions& options) const {
    return std::make_unique<CpuSession>(op, library_path, options);
}

std::unique_ptr<Target> make_target(const std::string& name) {
    if (name == "cpu") return std::make_unique<CpuTarget>();
    throw Error("unknown target '" + name + "' (known: cpu; cuda and ascend are planned)");
}

}  // namespace hb
