#include "hap/calibrate.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>

#include "core/build_info.hpp"
#include "core/cache_dir.hpp"
#include "core/error.hpp"
#include "hap/cpu_info.hpp"
#include "hap/cpu_matrix_peaks.hpp"
#include "hap/cpu_microbench.hpp"
#include "hap/cpu_op_costs.hpp"

namespace hb {

namespace {

constexpr std::size_t mib = std::size_t(1) << 20;

std::string sanitize(const std::string& text) {
    std::string out;
    for (char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u)) out += static_cast<char>(std::tolower(u));
        else if (!out.empty() && out.back() != '-') out += '-';
    }
    while (!out.empty() && out.back() == '-') out.pop_back();
    return out.empty() ? "unknown" : out;
}

std::string today_utc() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[16];
    std::strftime(text, sizeof text, "%Y-%m-%d", &tm);
    return text;
}

std::string gb_per_s(double bytes_per_s) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f GB/s", bytes_per_s / 1e9);
    return text;
}

std::string gflop_per_s(double flops_per_s) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GFLOP/s", flops_per_s / 1e9);
    return text;
}

std::string yes_no(bool b) { return b ? "present" : "absent"; }

struct AlignedBuffer {
    float* data = nullptr;
    std::size_t bytes = 0;
    explicit AlignedBuffer(std::size_t size) : bytes(size) {
        // 2 MiB alignment lets the kernel back the buffer with huge pages, so TLB misses
        // do not lower the measured bandwidth below what a kernel could reach.
        constexpr std::size_t alignment = 2 * mib;
        const std::size_t rounded = (size + alignment - 1) / alignment * alignment;
        data = static_cast<float*>(std::aligned_alloc(alignment, rounded));
        if (!data) throw Error("calibrate: cannot allocate " + std::to_string(rounded / mib) + " MiB", ExitCode::internal);
        madvise(data, rounded, MADV_HUGEPAGE);
    }
    ~AlignedBuffer() { std::free(data); }
    AlignedBuffer(const AlignedBuffer&) = delete;
    AlignedBuffer& operator=(const AlignedBuffer&) = delete;
};

// Chooses passes so that one run over `bytes` lasts about `seconds`, from a short probe.
int passes_for(MemoryPattern pattern, float* buffer, std::size_t bytes, const CpuInfo& cpu,
               const std::vector<int>& cpus, double seconds) {
    const int probe_passes = 4;
    const MicrobenchResult probe = measure_bandwidth(pattern, buffer, bytes, cpu, cpus, probe_passes, 1);
    const double passes = seconds * probe.best_per_s / static_cast<double>(bytes);
    return static_cast<int>(std::clamp(passes, 1.0, 1e6));
}

Figure figure(double value, std::string source) { return Figure{value, std::move(source)}; }

}  // namespace

HardwareModel calibrate_cpu(const CalibrateOptions& options) {
    const auto started = std::chrono::steady_clock::now();
    auto progress = [&](const std::string& line) {
        if (!options.progress) return;
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        char stamp[32];
        std::snprintf(stamp, sizeof stamp, "[%5.1fs] ", s);
        options.progress(stamp + line);
    };
    const CpuInfo cpu = probe_cpu();
    std::vector<int> cpus = cpu.allowed_cpus;
    if (options.threads > 0 && static_cast<std::size_t>(options.threads) < cpus.size())
        cpus.resize(static_cast<std::size_t>(options.threads));
    const int n = static_cast<int>(cpus.size());
    const int runs = options.runs > 0 ? options.runs : (options.quick ? 2 : 7);
    const double run_s = options.seconds_per_run > 0 ? options.seconds_per_run : (options.quick ? 0.005 : 0.08);
    const CpuOpCosts costs =
        load_cpu_op_costs(options.op_costs_path.empty() ? default_cpu_op_costs_path() : options.op_costs_path);
    // Other work on the machine lowers every measured peak, and a peak that is too low
    // lets honest kernels beat T_HW; say so where the numbers are recorded.
    const double idle_window_s = options.quick ? 0.1 : 0.5;
    const double idle = measure_idle_fraction(idle_window_s);
    char load_text[200];
    std::snprintf(load_text, sizeof load_text,
                  "CPUs %.0f%% idle in the %.1f s before the start, 1-minute load average %.2f on %zu CPUs",
                  100 * idle, idle_window_s, cpu.load_average_1min, cpu.allowed_cpus.size());
    const bool busy = idle >= 0 && idle < 0.8;
    if (busy) progress(std::string("WARNING: the machine is busy (") + load_text + "); calibrate on an idle machine");
    const std::string threads_text = std::to_string(n) + " thread" + (n == 1 ? "" : "s") + " pinned one per CPU";
    // Name the op-cost file relative to the source tree, so that models compare across checkouts.
    std::string costs_name = costs.source_path;
    const std::string source_root = source_dir() + "/";
    if (costs_name.rfind(source_root, 0) == 0) costs_name = costs_name.substr(source_root.size());
    const std::string best_text = "best of " + std::to_string(runs) + " runs";

    // Compute: FMA chains on every CPU at once, and on one CPU alone. The per-core peak is
    // the larger of (all-core rate / cores) and the one-core rate, because a single busy
    // core may clock higher than all of them together and the peak must stay an upper bound.
    struct FmaPeak {
        double per_core = 0;
        std::string source;
        std::string isa;
    };
    auto fma_peak = [&](DType t) {
        progress("FMA throughput, " + std::string(dtype_name(t)));
        const MicrobenchResult all = measure_fma_flops(t, cpu, cpus, run_s, runs);
        const MicrobenchResult one = n > 1 ? measure_fma_flops(t, cpu, {cpus.front()}, run_s, runs) : all;
        FmaPeak p;
        p.per_core = std::max(all.best_per_s / n, one.best_per_s);
        p.isa = all.isa;
        p.source = "calibrated: independent " + all.isa + " FMA chains (an FMA counts 2 flops); " + threads_text +
                   " reached " + gflop_per_s(all.best_per_s) + " (" + all.describe_spread() + "), one CPU alone " +
                   gflop_per_s(one.best_per_s) + "; per core = the larger of all/" + std::to_string(n) +
                   " and the one-CPU rate";
        return p;
    };
    const FmaPeak f32 = fma_peak(DType::f32);
    const FmaPeak f64 = fma_peak(DType::f64);
    // Matrix peaks per dtype: the dot-product and tile instructions a contraction kernel can
    // use besides FMAs (cpu_matrix_peaks).
    MatrixPeakInputs matrix_inputs;
    matrix_inputs.fma_f32 = MeasuredRate{f32.per_core, f32.source};
    matrix_inputs.fma_f64 = MeasuredRate{f64.per_core, f64.source};
    matrix_inputs.fma_isa = f32.isa;
    measure_matrix_instructions(cpu, cpus, run_s, runs, progress, matrix_inputs);

    // Memory: one buffer far larger than the last-level cache for DRAM, its head reused
    // for the cache levels. Memory-short machines get a smaller (still > 4x LLC) buffer.
    std::size_t dram_bytes = options.dram_buffer_bytes > 0 ? options.dram_buffer_bytes : (options.quick ? 64 : 512) * mib;
    std::string dram_size_note;
    if (cpu.available_memory_bytes > 0 && dram_bytes > cpu.available_memory_bytes / 4) {
        dram_bytes = std::max<std::size_t>(cpu.available_memory_bytes / 4 / mib * mib, 4 * cpu.llc_bytes);
        dram_size_note = " (reduced from the default because only " +
                         std::to_string(cpu.available_memory_bytes / mib) + " MiB were available)";
    }
    AlignedBuffer buffer(std::max(dram_bytes, 2 * cpu.llc_bytes));
    const int dram_runs = runs;
    // Write first: its warm-up pass faults every page in. Reading untouched memory would
    // read the kernel's shared zero page and measure a cache, not DRAM.
    progress("DRAM bandwidth over " + std::to_string(dram_bytes / mib) + " MiB");
    const MicrobenchResult write = measure_bandwidth(MemoryPattern::write_nt, buffer.data, dram_bytes, cpu, cpus, 1, dram_runs);
    const MicrobenchResult read = measure_bandwidth(MemoryPattern::read, buffer.data, dram_bytes, cpu, cpus, 1, dram_runs);
    const MicrobenchResult copy = measure_bandwidth(MemoryPattern::copy_nt, buffer.data, dram_bytes, cpu, cpus, 1, dram_runs);
    const double dram_peak = std::max({read.best_per_s, write.best_per_s, copy.best_per_s});

    // Caches: read bandwidth over half of each level, so that it stays resident.
    const std::size_t l2_bytes = cpu.l2_bytes_per_core / 2 * static_cast<std::size_t>(n);
    MicrobenchResult l2;
    if (cpu.l2_bytes_per_core > 0) {
        progress("L2 read bandwidth over " + std::to_string(l2_bytes / 1024) + " KiB");
        const int passes = passes_for(MemoryPattern::read, buffer.data, l2_bytes, cpu, cpus, run_s);
        l2 = measure_bandwidth(MemoryPattern::read, buffer.data, l2_bytes, cpu, cpus, passes, runs);
    }
    MicrobenchResult llc;
    const std::size_t llc_bytes = cpu.llc_bytes / 2;
    const bool has_llc = cpu.llc_level > 2 && cpu.llc_bytes > 0;
    if (has_llc) {
        progress("L" + std::to_string(cpu.llc_level) + " read bandwidth over " + std::to_string(llc_bytes / mib) + " MiB");
        const int passes = passes_for(MemoryPattern::read, buffer.data, llc_bytes, cpu, cpus, run_s);
        llc = measure_bandwidth(MemoryPattern::read, buffer.data, llc_bytes, cpu, cpus, passes, runs);
    }

    HardwareModel m;
    m.kind = HardwareKind::cpu;
    m.name = options.name.empty() ? "cpu-" + sanitize(cpu.model_name) + "-" + std::to_string(n) : options.name;
    m.description = "CPU peaks measured by hapbench calibrate on " + cpu.host + " (" + cpu.model_name + ", " +
                    std::to_string(n) + " CPUs)" + (options.quick ? "; QUICK mode: short runs, small buffers, not for scoring" : "");
    m.provenance.origin = PeakOrigin::calibrated;
    m.provenance.date = today_utc();
    m.provenance.host = cpu.host;
    m.provenance.cpu_model = cpu.model_name;
    m.provenance.method = std::string("hapbench calibrate") + (options.quick ? " --quick" : "") +
                          ": microbenchmarks on " + threads_text + ", " + best_text +
                          " each; " + load_text + (busy ? " (BUSY: peaks are likely too low)" : "") +
                          "; op costs from " + costs_name + "; " + std::string(calibration_format) +
                          ". ISA features: AVX2+FMA " + yes_no(cpu.avx2_fma) + ", AVX-512F " + yes_no(cpu.avx512f) +
                          ", AVX512-BF16 " + yes_no(cpu.avx512_bf16) + ", AVX512-FP16 " + yes_no(cpu.avx512_fp16) +
                          ", AVX512-VNNI " + yes_no(cpu.avx512_vnni) + ", AVX-VNNI " + yes_no(cpu.avx_vnni) +
                          ", AMX " + yes_no(cpu.amx_tile) + " (INT8 " + yes_no(cpu.amx_int8) + ", BF16 " +
                          yes_no(cpu.amx_bf16) + ", FP16 " + yes_no(cpu.amx_fp16) + ")" +
                          (matrix_inputs.amx_note.empty() ? "" : "; " + matrix_inputs.amx_note);
    m.floor_us = 0;  // a CPU kernel call has no launch floor worth modelling
    m.cores = n;

    ExecutionUnit dram;
    dram.name = "dram";
    dram.group = "Memory";
    dram.scope = UnitScope::chip;
    dram.serves = {WorkKind::bytes_read, WorkKind::bytes_written};
    dram.bytes_per_s = figure(
        dram_peak, "calibrated: the best of read " + gb_per_s(read.best_per_s) + ", non-temporal write " +
                       gb_per_s(write.best_per_s) + " and non-temporal copy " + gb_per_s(copy.best_per_s) +
                       " (read + written bytes) over " + std::to_string(dram_bytes / mib) + " MiB" + dram_size_note +
                       ", " + threads_text + ", each " + best_text + "; the best of the three because a kernel's "
                       "mix of reads and writes can reach it and the peak must bound every kernel");
    dram.source = "main memory; the harness flushes a call's buffers from every cache before timing it, so a "
                  "case's compulsory bytes come from here. Reads and writes share one bus, so their bytes add";
    m.units.push_back(dram);

    // Integer lanes: a 256-bit register holds 4/size as many as fp32 lanes, and integer
    // vector ALUs issue at least as many instructions per cycle as the FMA pipes.
    auto compute_rates = [&](ExecutionUnit& u) {
        u.flops_per_s[DType::f32] = figure(f32.per_core, f32.source);
        u.flops_per_s[DType::f64] = figure(f64.per_core, f64.source);
        for (DType t : {DType::i8, DType::u8, DType::boolean, DType::i16, DType::i32, DType::i64}) {
            const double lanes = 4.0 / static_cast<double>(dtype_size(t));
            u.flops_per_s[t] = figure(
                f32.per_core * lanes,
                "derived: the float32 rate x " + std::to_string(lanes).substr(0, 4) +
                    " (lanes per register relative to float32); integer vector ALUs issue at least as many "
                    "instructions per cycle as the FMA pipes, so this bounds integer throughput");
        }
        u.runs_as = costs.runs_as;
        u.runs_as_source = costs.runs_as_source;
        u.scope = UnitScope::core;
    };
    // Vector work in fp16/bf16 is charged at the fp32 rate: elementwise kernels widen half
    // types to fp32 for accuracy; AVX512-FP16's native half arithmetic is not counted there.
    std::string half_note = "fp16/bf16 elementwise math runs at the fp32 rate (widened to fp32)";
    if (cpu.avx512_fp16)
        half_note += "; WARNING: this CPU's AVX512-FP16 vector arithmetic (twice the fp32 lanes) is not counted for "
                     "vector work, so an fp16 elementwise kernel computing in native fp16 could beat the vector bound";

    const CalibratedMatrixUnit matrix = cpu_matrix_unit(matrix_inputs, costs);
    ExecutionUnit vector;
    vector.name = "vector";
    vector.group = "Vector";
    compute_rates(vector);
    vector.serves = {WorkKind::vector};
    vector.vector_flops_per_element = costs.vector_flops_per_element;
    if (!matrix.beside_vector) vector.shares_with = {"matrix"};
    vector.source = "SIMD elementwise math on the FMA pipes of each core (" + f32.isa + "); " + half_note;
    m.units.push_back(vector);
    m.units.push_back(matrix.unit);

    if (cpu.l2_bytes_per_core > 0) {
        ExecutionUnit l2_unit;
        l2_unit.name = "l2";
        l2_unit.group = "Memory";
        l2_unit.scope = UnitScope::core;
        l2_unit.bytes_per_s = figure(l2.best_per_s / n,
                                     "calibrated: " + l2.isa + " read of " + std::to_string(l2_bytes / n / 1024) +
                                         " KiB per thread (half of the " + std::to_string(cpu.l2_bytes_per_core / 1024) +
                                         " KiB L2, from " + cpu.cache_sizes_from + "), " + threads_text + ", " +
                                         gb_per_s(l2.best_per_s) + " in all, " + l2.describe_spread() + ", divided by " +
                                         std::to_string(n));
        l2_unit.source = "per-core L2 cache; recorded for analysis, serves no work: the harness starts every call cold";
        m.units.push_back(l2_unit);
    }
    if (has_llc) {
        ExecutionUnit llc_unit;
        llc_unit.name = "l" + std::to_string(cpu.llc_level);
        llc_unit.group = "Memory";
        llc_unit.scope = UnitScope::chip;
        llc_unit.bytes_per_s = figure(llc.best_per_s, "calibrated: " + llc.isa + " read of " + std::to_string(llc_bytes / mib) +
                                                          " MiB (half of the " + std::to_string(cpu.llc_bytes / mib) +
                                                          " MiB last-level cache, from " + cpu.cache_sizes_from + ") split over " +
                                                          threads_text + ", " + llc.describe_spread());
        llc_unit.source = "shared last-level cache; recorded for analysis, serves no work: the harness starts every call cold";
        m.units.push_back(llc_unit);
    }
    validate_hardware_model(m);
    progress("done");
    return m;
}

std::string default_calibration_cache_path() {
    const CpuInfo cpu = probe_cpu();
    return hapbench_cache_dir() + "/cpu-" + sanitize(cpu.model_name) + "-" + std::to_string(cpu.allowed_cpus.size()) + ".yaml";
}

HardwareModel load_or_calibrate(const CalibrateOptions& options, const std::string& cache_path) {
    if (options.quick) return calibrate_cpu(options);
    const std::string path = cache_path.empty() ? default_calibration_cache_path() : cache_path;
    const CpuInfo cpu = probe_cpu();
    const int cores = options.threads > 0 ? std::min<int>(options.threads, static_cast<int>(cpu.allowed_cpus.size()))
                                          : static_cast<int>(cpu.allowed_cpus.size());
    std::string why;
    if (std::filesystem::exists(path)) {
        try {
            HardwareModel cached = load_hardware_model(path);
            if (cached.kind != HardwareKind::cpu || cached.provenance.origin != PeakOrigin::calibrated ||
                cached.provenance.cpu_model != cpu.model_name || cached.cores != cores)
                why = "the cached model " + path + " describes another CPU or core count";
            else if (cached.provenance.method.find(calibration_format) == std::string::npos)
                why = "the cached model " + path + " predates " + std::string(calibration_format) +
                      ": its fp16, bf16 and int8 matrix rates are fp32-derived";
            else
                return cached;
        } catch (const Error& e) {
            // A damaged or outdated cache is replaced by a fresh calibration below.
            why = std::string("the cached model cannot be read (") + e.what() + ")";
        }
    }
    if (!why.empty() && options.progress) options.progress(why + "; calibrating this machine again");
    HardwareModel model = calibrate_cpu(options);
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    std::ofstream out(path);
    if (!out) throw Error("calibrate: cannot write the calibration cache " + path, ExitCode::internal);
    out << "# Written by hapbench calibrate; delete it to recalibrate.\n" << to_yaml(model);
    return model;
}

}  // namespace hb
