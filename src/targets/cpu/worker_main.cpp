// hapbench-worker: the process a kernel runs in, one per operator and role (candidate or
// baseline). It holds only the case's inputs and outputs: goldens and expected outputs never
// exist in its address space. See protocol.hpp for the conversation with the harness and
// worker/case_run.hpp for what happens to one case.
//
// usage: hapbench-worker KERNEL.so OP_NAME THREADS [--sandbox] [--memory-limit BYTES] [--cpu-limit SECONDS]
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "targets/cpu/protocol.hpp"
#include "targets/cpu/worker/case_run.hpp"
#include "targets/cpu/worker/sandbox.hpp"
#include "targets/cpu/worker/signal_report.hpp"

namespace {

using nlohmann::json;
namespace protocol = hb::protocol;

double now_ns() {
    return static_cast<double>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: hapbench-worker KERNEL.so OP_NAME THREADS [--sandbox] [--memory-limit BYTES] [--cpu-limit SECONDS]\n");
        return 2;
    }
    const std::string library = argv[1];
    hb::worker::LoadedKernel loaded;
    loaded.op_name = argv[2];
    loaded.threads = std::max(1, std::atoi(argv[3]));
    hb::worker::ResourceLimits limits;
    for (int i = 4; i < argc; ++i) {
        const std::string flag = argv[i];
        if (flag == "--sandbox") loaded.sandbox = true;
        else if (flag == "--memory-limit" && i + 1 < argc) limits.address_space_bytes = std::strtoull(argv[++i], nullptr, 10);
        else if (flag == "--cpu-limit" && i + 1 < argc) limits.cpu_seconds = std::strtod(argv[++i], nullptr);
    }
    hb::worker::install_signal_reports();
    hb::worker::apply_resource_limits(limits);
    const double setup_start = now_ns();
    if (loaded.sandbox) {
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
    if (loaded.sandbox) {
        if (const auto error = hb::worker::forbid_new_code(); !error.empty()) {
            protocol::write_message(protocol::event_fd, {{"event", "worker_error"}, {"message", error}});
            return 4;
        }
    }
    loaded.kernel = reinterpret_cast<hb_kernel_fn>(dlsym(handle, "hapbench_kernel"));
    loaded.workspace_query = reinterpret_cast<hb_workspace_fn>(dlsym(handle, "hapbench_workspace_bytes"));
    if (!loaded.kernel) {
        protocol::write_message(protocol::event_fd,
                                {{"event", "load_error"}, {"message", library + " does not define hapbench_kernel"}});
        return 3;
    }
    const double setup_ns = now_ns() - setup_start;
    protocol::write_message(protocol::event_fd, {{"event", "ready"}, {"sandbox_setup_ns", loaded.sandbox ? setup_ns : 0.0}});

    protocol::LineReader commands(protocol::command_fd);
    while (auto line = commands.read_line()) {
        const json command = json::parse(*line);
        const std::string cmd = command.at("cmd");
        if (cmd == "exit") break;
        if (cmd != "case") continue;

        hb::worker::CaseRun run(loaded, command);
        if (!run.mapped()) {
            protocol::write_message(protocol::event_fd, {{"event", "worker_error"}, {"message", "cannot map shared memory"}});
            return 4;
        }
        if (!run.run_correctness()) continue;
        auto decision = commands.read_line();
        if (!decision) break;
        if (json::parse(*decision).at("cmd") != "time") continue;
        if (!run.run_timing(commands, command.at("timing"))) return 0;
    }
    return 0;
}
