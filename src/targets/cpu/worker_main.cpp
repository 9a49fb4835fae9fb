// hapbench-worker: the process a kernel runs in, one per operator and role (candidate or
// baseline). It holds only what a call needs: the case's inputs, outputs and workspace, in
// shared memory the harness also maps. Goldens and expected outputs never exist in its
// address space, and it neither times nor judges anything: after the kernel object is
// loaded its loop is only wait, call, report (worker/case_binding.hpp). See
// control_page.hpp for the conversation with the harness and docs/security.md for why.
//
// usage: hapbench-worker KERNEL.so OP_NAME THREADS [--sandbox] [--memory-limit BYTES] [--cpu-limit SECONDS]
#include <dlfcn.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "targets/cpu/call_layout.hpp"
#include "targets/cpu/control_page.hpp"
#include "targets/cpu/protocol.hpp"
#include "targets/cpu/worker/case_binding.hpp"
#include "targets/cpu/worker/sandbox.hpp"
#include "targets/cpu/worker/signal_report.hpp"

namespace {

using nlohmann::json;
namespace cpu = hb::cpu;

double now_ns() {
    return static_cast<double>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

void send(const json& message) { hb::protocol::write_message(cpu::event_fd, message); }

// The files a sandboxed worker may read: the kernel object, the runtime libraries already
// loaded (the object's dependencies resolve to them), what the C library and OpenMP read to
// count CPUs, and the worker's own /proc directory.
std::vector<std::string> readable_files(const std::string& library) {
    std::vector<std::string> files = hb::worker::loaded_libraries();
    files.push_back(library);
    files.push_back("/sys/devices/system/cpu");
    files.push_back("/proc/self");
    files.push_back("/proc/cpuinfo");
    files.push_back("/dev/urandom");
    return files;
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
    void* control = mmap(nullptr, sizeof(cpu::ControlPage), PROT_READ | PROT_WRITE, MAP_SHARED, cpu::control_fd, 0);
    if (control == MAP_FAILED) {
        send({{"event", "worker_error"}, {"message", "cannot map the control page"}});
        return 4;
    }
    auto& page = *static_cast<cpu::ControlPage*>(control);

    // The C library installs its own signal handlers (SIGCANCEL, SIGSETXID) when the first
    // thread starts; let that happen now, before rt_sigaction is refused.
    std::thread([] {}).join();

    const double setup_start = now_ns();
    hb::worker::FileConfinement files;
    if (sandbox) {
        files = hb::worker::restrict_files(readable_files(library));
        if (const auto error = hb::worker::enter_sandbox(); !error.empty()) {
            send({{"event", "worker_error"}, {"message", "sandbox: " + error}});
            return 4;
        }
    }
    const double setup_ns = now_ns() - setup_start;

    // The kernel object is loaded here; its static constructors run now, inside the sandbox.
    void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        send({{"event", "load_error"}, {"message", std::string(dlerror())}});
        return 3;
    }
    loaded.kernel = reinterpret_cast<hb_kernel_fn>(dlsym(handle, "hapbench_kernel"));
    loaded.workspace_query = reinterpret_cast<hb_workspace_fn>(dlsym(handle, "hapbench_workspace_bytes"));
    if (!loaded.kernel) {
        send({{"event", "load_error"}, {"message", library + " does not define hapbench_kernel"}});
        return 3;
    }
    send({{"event", "ready"}, {"sandbox_setup_ns", sandbox ? setup_ns : 0.0},
          {"landlock_abi", files.landlock_abi}, {"landlock_note", files.note}});

    hb::protocol::LineReader commands(cpu::command_fd);
    hb::worker::SharedMappings mappings;  // kept across cases; declared first, so it outlives every binding
    std::unique_ptr<hb::worker::CaseBinding> binding;
    while (auto line = commands.read_line()) {
        json command;
        try {
            command = json::parse(*line);
        } catch (const json::exception&) {
            return 4;
        }
        const std::string cmd = command.value("cmd", "");
        if (cmd == "exit") break;
        if (cmd == "case") {
            binding.reset();
            binding = std::make_unique<hb::worker::CaseBinding>(loaded, mappings, command);
            send({{"event", "workspace"}, {"bytes", binding->workspace_bytes()}});
        } else if (cmd == "map" && binding) {
            const std::string error =
                binding->map(cpu::call_layout_from_json(command.at("layout")), command.value("input_map_bytes", std::size_t{0}),
                             command.value("output_map_bytes", std::size_t{0}), page);
            if (!error.empty()) {
                send({{"event", "worker_error"}, {"message", error}});
                return 4;
            }
            send({{"event", "mapped"}});
        } else if (cmd == "calls" && binding) {
            if (!binding->serve_calls(page)) return 0;
        }
    }
    return 0;
}
