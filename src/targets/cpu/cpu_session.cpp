#include "targets/cpu/cpu_session.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <immintrin.h>
#include <thread>

#include "core/error.hpp"
#include "targets/cpu/protocol.hpp"
#include "targets/cpu/settle_check.hpp"

namespace hb::cpu {

namespace {

nlohmann::json specs_to_json(const std::vector<ArgSpec>& args) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& a : args) {
        nlohmann::json tensors = nlohmann::json::array();
        for (const auto& t : a.tensors) tensors.push_back({{"dtype", static_cast<int>(t.dtype)}, {"shape", t.shape}});
        out.push_back({{"name", a.name}, {"is_list", a.is_list}, {"present", a.present},
                       {"variable_length", a.variable_length}, {"tensors", tensors}});
    }
    return out;
}

std::vector<ArgView> views(const std::vector<ArgPlace>& places, char* base) {
    std::vector<ArgView> out;
    for (const auto& a : places) {
        ArgView v{a.name, a.is_list, a.present, a.variable_length, {}};
        for (const auto& t : a.tensors) v.tensors.push_back({t.spec, base + t.offset});
        out.push_back(std::move(v));
    }
    return out;
}

std::string guard_label(const CallLayout& layout, std::size_t guard) {
    std::size_t index = 0;
    for (const auto& a : layout.outputs)
        for (std::size_t k = 0; k < a.tensors.size(); ++k, ++index)
            if (index == guard) return "output " + a.name + (a.is_list ? "[" + std::to_string(k) + "]" : "");
    return "the workspace";
}

double elapsed_ns(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::nano>(b - a).count(); }

}  // namespace

CpuSession::CpuSession(std::string worker_exe, std::string op, std::string library, SessionOptions options)
    : worker_exe_(std::move(worker_exe)), op_(std::move(op)), library_(std::move(library)), options_(std::move(options)),
      placement_(options_.cpus), rng_(std::random_device{}()) {
    control_.resize(4096);
    page_ = reinterpret_cast<ControlPage*>(control_.data());
    inputs_read_only_fd_ = inputs_.open_read_only();
    canary_ = rng_();
    facts_.sandboxed = options_.sandbox;
}

CpuSession::~CpuSession() {
    close();
    if (inputs_read_only_fd_ >= 0) ::close(inputs_read_only_fd_);
}

void CpuSession::close() {
    worker_.reset();
    placement_.forget();
    serving_calls_ = false;
    idle_cpu_ns_ = -1;
}

CallResult CpuSession::failure(const std::optional<nlohmann::json>& event, bool timed_out, const std::string& phase) {
    CallResult r;
    const std::string ev = event ? event->value("event", "") : "";
    auto end_worker = [&] {
        if (worker_) worker_->exit_description();
        close();
    };
    if (ev == "sandbox_violation") {
        r.outcome = RunOutcome::sandbox_violation;
        r.message = "made the system call " + event->value("syscall", std::string("?")) + " (number " +
                    std::to_string(event->value("number", -1)) + "), which the sandbox does not allow";
    } else if (ev == "resource_limit") {
        r.outcome = RunOutcome::resource_limit;
        r.message = "ran into the worker's " + event->value("what", std::string("resource")) + " limit";
    } else if (ev == "worker_error") {
        r.outcome = RunOutcome::crash;
        r.message = "the worker could not set itself up: " + event->value("message", std::string());
    } else if (ev == "load_error") {
        r.outcome = RunOutcome::load_error;
        r.message = "cannot load the kernel: " + event->value("message", std::string());
    } else if (ev == "fault") {
        const std::string kind = event->value("kind", "crash");
        const std::string what = event->value("what", "");
        const std::string signal = event->value("signal", "");
        if (kind == "out_of_bounds") {
            r.outcome = RunOutcome::out_of_bounds;
            r.message = "touched the guard page after " + what + " (SIG" + signal + ")";
        } else if (kind == "input_mutation") {
            r.outcome = RunOutcome::input_mutation;
            r.message = "wrote into " + what + " (inputs are read-only to the kernel)";
        } else {
            r.outcome = RunOutcome::crash;
            r.message = "crashed with SIG" + signal;
        }
    } else if (event && ev != "garbled") {
        // A well-formed message the protocol does not expect here: only code inside the
        // worker can have written it.
        r.outcome = RunOutcome::sandbox_violation;
        r.message = "an unexpected message arrived on the harness channel (" + event->dump().substr(0, 160) +
                    "): the kernel wrote into it";
        if (worker_) worker_->kill_now();
        close();
        return r;
    } else if (timed_out) {
        r.outcome = RunOutcome::timeout;
        r.message = "the operator's time budget ran out " + phase;
        if (worker_) worker_->kill_now();
        close();
        return r;
    } else if (event) {
        r.outcome = RunOutcome::crash;
        r.message = "the worker's channel carried garbage: " + event->value("message", std::string());
        if (worker_) worker_->kill_now();
        close();
        return r;
    } else {
        r.outcome = RunOutcome::crash;
        r.message = worker_ ? "the worker " + worker_->exit_description() : "the worker is not running";
        if (worker_) {
            if (worker_->exit_signal() == SIGSYS) r.outcome = RunOutcome::sandbox_violation;
            if (worker_->exit_signal() == SIGXCPU) r.outcome = RunOutcome::resource_limit;
            const auto tail = worker_->log_tail(400);
            if (!tail.empty()) r.message += "; its last output: " + tail;
        }
        close();
        return r;
    }
    end_worker();
    return r;
}

CallResult CpuSession::start_worker(Clock::time_point deadline) {
    worker_ = std::make_unique<WorkerProcess>(worker_exe_, library_, op_, options_, control_, inputs_read_only_fd_, outputs_);
    bool timed_out = false;
    const auto ready = worker_->start(deadline, timed_out);
    if (!ready || ready->value("event", "") != "ready") {
        CallResult r = failure(ready, timed_out, "while the worker was starting");
        if (r.outcome != RunOutcome::load_error && r.outcome != RunOutcome::timeout)
            r.message = "while loading the kernel (static constructors): " + r.message;
        return r;
    }
    facts_.landlock_abi = ready->value("landlock_abi", 0);
    facts_.landlock_note = ready->value("landlock_note", std::string());
    facts_.setup_ns_total += ready->value("sandbox_setup_ns", 0.0);
    ++facts_.workers_started;
    return {};
}

CallResult CpuSession::load_case(const Problem& problem, int input_slots, Clock::time_point deadline) {
    if (serving_calls_) {
        const CallResult left = ring(CallKind::leave, 0, deadline);
        if (left.outcome != RunOutcome::ok) return left;
        serving_calls_ = false;
    }
    if (!worker_ || !worker_->running())
        if (CallResult started = start_worker(deadline); started.outcome != RunOutcome::ok) return started;
    idle_cpu_ns_ = -1;
    case_calls_ = case_unsettled_ = 0;
    bool timed_out = false;
    if (!worker_->send({{"cmd", "case"}, {"inputs", specs_to_json(problem.inputs)},
                        {"outputs", specs_to_json(problem.outputs)}, {"attrs", protocol::attrs_to_json(problem.attrs)}}))
        return failure(std::nullopt, false, "");
    const auto asked = worker_->receive(deadline, timed_out);
    if (!asked || asked->value("event", "") != "workspace")
        return failure(asked, timed_out, "while the kernel computed its workspace size");
    const std::uint64_t workspace = asked->value("bytes", std::uint64_t{0});
    if (options_.memory_limit_bytes && workspace > options_.memory_limit_bytes) {
        CallResult r;
        r.outcome = RunOutcome::resource_limit;
        r.message = "hapbench_workspace_bytes asked for " + std::to_string(workspace) +
                    " bytes, more than the worker's memory limit of " + std::to_string(options_.memory_limit_bytes);
        return r;
    }
    const auto page_bytes = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    layout_ = make_call_layout(problem.inputs, problem.outputs, input_slots, workspace, page_bytes);
    // Sized for the largest planned case (its workspace unknown yet), so that the regions are
    // mapped once for the session, here and in the worker. Worked out once per slot count.
    if (reserve_.slots != input_slots) {
        reserve_ = Reserve{input_slots, 0, 0};
        for (const Problem& planned : options_.planned_cases) {
            const CallLayout largest = make_call_layout(planned.inputs, planned.outputs, input_slots, 0, page_bytes);
            reserve_.input_bytes = std::max(reserve_.input_bytes, largest.input_region_bytes());
            reserve_.output_bytes = std::max(reserve_.output_bytes, largest.output_region_bytes);
        }
    }
    inputs_.resize(layout_.input_region_bytes(), reserve_.input_bytes);
    outputs_.resize(layout_.output_region_bytes, reserve_.output_bytes);
    fill_guards();
    buffers_ = CaseBuffers{};
    for (int s = 0; s < layout_.slots; ++s)
        buffers_.input_slots.push_back(views(layout_.inputs, inputs_.data() + static_cast<std::size_t>(s) * layout_.slot_bytes));
    buffers_.outputs = views(layout_.outputs, outputs_.data());
    buffers_.workspace = outputs_.data() + layout_.workspace_offset;
    buffers_.workspace_bytes = workspace;
    // The worker maps as much as the harness has mapped (the memfds are at least that long).
    if (!worker_->send({{"cmd", "map"}, {"layout", to_json(layout_)}, {"input_map_bytes", inputs_.mapped_bytes()},
                        {"output_map_bytes", outputs_.mapped_bytes()}}))
        return failure(std::nullopt, false, "");
    const auto mapped = worker_->receive(deadline, timed_out);
    if (!mapped || mapped->value("event", "") != "mapped") return failure(mapped, timed_out, "while the worker mapped the case");
    if (!worker_->send({{"cmd", "calls"}})) return failure(std::nullopt, false, "");
    serving_calls_ = true;
    return {};
}

void CpuSession::fill_guards() {
    for (std::size_t g : layout_.output_guards)
        for (std::size_t i = 0; i + 8 <= layout_.page_bytes; i += 8) std::memcpy(outputs_.data() + g + i, &canary_, 8);
}

std::string CpuSession::damaged_guard() const {
    for (std::size_t g = 0; g < layout_.output_guards.size(); ++g) {
        const char* page = outputs_.data() + layout_.output_guards[g];
        for (std::size_t i = 0; i + 8 <= layout_.page_bytes; i += 8)
            if (std::memcmp(page + i, &canary_, 8) != 0) return guard_label(layout_, g);
    }
    return "";
}

CallResult CpuSession::ring(CallKind kind, int slot, Clock::time_point deadline) {
    CallResult r;
    if (!worker_ || !worker_->running()) return failure(std::nullopt, false, "");
    const std::uint32_t sequence = ++sequence_;
    page_->sequence = sequence;
    page_->kind = kind;
    page_->slot = static_cast<std::uint32_t>(slot);
    page_->rc = 0;
    page_->message[0] = '\0';
    if (!worker_->arm()) return failure(std::nullopt, false, "");
    // The worker wakes and spins; wait until it does (it may take a scheduler tick). Yield
    // often: the worker's main thread is bound to one CPU (thread_placement.hpp), and when
    // this thread runs on that CPU the worker cannot wake until it steps aside (arm waits
    // 0.36 -> 0.27 s over tuned sigmoid's 1,200 calls and null calls).
    for (std::uint64_t spins = 0; page_->armed.load(std::memory_order_acquire) != sequence; ++spins) {
        _mm_pause();
        if ((spins & 0x3f) == 0x3f) std::this_thread::yield();
        if ((spins & 0x3fff) == 0x3fff) {
            if (Clock::now() >= deadline) return failure(std::nullopt, true, "while the worker was waking up");
            if (!worker_->running() || kill(worker_->pid(), 0) != 0) return failure(std::nullopt, false, "");
        }
    }
    const auto t0 = Clock::now();
    page_->request.store(sequence, std::memory_order_release);
    for (;;) {
        const int waited = worker_->wait_done(deadline);
        if (waited == 1) {
            if (page_->done.load(std::memory_order_acquire) == sequence) break;
            continue;  // a stray byte (the kernel writing into the done pipe): keep waiting
        }
        if (waited == 0) {
            bool timed_out = false;
            return failure(worker_->receive(deadline, timed_out), timed_out, "during a call");
        }
        return failure(std::nullopt, waited == -2, "during a call");
    }
    r.window_ns = elapsed_ns(t0, Clock::now());
    r.rc = page_->rc;
    r.worker_call_ns = page_->worker_call_ns;
    return r;
}

std::string CpuSession::busy_description(double excess_ns, const std::string& when) const {
    return excess_ns > idle_cpu_allowance_ns(0) ? "used " + std::to_string(static_cast<long long>(excess_ns / 1e3)) + " us of CPU " + when
                                                : "had a thread running " + when;
}

double CpuSession::idle_excess_ns() const {
    if (idle_cpu_ns_ < 0 || !worker_) return 0;
    const double used = process_cpu_ns(worker_->pid()) - idle_cpu_ns_;
    if (used > idle_cpu_allowance_ns(0)) return used;
    // A thread still runnable when none should be: its time may not be accounted yet.
    return stays_runnable(worker_->pid(), kRunnablePatienceNs) ? std::max(used, 1.0) : 0;
}

double CpuSession::cpu_ns_once_quiet(double patience_ns) const {
    stays_runnable(worker_->pid(), patience_ns, kQuietPollNs);
    return process_cpu_ns(worker_->pid());
}

CallResult CpuSession::note_unsettled(const std::string& what) {
    CallResult r;
    ++case_unsettled_;
    if (!too_many_unsettled(case_unsettled_, case_calls_)) return r;
    r.outcome = RunOutcome::async_work;
    r.message = "the worker " + what + " (busy at " + std::to_string(case_unsettled_) + " checks over " +
                std::to_string(case_calls_) + " calls): work was left running after the call returned";
    worker_->kill_now();
    close();
    return r;
}

CallResult CpuSession::finish_calls(Clock::time_point deadline) {
    if (!worker_ || idle_cpu_ns_ < 0) return {};
    const auto until = std::min(deadline, Clock::now() + std::chrono::nanoseconds(static_cast<long long>(settle_ns(0, true))));
    while (Clock::now() < until) std::this_thread::sleep_for(std::chrono::microseconds(100));
    const double excess = idle_excess_ns();
    if (excess == 0) return {};
    CallResult r = note_unsettled(busy_description(excess, "after its last call"));
    if (r.outcome == RunOutcome::ok) {
        r.previous_unsettled = true;
        idle_cpu_ns_ = process_cpu_ns(worker_->pid());
    }
    return r;
}

CallResult CpuSession::call(int slot, Clock::time_point deadline, CallCheck check) {
    // Idle since the last call: a kernel thread that went on computing (on fresh inputs the
    // harness wrote meanwhile, or on late outputs) used the CPU when it should not.
    bool previous_unsettled = false;
    if (const double excess = idle_excess_ns(); excess > 0) {
        if (CallResult busy = note_unsettled(busy_description(excess, "between two calls")); busy.outcome != RunOutcome::ok)
            return busy;
        previous_unsettled = true;
    }
    // Threads the kernel started in an earlier call get their CPUs before this one.
    if (worker_) placement_.update(worker_->pid());
    CallResult r = ring(CallKind::kernel, slot, deadline);
    if (r.outcome != RunOutcome::ok) return r;
    ++case_calls_;
    r.previous_unsettled = previous_unsettled;
    // Settle: nothing may write once the call said it was done (the sample is drawn at once),
    // and the worker should be idle (its CPU time is read once it has gone back to sleep).
    const bool thorough = check == CallCheck::thorough;
    const OutputSample sample(buffers_.outputs, rng_, thorough);
    const double settle = settle_ns(r.window_ns, thorough);
    const double cpu_at_done = cpu_ns_once_quiet(settle);
    const auto settle_end = Clock::now() + std::chrono::nanoseconds(static_cast<long long>(settle));
    while (Clock::now() < settle_end) std::this_thread::sleep_for(std::chrono::microseconds(20));
    const double cpu_after = process_cpu_ns(worker_->pid());
    const double used = cpu_after - cpu_at_done;
    if (!sample.unchanged()) {
        r.outcome = RunOutcome::async_work;
        r.message = "outputs changed after the call returned: work was left running";
        worker_->kill_now();
        close();
        return r;
    }
    const bool busy_cpu = used > idle_cpu_allowance_ns(r.window_ns);
    const int runnable = busy_cpu ? 0 : (stays_runnable(worker_->pid(), kRunnablePatienceNs) ? runnable_threads(worker_->pid()) : 0);
    if (busy_cpu || runnable > 0) {
        const std::string when = "in the " + std::to_string(static_cast<long long>(settle / 1e3)) + " us after a call returned";
        const CallResult busy = note_unsettled(busy_cpu
                                                   ? "used " + std::to_string(static_cast<long long>(used / 1e3)) + " us of CPU " + when
                                                   : "had " + std::to_string(runnable) + " thread(s) running " + when);
        if (busy.outcome != RunOutcome::ok) return busy;
        r.unsettled = true;
    }
    idle_cpu_ns_ = cpu_after;
    if (const std::string guard = damaged_guard(); !guard.empty()) {
        r.outcome = RunOutcome::out_of_bounds;
        r.message = "wrote past the end of " + guard + " (into its guard page, after changing its protection)";
        worker_->kill_now();
        close();
        return r;
    }
    for (std::size_t a = 0; a < buffers_.outputs.size() && a < static_cast<std::size_t>(max_outputs); ++a)
        r.written_lengths.push_back(buffers_.outputs[a].variable_length ? page_->written_length[a] : -1);
    if (r.rc != 0) {
        r.outcome = RunOutcome::kernel_error;
        page_->message[message_capacity - 1] = '\0';
        r.message = "returned " + std::to_string(r.rc) + ": " + std::string(page_->message);
    }
    return r;
}

std::vector<double> CpuSession::null_calls(int count, Clock::time_point deadline) {
    std::vector<double> windows;
    for (int i = 0; i < count; ++i) {
        const CallResult r = ring(CallKind::null, 0, deadline);
        if (r.outcome != RunOutcome::ok) break;
        windows.push_back(r.window_ns);
    }
    // The worker's loop used some CPU; the next idle check starts from here.
    if (idle_cpu_ns_ >= 0 && worker_) idle_cpu_ns_ = cpu_ns_once_quiet(settle_ns(0, true));
    return windows;
}

}  // namespace hb::cpu
