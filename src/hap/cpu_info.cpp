#include "hap/cpu_info.hpp"

#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/cpu_affinity.hpp"

namespace hb {

namespace {

std::string read_first_line(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

// sysfs sizes look like "512K" or "32768K".
std::size_t parse_cache_size(const std::string& text) {
    std::size_t value = 0, i = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])))
        value = value * 10 + static_cast<std::size_t>(text[i++] - '0');
    if (i < text.size() && (text[i] == 'K' || text[i] == 'k')) value <<= 10;
    if (i < text.size() && (text[i] == 'M' || text[i] == 'm')) value <<= 20;
    return value;
}

std::string cpu_model_name() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("model name", 0) == 0 || line.rfind("Model name", 0) == 0) {
            auto colon = line.find(':');
            if (colon == std::string::npos) continue;
            std::string name = line.substr(colon + 1);
            name.erase(0, name.find_first_not_of(" \t"));
            return name;
        }
    }
    return "unknown CPU";
}

// sysfs first: glibc's sysconf reports some AMD last-level caches as the sum over all
// CCXs (256 MiB on a 32 MiB part seen in a VM), which would size the buffers wrongly.
void cache_sizes(int cpu, CpuInfo& info) {
    const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cache";
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
        const std::string idx = entry.path().string();
        if (entry.path().filename().string().rfind("index", 0) != 0) continue;
        const std::string type = read_first_line(idx + "/type");
        if (type != "Unified" && type != "Data") continue;
        const int level = std::atoi(read_first_line(idx + "/level").c_str());
        const std::size_t size = parse_cache_size(read_first_line(idx + "/size"));
        if (level == 2) info.l2_bytes_per_core = size;
        if (level >= 2 && level >= info.llc_level) {
            info.llc_level = level;
            info.llc_bytes = size;
        }
    }
    if (info.llc_bytes > 0) {
        info.cache_sizes_from = "sysfs " + dir;
        return;
    }
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE), l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (l2 > 0) info.l2_bytes_per_core = static_cast<std::size_t>(l2);
    if (l3 > 0) {
        info.llc_bytes = static_cast<std::size_t>(l3);
        info.llc_level = 3;
    } else if (l2 > 0) {
        info.llc_bytes = static_cast<std::size_t>(l2);
        info.llc_level = 2;
    }
    info.cache_sizes_from = "sysconf";
}

}  // namespace

CpuInfo probe_cpu() {
    CpuInfo info;
    info.model_name = cpu_model_name();
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) == 0) info.host = host;
    info.allowed_cpus = allowed_cpus();
    cache_sizes(info.allowed_cpus.front(), info);
#if defined(__x86_64__)
    __builtin_cpu_init();
    info.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    info.avx512f = __builtin_cpu_supports("avx512f");
    info.avx512_bf16 = __builtin_cpu_supports("avx512bf16");
    info.avx512_fp16 = __builtin_cpu_supports("avx512fp16");
    info.amx_tile = __builtin_cpu_supports("amx-tile");
    info.avx512_vnni = __builtin_cpu_supports("avx512vnni");
    info.avx_vnni = __builtin_cpu_supports("avxvnni");
    info.amx_int8 = info.amx_tile && __builtin_cpu_supports("amx-int8");
    info.amx_bf16 = info.amx_tile && __builtin_cpu_supports("amx-bf16");
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) info.amx_fp16 = info.amx_tile && (eax >> 21 & 1u);
#endif
    const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) info.available_memory_bytes = static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
    std::ifstream("/proc/loadavg") >> info.load_average_1min;
    return info;
}

double measure_idle_fraction(double seconds) {
    auto sample = [](double& idle, double& total) {
        std::ifstream in("/proc/stat");
        std::string cpu_label;
        in >> cpu_label;
        idle = total = 0;
        double field;
        for (int i = 0; i < 8 && in >> field; ++i) {
            total += field;
            if (i == 3 || i == 4) idle += field;  // idle, iowait
        }
        return cpu_label == "cpu" && total > 0;
    };
    double idle0, total0, idle1, total1;
    if (!sample(idle0, total0)) return -1;
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    if (!sample(idle1, total1) || total1 <= total0) return -1;
    return (idle1 - idle0) / (total1 - total0);
}

}  // namespace hb
