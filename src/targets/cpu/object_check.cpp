#include "targets/cpu/object_check.hpp"

#include <link.h>

#include <array>
#include <fstream>
#include <mutex>
#include <regex>
#include <set>
#include <string_view>

#include "core/elf_symbols.hpp"
#include "core/error.hpp"

namespace hb {

namespace {

// The libraries a kernel may use: what `g++ -fopenmp` links. Their exported symbols form
// the allowlist, read from the very files this process has loaded (hapbench links the same
// runtime), so the list matches the installed toolchain instead of a table that ages.
constexpr std::array<std::string_view, 7> runtime_libraries = {
    "libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libgomp.so.1", "libpthread.so.0", "ld-linux-x86-64.so.2"};

// Provided by the runtime but entry points to other code: loading libraries, looking up
// symbols (the harness's, a vendor library's), or issuing system calls by number.
bool denied_import(std::string_view name) {
    static const std::set<std::string_view> denied = {
        "dlopen", "dlmopen", "dlsym", "dlvsym", "dlclose", "dladdr", "dladdr1", "dlinfo", "dlerror",
        "dl_iterate_phdr", "_dl_find_object", "syscall"};
    return denied.count(name) > 0 || name.rfind("__libc_", 0) == 0 || name.rfind("_dl_", 0) == 0;
}

// Weak references every GCC-built object carries; unresolved they are null and harmless.
bool toolchain_weak_reference(std::string_view name) {
    return name == "_ITM_deregisterTMCloneTable" || name == "_ITM_registerTMCloneTable" || name == "__gmon_start__" ||
           name == "__cxa_finalize";
}

// C++ templates and inline functions of the standard library instantiated in the kernel
// are emitted as weak default-visibility symbols (libstdc++ declares namespace std with
// default visibility); they are code the kernel compiled, not entry points.
bool standard_library_instantiation(const ElfSymbol& s) {
    static const std::array<std::string_view, 12> prefixes = {
        "_ZNSt", "_ZNKSt", "_ZSt", "_ZN9__gnu_cxx", "_ZNK9__gnu_cxx", "_ZTISt", "_ZTSSt", "_ZTVSt",
        "_ZTINSt", "_ZTSNSt", "_ZTVNSt", "_ZGVZNSt"};
    if (!s.weak) return false;
    for (auto p : prefixes)
        if (std::string_view(s.name).rfind(p, 0) == 0) return true;
    return false;
}

bool is_entry_point(std::string_view name) { return name == "hapbench_kernel" || name == "hapbench_workspace_bytes"; }

struct Runtime {
    std::set<std::string> symbols;
    std::set<std::string> libraries;  // sonames found loaded
};

int collect_runtime_library(dl_phdr_info* info, size_t, void* data) {
    auto* paths = static_cast<std::vector<std::string>*>(data);
    if (info->dlpi_name && *info->dlpi_name) paths->push_back(info->dlpi_name);
    return 0;
}

const Runtime& runtime() {
    static Runtime r;
    static std::once_flag once;
    std::call_once(once, [] {
        std::vector<std::string> loaded;
        dl_iterate_phdr(collect_runtime_library, &loaded);
        for (const auto& path : loaded) {
            const std::string file = path.substr(path.find_last_of('/') + 1);
            for (auto lib : runtime_libraries)
                if (file == lib) {
                    r.libraries.insert(file);
                    for (auto& s : read_elf_dynamic_info(path).symbols)
                        if (s.defined) r.symbols.insert(s.name);
                }
        }
        if (!r.libraries.count("libc.so.6"))
            throw Error("cannot find the C library among hapbench's loaded objects to check kernels against",
                        ExitCode::internal);
    });
    return r;
}

ObjectCheck reject(std::string symbol, std::string reason) { return ObjectCheck{false, std::move(symbol), std::move(reason)}; }

}  // namespace

ObjectCheck check_kernel_source(const std::string& source_path) {
    // Header-only vendor libraries leave no imported symbol behind, so their headers are
    // refused by name. A macro-built include can evade this; the symbol check below and the
    // fact that hapbench installs no such header-only library are the backstop.
    static const std::regex include_line(R"(^\s*#\s*include\s*[<"]([^>"]+)[>"])");
    static const std::array<std::string_view, 9> vendor = {"oneapi/", "dnnl", "mkl", "cblas", "Eigen/",
                                                           "unsupported/Eigen", "openblas", "blis", "lapack"};
    std::ifstream in(source_path);
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        std::smatch m;
        if (!std::regex_search(line, m, include_line)) continue;
        const std::string header = m[1];
        for (auto v : vendor)
            if (header.find(v) != std::string::npos)
                return reject("<" + header + ">", "line " + std::to_string(number) + " includes <" + header +
                                                      ">, a vendor library's header: the kernel must be written, not delegated");
    }
    return {};
}

bool exports_kernel_entry(const std::string& object_path) {
    for (const auto& s : read_elf_dynamic_info(object_path).symbols)
        if (s.defined && s.function && s.name == "hapbench_kernel") return true;
    return false;
}

ObjectCheck check_kernel_object(const std::string& object_path) {
    const ElfDynamicInfo info = read_elf_dynamic_info(object_path);
    const Runtime& rt = runtime();
    for (const auto& lib : info.needed) {
        bool allowed = false;
        for (auto r : runtime_libraries) allowed = allowed || lib == r;
        if (!allowed)
            return reject(lib, "the object needs " + lib + "; a kernel may link only the C and C++ runtime, libm, OpenMP and pthreads");
    }
    for (const auto& s : info.symbols) {
        if (s.defined) {
            if (is_entry_point(s.name) || standard_library_instantiation(s)) continue;
            if (rt.symbols.count(s.name))
                return reject(s.name, "the object exports " + s.name + ", a function of the runtime libraries: defining it "
                                      "could interpose the harness's (a kernel may export only hapbench_kernel and "
                                      "hapbench_workspace_bytes)");
            return reject(s.name, "the object exports " + s.name + "; a kernel may export only hapbench_kernel and "
                                  "hapbench_workspace_bytes (mark helpers static or leave them hidden)");
        }
        if (denied_import(s.name))
            return reject(s.name, "the object calls " + s.name + ": loading or looking up other code, or raw system "
                                  "calls, is not allowed in a kernel");
        if (rt.symbols.count(s.name)) continue;
        if (s.weak && toolchain_weak_reference(s.name)) continue;
        return reject(s.name, "the object calls " + s.name + ", which the C and C++ runtime, libm, OpenMP and pthreads "
                              "do not provide: vendor libraries (oneDNN, BLAS, ...) and the harness's own symbols are "
                              "off limits");
    }
    return {};
}

}  // namespace hb
