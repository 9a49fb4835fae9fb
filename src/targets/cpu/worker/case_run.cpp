#include "targets/cpu/worker/case_run.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "measure/cache_flush.hpp"
#include "measure/input_rotation.hpp"
#include "targets/cpu/worker/call_comparison.hpp"
#include "targets/cpu/worker/output_fingerprint.hpp"
#include "targets/cpu/worker/settle.hpp"
#include "targets/cpu/worker/signal_report.hpp"

namespace hb::worker {

namespace {

using nlohmann::json;

double now_ns() {
    return static_cast<double>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

std::vector<Arg> allocate(const std::vector<protocol::ArgLayout>& layout, bool guard) {
    std::vector<Arg> args;
    for (const auto& a : layout) {
        Arg arg;
        arg.name = a.name;
        arg.is_list = a.is_list;
        arg.present = a.present;
        arg.variable_length = a.variable_length;
        for (const auto& t : a.tensors) arg.tensors.emplace_back(t.spec, guard);
        args.push_back(std::move(arg));
    }
    return args;
}

void copy_between(std::vector<Arg>& args, const std::vector<protocol::ArgLayout>& layout, char* shm, bool to_shm) {
    for (std::size_t a = 0; a < args.size(); ++a)
        for (std::size_t k = 0; k < args[a].tensors.size(); ++k) {
            auto& t = args[a].tensors[k];
            char* slot = shm + layout[a].tensors[k].offset;
            if (to_shm) std::memcpy(slot, t.data(), t.bytes());
            else std::memcpy(t.data(), slot, t.bytes());
        }
}

void for_each_tensor(std::vector<Arg>& args, auto&& fn) {
    for (auto& a : args)
        for (auto& t : a.tensors) fn(t);
}

void set_read_only(std::vector<Arg>& args, bool read_only) {
    for_each_tensor(args, [&](Tensor& t) { t.buffer.protect_read_only(read_only); });
}

void flush_all(std::vector<Arg>& inputs, std::vector<Arg>& outputs, const Buffer& workspace) {
    for_each_tensor(inputs, [](Tensor& t) { flush_range(t.data(), t.bytes()); });
    for_each_tensor(outputs, [](Tensor& t) { flush_range(t.data(), t.bytes()); });
    flush_range(workspace.data(), workspace.bytes());
    flush_fence();
}

void poison(std::vector<Arg>& outputs, unsigned char pattern) {
    for_each_tensor(outputs, [&](Tensor& t) { std::memset(t.data(), pattern, t.bytes()); });
}

void watch_args(std::vector<Arg>& args, const char* kind, const char* role, bool guard_page_only) {
    const long page = sysconf(_SC_PAGESIZE);
    for (auto& a : args)
        for (std::size_t k = 0; k < a.tensors.size(); ++k) {
            // Appended piece by piece: GCC 12 warns (-Wrestrict, a known false positive) on the
            // equivalent chain of operator+.
            std::string what = role;
            what.append(" ").append(a.name);
            if (a.is_list) what.append("[").append(std::to_string(k)).append("]");
            auto* data = static_cast<char*>(a.tensors[k].data());
            if (guard_page_only) watch(data + a.tensors[k].bytes(), static_cast<std::size_t>(page), kind, what);
            else watch(data, a.tensors[k].bytes(), kind, what);
        }
}

// Per output: the length the last call reported (outputs of data-dependent length), else null.
json reported_lengths(const KernelCall& call, const std::vector<Arg>& outputs) {
    json lengths = json::array();
    for (std::size_t a = 0; a < outputs.size(); ++a)
        lengths.push_back(outputs[a].variable_length ? json(call.written_length(a)) : json(nullptr));
    return lengths;
}

// Work left running after a call returned changes its outputs later: report and end the
// worker (the left-over thread would keep writing into memory the next case reuses).
void check_settled(std::uint64_t at_return, std::uint64_t later, const char* phase, int k) {
    if (at_return == later) return;
    protocol::write_message(protocol::event_fd, {{"event", "async_work"}, {"phase", phase}, {"k", k}});
    _exit(0);
}

}  // namespace

CaseRun::CaseRun(const LoadedKernel& kernel, const json& case_command)
    : kernel_(kernel), layout_(protocol::layout_from_json(case_command.at("layout"))) {
    void* shm = mmap(nullptr, layout_.total_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, protocol::shared_memory_fd, 0);
    if (shm == MAP_FAILED) return;
    shm_ = static_cast<char*>(shm);
    clear_watches();
    inputs_ = allocate(layout_.inputs, true);
    outputs_ = allocate(layout_.outputs, true);
    copy_between(inputs_, layout_.inputs, shm_, false);
    watch_args(outputs_, "out_of_bounds", "output", true);
    watch_args(inputs_, "input_mutation", "input", false);

    call_.emplace(kernel_.op_name, inputs_, outputs_, protocol::attrs_from_json(case_command.at("attrs")), kernel_.threads);
    workspace_bytes_ = kernel_.workspace_query ? kernel_.workspace_query(&call_->shape_only_call()) : 0;
    workspace_ = Buffer(workspace_bytes_, true);
    if (workspace_bytes_)
        watch(static_cast<char*>(workspace_.data()) + workspace_bytes_, static_cast<std::size_t>(sysconf(_SC_PAGESIZE)),
              "out_of_bounds", "workspace");
    call_->set_workspace(workspace_bytes_ ? workspace_.data() : nullptr, workspace_bytes_);
}

CaseRun::~CaseRun() {
    if (shm_) munmap(shm_, layout_.total_bytes);
}

std::pair<int, double> CaseRun::call_once() {
    set_read_only(inputs_, true);
    const double t0 = now_ns();
    const int rc = kernel_.kernel(&call_->call());
    const double t1 = now_ns();
    set_read_only(inputs_, false);
    return {rc, t1 - t0};
}

void CaseRun::report_kernel_error(int rc, const char* phase) {
    protocol::write_message(protocol::event_fd, {{"event", "kernel_error"}, {"rc", rc}, {"phase", phase},
                                                 {"message", call_->error_message()}});
}

bool CaseRun::run_correctness() {
    // Different poison before each call: see call_comparison.hpp.
    poison(outputs_, 0xff);
    call_->reset_written_lengths();
    const auto [rc1, ns1] = call_once();
    if (rc1 != 0) {
        report_kernel_error(rc1, "correctness");
        return false;
    }
    first_call_ns_ = ns1;
    const json first_lengths = reported_lengths(*call_, outputs_);
    copy_between(outputs_, layout_.outputs, shm_, true);
    poison(outputs_, 0x00);
    call_->reset_written_lengths();
    const int threads_before = kernel_.sandbox ? thread_count() : 0;
    const auto [rc2, ns2] = call_once();
    double sandbox_ns = 0;
    double mark = now_ns();
    const std::uint64_t at_return = kernel_.sandbox ? fingerprint_all(outputs_) : 0;
    sandbox_ns += now_ns() - mark;
    if (rc2 != 0) {
        report_kernel_error(rc2, "correctness");
        return false;
    }
    if (kernel_.sandbox) {
        mark = now_ns();
        settle_pause(ns2, thread_count() > threads_before);
        check_settled(at_return, fingerprint_all(outputs_), "correctness", 0);
        sandbox_ns += now_ns() - mark;
    }
    // Outputs of data-dependent length: both calls' reports, and only the prefix both
    // wrote (clamped to the capacity; the harness judges the lengths themselves) compared.
    const json second_lengths = reported_lengths(*call_, outputs_);
    json written_lengths = json::array();
    std::vector<std::int64_t> compared_entries(outputs_.size(), -1);
    for (std::size_t a = 0; a < outputs_.size(); ++a) {
        if (!outputs_[a].variable_length) {
            written_lengths.push_back(nullptr);
            continue;
        }
        const auto l1 = first_lengths[a].get<std::int64_t>(), l2 = second_lengths[a].get<std::int64_t>();
        written_lengths.push_back({l1, l2});
        const std::int64_t capacity = outputs_[a].tensors.empty() || outputs_[a].tensors[0].spec.shape.empty()
                                          ? 1 : outputs_[a].tensors[0].spec.shape[0];
        compared_entries[a] = std::clamp<std::int64_t>(std::min(l1, l2), 0, capacity);
    }
    const CallComparison comparison = compare_correctness_calls(outputs_, layout_.outputs, shm_, compared_entries);
    protocol::write_message(protocol::event_fd,
                            {{"event", "outputs"}, {"unwritten", comparison.unwritten},
                             {"nondeterministic", comparison.nondeterministic}, {"first_call_ns", ns1},
                             {"sandbox_ns", sandbox_ns}, {"workspace_bytes", workspace_bytes_},
                             {"written_lengths", written_lengths}});
    return true;
}

bool CaseRun::run_timing(protocol::LineReader& commands, const json& timing) {
    const int warmup = timing.at("warmup");
    const int min_repeat = timing.at("min_repeat");
    const int max_repeat = timing.at("max_repeat");
    const double target_s = timing.at("target_s");
    const double pool_bytes = timing.at("pool_bytes");

    // Warmup on the base inputs, cold like the timed calls.
    std::vector<double> warm_ns;
    for (int w = 0; w < warmup; ++w) {
        flush_all(inputs_, outputs_, workspace_);
        const auto [rc, ns] = call_once();
        if (rc != 0) {
            report_kernel_error(rc, "warmup");
            return true;
        }
        warm_ns.push_back(ns);
    }
    double estimate_s = first_call_ns_ * 1e-9;
    if (!warm_ns.empty()) {
        std::sort(warm_ns.begin(), warm_ns.end());
        estimate_s = warm_ns[warm_ns.size() / 2] * 1e-9;
    }
    int repeat = static_cast<int>(std::ceil(target_s / std::max(estimate_s, 1e-9)));
    repeat = std::clamp(repeat, min_repeat, std::max(min_repeat, max_repeat));
    std::size_t input_bytes = 0;
    for_each_tensor(inputs_, [&](Tensor& t) { input_bytes += t.bytes(); });
    const int pool = static_cast<int>(
        std::clamp<double>(pool_bytes / std::max<double>(1.0, double(input_bytes)), 1.0, double(repeat)));
    std::vector<std::vector<Arg>> copies;
    for (int p = 0; p < pool; ++p) copies.push_back(allocate(layout_.inputs, true));
    protocol::write_message(protocol::event_fd, {{"event", "timing_plan"}, {"repeat", repeat}, {"pool", pool}});
    const SparseFingerprint probe(outputs_, static_cast<std::uint64_t>(now_ns()) ^ 0x5eed);
    std::uint64_t last_print = 0;
    const int threads_before = kernel_.sandbox ? thread_count() : 0;
    double sandbox_ns = 0;
    double last_ns = 0;
    double mark = 0;

    for (int k = 1; k <= repeat; ++k) {
        auto& copy = copies[static_cast<std::size_t>((k - 1) % pool)];
        for (std::size_t a = 0; a < inputs_.size(); ++a) fill_variant(inputs_[a], k, copy[a]);
        call_->rebind_inputs(copy);
        clear_watches();
        watch_args(outputs_, "out_of_bounds", "output", true);
        watch_args(copy, "input_mutation", "input", false);
        if (kernel_.sandbox && k > 1) {
            mark = now_ns();
            check_settled(last_print, probe.take(), "timed", k - 1);
            sandbox_ns += now_ns() - mark;
        }
        poison(outputs_, 0xff);
        call_->reset_written_lengths();
        set_read_only(copy, true);
        flush_all(copy, outputs_, workspace_);
        const double t0 = now_ns();
        const int rc = kernel_.kernel(&call_->call());
        const double t1 = now_ns();
        if (kernel_.sandbox) {
            mark = now_ns();
            last_print = probe.take();
            sandbox_ns += now_ns() - mark;
        }
        last_ns = t1 - t0;
        set_read_only(copy, false);
        if (rc != 0) {
            report_kernel_error(rc, "timed");
            call_->rebind_inputs(inputs_);
            return true;
        }
        protocol::write_message(protocol::event_fd, {{"event", "timed"}, {"k", k}, {"ns", t1 - t0}});
        auto reply = commands.read_line();
        if (!reply) return false;
        if (json::parse(*reply).at("cmd") == "keep") {
            copy_between(outputs_, layout_.outputs, shm_, true);
            protocol::write_message(protocol::event_fd,
                                    {{"event", "kept"}, {"k", k}, {"written_lengths", reported_lengths(*call_, outputs_)}});
        }
    }
    if (kernel_.sandbox) {
        mark = now_ns();
        settle_pause(last_ns, thread_count() > threads_before);
        check_settled(last_print, probe.take(), "timed", repeat);
        sandbox_ns += now_ns() - mark;
    }
    call_->rebind_inputs(inputs_);
    protocol::write_message(protocol::event_fd, {{"event", "timing_done"}, {"sandbox_ns", sandbox_ns}});
    return true;
}

}  // namespace hb::worker
