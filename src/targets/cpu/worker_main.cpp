// hapbench-worker: the process a kernel runs in, one per operator and role (candidate or
// baseline). It holds only the case's inputs and outputs: goldens and expected outputs never
// exist in its address space. See protocol.hpp for the conversation with the harness.
//
// usage: hapbench-worker KERNEL.so OP_NAME THREADS [--sandbox] [--memory-limit BYTES] [--cpu-limit SECONDS]
#include <dlfcn.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/kernel_call.hpp"
#include "measure/cache_flush.hpp"
#include "measure/input_rotation.hpp"
#include "targets/cpu/protocol.hpp"
#include "targets/cpu/worker/output_fingerprint.hpp"
#include "targets/cpu/worker/sandbox.hpp"
#include "targets/cpu/worker/settle.hpp"
#include "targets/cpu/worker/signal_report.hpp"

namespace {

using hb::Arg;
using hb::Tensor;
using nlohmann::json;
namespace protocol = hb::protocol;
using hb::worker::watch;

// ---- helpers -------------------------------------------------------------------------

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

void flush_all(std::vector<Arg>& inputs, std::vector<Arg>& outputs, const hb::Buffer& workspace) {
    for_each_tensor(inputs, [](Tensor& t) { hb::flush_range(t.data(), t.bytes()); });
    for_each_tensor(outputs, [](Tensor& t) { hb::flush_range(t.data(), t.bytes()); });
    hb::flush_range(workspace.data(), workspace.bytes());
    hb::flush_fence();
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

// Work left running after a call returned changes its outputs later: report and end the
// worker (the left-over thread would keep writing into memory the next case reuses).
void check_settled(std::uint64_t at_return, std::uint64_t later, const char* phase, int k) {
    if (at_return == later) return;
    protocol::write_message(protocol::event_fd, {{"event", "async_work"}, {"phase", phase}, {"k", k}});
    _exit(0);
}

// The difference between two values of one output element from two calls on identical
// inputs, on the scale the precision gate uses: relative to max(1, |a|, |b|) for floats,
// absolute for integers; infinite when only one is NaN or infinite.
double call_difference(double a, double b, bool floating) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : INFINITY;
    if (a == b) return 0;
    if (std::isinf(a) || std::isinf(b)) return INFINITY;
    const double d = std::fabs(a - b);
    return floating ? d / std::max({1.0, std::fabs(a), std::fabs(b)}) : d;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: hapbench-worker KERNEL.so OP_NAME THREADS [--sandbox] [--memory-limit BYTES] [--cpu-limit SECONDS]\n");
        return 2;
    }
    const std::string library = argv[1];
    const std::string op_name = argv[2];
    const int threads = std::max(1, std::atoi(argv[3]));
    bool sandbox = false;
    hb::worker::ResourceLimits limits;
    for (int i = 4; i < argc; ++i) {
        const std::string flag = argv[i];
        if (flag == "--sandbox") sandbox = true;
        else if (flag == "--memory-limit" && i + 1 < argc) limits.address_space_bytes = std::strtoull(argv[++i], nullptr, 10);
        else if (flag == "--cpu-limit" && i + 1 < argc) limits.cpu_seconds = std::strtod(argv[++i], nullptr);
    }
    hb::worker::install_signal_reports();
    hb::worker::apply_resource_limits(limits);
    const double setup_start = now_ns();
    if (sandbox) {
        if (const auto error = hb::worker::enter_sandbox(); !error.empty()) {
            protocol::write_message(protocol::event_fd, {{"event", "worker_error"}, {"message", error}});
            return 4;
        }
    }

    // The kernel object is loaded here; its static constructors run now, inside the sandbox.
    void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        protocol::write_message(protocol::event_fd, {{"event", "load_error"}, {"message", std::string(dlerror())}});
        return 3;
    }
    if (sandbox) {
        if (const auto error = hb::worker::forbid_new_code(); !error.empty()) {
            protocol::write_message(protocol::event_fd, {{"event", "worker_error"}, {"message", error}});
            return 4;
        }
    }
    auto kernel = reinterpret_cast<hb_kernel_fn>(dlsym(handle, "hapbench_kernel"));
    auto workspace_query = reinterpret_cast<hb_workspace_fn>(dlsym(handle, "hapbench_workspace_bytes"));
    if (!kernel) {
        protocol::write_message(protocol::event_fd,
                                {{"event", "load_error"}, {"message", library + " does not define hapbench_kernel"}});
        return 3;
    }
    const double setup_ns = now_ns() - setup_start;
    protocol::write_message(protocol::event_fd, {{"event", "ready"}, {"sandbox_setup_ns", sandbox ? setup_ns : 0.0}});

    protocol::LineReader commands(protocol::command_fd);
    while (auto line = commands.read_line()) {
        const json command = json::parse(*line);
        const std::string cmd = command.at("cmd");
        if (cmd == "exit") break;
        if (cmd != "case") continue;

        const auto layout = protocol::layout_from_json(command.at("layout"));
        const auto attrs = protocol::attrs_from_json(command.at("attrs"));
        char* shm = static_cast<char*>(mmap(nullptr, layout.total_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
                                            protocol::shared_memory_fd, 0));
        if (shm == MAP_FAILED) {
            protocol::write_message(protocol::event_fd, {{"event", "worker_error"}, {"message", "cannot map shared memory"}});
            return 4;
        }
        hb::worker::clear_watches();
        std::vector<Arg> inputs = allocate(layout.inputs, true);
        std::vector<Arg> outputs = allocate(layout.outputs, true);
        copy_between(inputs, layout.inputs, shm, false);
        watch_args(outputs, "out_of_bounds", "output", true);
        watch_args(inputs, "input_mutation", "input", false);

        hb::KernelCall call(op_name, inputs, outputs, attrs, threads);
        std::uint64_t workspace_bytes = workspace_query ? workspace_query(&call.shape_only_call()) : 0;
        hb::Buffer workspace(workspace_bytes, true);
        if (workspace_bytes) watch(static_cast<char*>(workspace.data()) + workspace_bytes, static_cast<std::size_t>(sysconf(_SC_PAGESIZE)), "out_of_bounds", "workspace");
        call.set_workspace(workspace_bytes ? workspace.data() : nullptr, workspace_bytes);

        auto run_once = [&]() {
            set_read_only(inputs, true);
            const double t0 = now_ns();
            const int rc = kernel(&call.call());
            const double t1 = now_ns();
            set_read_only(inputs, false);
            return std::pair<int, double>(rc, t1 - t0);
        };
        auto report_error = [&](int rc, const char* phase) {
            protocol::write_message(protocol::event_fd, {{"event", "kernel_error"}, {"rc", rc}, {"phase", phase},
                                                         {"message", call.error_message()}});
        };

        // Two correctness calls with different poison: an element still holding the first
        // poison after call 1 and the second after call 2 was never written; elements that
        // differ otherwise mark a nondeterministic kernel.
        poison(outputs, 0xff);
        auto [rc1, ns1] = run_once();
        if (rc1 != 0) {
            report_error(rc1, "correctness");
            munmap(shm, layout.total_bytes);
            continue;
        }
        copy_between(outputs, layout.outputs, shm, true);
        poison(outputs, 0x00);
        const int threads_before = sandbox ? hb::worker::thread_count() : 0;
        auto [rc2, ns2] = run_once();
        double sandbox_ns = 0;
        double mark = now_ns();
        const std::uint64_t at_return = sandbox ? hb::worker::fingerprint_all(outputs) : 0;
        sandbox_ns += now_ns() - mark;
        if (rc2 != 0) {
            report_error(rc2, "correctness");
            munmap(shm, layout.total_bytes);
            continue;
        }
        if (sandbox) {
            mark = now_ns();
            hb::worker::settle_pause(ns2, hb::worker::thread_count() > threads_before);
            check_settled(at_return, hb::worker::fingerprint_all(outputs), "correctness", 0);
            sandbox_ns += now_ns() - mark;
        }
        json unwritten = json::array(), differing = json::array();
        for (std::size_t a = 0; a < outputs.size(); ++a)
            for (std::size_t k = 0; k < outputs[a].tensors.size(); ++k) {
                const auto& t = outputs[a].tensors[k];
                const auto* first = reinterpret_cast<const unsigned char*>(shm + layout.outputs[a].tensors[k].offset);
                const auto* second = static_cast<const unsigned char*>(t.data());
                const std::size_t esize = hb::dtype_size(t.spec.dtype);
                std::int64_t n_unwritten = 0, n_differ = 0, first_unwritten = -1;
                const bool floating = hb::is_floating(t.spec.dtype);
                double max_difference = 0;
                for (std::int64_t i = 0; i < t.numel(); ++i) {
                    const auto* x = first + i * static_cast<std::int64_t>(esize);
                    const auto* y = second + i * static_cast<std::int64_t>(esize);
                    if (std::memcmp(x, y, esize) == 0) continue;
                    bool all_ff = true, all_00 = true;
                    for (std::size_t b = 0; b < esize; ++b) {
                        all_ff = all_ff && x[b] == 0xff;
                        all_00 = all_00 && y[b] == 0x00;
                    }
                    if (all_ff && all_00) {
                        if (first_unwritten < 0) first_unwritten = i;
                        ++n_unwritten;
                    } else {
                        ++n_differ;
                        max_difference = std::max(max_difference, call_difference(hb::load_element(first, static_cast<std::size_t>(i), t.spec.dtype),
                                                                                  hb::load_element(second, static_cast<std::size_t>(i), t.spec.dtype), floating));
                    }
                }
                unwritten.push_back({{"output", outputs[a].name}, {"index", k}, {"count", n_unwritten}, {"first", first_unwritten}});
                differing.push_back({{"output", outputs[a].name}, {"index", k}, {"count", n_differ},
                                     {"max_difference", std::isinf(max_difference) ? 1e300 : max_difference}});
            }
        protocol::write_message(protocol::event_fd, {{"event", "outputs"}, {"unwritten", unwritten},
                                                     {"nondeterministic", differing}, {"first_call_ns", ns1}, {"sandbox_ns", sandbox_ns},
                                                     {"workspace_bytes", workspace_bytes}});

        auto next = commands.read_line();
        if (!next) break;
        const json decision = json::parse(*next);
        if (decision.at("cmd") != "time") {
            munmap(shm, layout.total_bytes);
            continue;
        }
        const json timing = command.at("timing");
        const int warmup = timing.at("warmup");
        const int min_repeat = timing.at("min_repeat");
        const int max_repeat = timing.at("max_repeat");
        const double target_s = timing.at("target_s");
        const double pool_bytes = timing.at("pool_bytes");

        // Warmup on the base inputs, cold like the timed calls.
        std::vector<double> warm_ns;
        bool failed = false;
        for (int w = 0; w < warmup && !failed; ++w) {
            flush_all(inputs, outputs, workspace);
            auto [rc, ns] = run_once();
            if (rc != 0) {
                report_error(rc, "warmup");
                failed = true;
            }
            warm_ns.push_back(ns);
        }
        if (failed) {
            munmap(shm, layout.total_bytes);
            continue;
        }
        double estimate_s = ns1 * 1e-9;
        if (!warm_ns.empty()) {
            std::sort(warm_ns.begin(), warm_ns.end());
            estimate_s = warm_ns[warm_ns.size() / 2] * 1e-9;
        }
        int repeat = static_cast<int>(std::ceil(target_s / std::max(estimate_s, 1e-9)));
        repeat = std::clamp(repeat, min_repeat, std::max(min_repeat, max_repeat));
        std::size_t input_bytes = 0;
        for_each_tensor(inputs, [&](Tensor& t) { input_bytes += t.bytes(); });
        const int pool = static_cast<int>(std::clamp<double>(pool_bytes / std::max<double>(1.0, double(input_bytes)), 1.0, double(repeat)));
        std::vector<std::vector<Arg>> copies;
        for (int p = 0; p < pool; ++p) copies.push_back(allocate(layout.inputs, true));
        protocol::write_message(protocol::event_fd, {{"event", "timing_plan"}, {"repeat", repeat}, {"pool", pool}});
        const hb::worker::SparseFingerprint probe(outputs, static_cast<std::uint64_t>(now_ns()) ^ 0x5eed);
        std::uint64_t last_print = 0;
        const int threads_before_timing = sandbox ? hb::worker::thread_count() : 0;
        double timed_sandbox_ns = 0;
        double last_ns = 0;

        for (int k = 1; k <= repeat && !failed; ++k) {
            auto& copy = copies[static_cast<std::size_t>((k - 1) % pool)];
            for (std::size_t a = 0; a < inputs.size(); ++a) hb::fill_variant(inputs[a], k, copy[a]);
            call.rebind_inputs(copy);
            hb::worker::clear_watches();
            watch_args(outputs, "out_of_bounds", "output", true);
            watch_args(copy, "input_mutation", "input", false);
            if (sandbox && k > 1) {
                mark = now_ns();
                check_settled(last_print, probe.take(), "timed", k - 1);
                timed_sandbox_ns += now_ns() - mark;
            }
            poison(outputs, 0xff);
            for_each_tensor(copy, [](Tensor& t) { t.buffer.protect_read_only(true); });
            flush_all(copy, outputs, workspace);
            const double t0 = now_ns();
            const int rc = kernel(&call.call());
            const double t1 = now_ns();
            if (sandbox) {
                mark = now_ns();
                last_print = probe.take();
                timed_sandbox_ns += now_ns() - mark;
            }
            last_ns = t1 - t0;
            for_each_tensor(copy, [](Tensor& t) { t.buffer.protect_read_only(false); });
            if (rc != 0) {
                report_error(rc, "timed");
                failed = true;
                break;
            }
            protocol::write_message(protocol::event_fd, {{"event", "timed"}, {"k", k}, {"ns", t1 - t0}});
            auto reply = commands.read_line();
            if (!reply) return 0;
            if (json::parse(*reply).at("cmd") == "keep") {
                copy_between(outputs, layout.outputs, shm, true);
                protocol::write_message(protocol::event_fd, {{"event", "kept"}, {"k", k}});
            }
        }
        if (sandbox && !failed) {
            mark = now_ns();
            hb::worker::settle_pause(last_ns, hb::worker::thread_count() > threads_before_timing);
            check_settled(last_print, probe.take(), "timed", repeat);
            timed_sandbox_ns += now_ns() - mark;
        }
        call.rebind_inputs(inputs);
        if (!failed) protocol::write_message(protocol::event_fd, {{"event", "timing_done"}, {"sandbox_ns", timed_sandbox_ns}});
        munmap(shm, layout.total_bytes);
    }
    return 0;
}
