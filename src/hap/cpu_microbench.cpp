#include "hap/cpu_microbench.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>

#include "core/cpu_affinity.hpp"
#include "core/error.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace hb {

namespace {

using Clock = std::chrono::steady_clock;

// Results of the kernels land here so that the compiler cannot drop the loops.
volatile double microbench_sink = 0;

// Enough independent FMA chains to cover latency x pipes on current cores (4 x 2 = 8);
// these counts match the HB_CHAINS_* lists below.
constexpr int avx2_chains = 12;
constexpr int avx512_chains = 16;
constexpr int scalar_chains = 12;
// a <- a*m + c converges to c/(1-m) = 0.1: stays finite and never denormal.
constexpr double fma_multiplier = 0.999999;
constexpr double fma_addend = 1e-7;

// The chains are named variables, not an array: GCC keeps an array of vectors in memory
// at -O2, and the store-to-load latency would then be what the loop measures.
#define HB_CHAINS_12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define HB_CHAINS_16(X) HB_CHAINS_12(X) X(12) X(13) X(14) X(15)

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) double fma_loop_f32_avx2(std::int64_t iterations) {
    const __m256 m = _mm256_set1_ps(static_cast<float>(fma_multiplier));
    const __m256 c = _mm256_set1_ps(static_cast<float>(fma_addend));
#define HB_INIT(k) __m256 a##k = _mm256_set1_ps(1.0f + 0.01f * k);
#define HB_STEP(k) a##k = _mm256_fmadd_ps(a##k, m, c);
#define HB_SUM(k) s = _mm256_add_ps(s, a##k);
    HB_CHAINS_12(HB_INIT)
    for (std::int64_t i = 0; i < iterations; ++i) { HB_CHAINS_12(HB_STEP) }
    __m256 s = _mm256_setzero_ps();
    HB_CHAINS_12(HB_SUM)
#undef HB_INIT
#undef HB_STEP
#undef HB_SUM
    float out[8];
    _mm256_storeu_ps(out, s);
    return out[0];
}

__attribute__((target("avx2,fma"))) double fma_loop_f64_avx2(std::int64_t iterations) {
    const __m256d m = _mm256_set1_pd(fma_multiplier);
    const __m256d c = _mm256_set1_pd(fma_addend);
#define HB_INIT(k) __m256d a##k = _mm256_set1_pd(1.0 + 0.01 * k);
#define HB_STEP(k) a##k = _mm256_fmadd_pd(a##k, m, c);
#define HB_SUM(k) s = _mm256_add_pd(s, a##k);
    HB_CHAINS_12(HB_INIT)
    for (std::int64_t i = 0; i < iterations; ++i) { HB_CHAINS_12(HB_STEP) }
    __m256d s = _mm256_setzero_pd();
    HB_CHAINS_12(HB_SUM)
#undef HB_INIT
#undef HB_STEP
#undef HB_SUM
    double out[4];
    _mm256_storeu_pd(out, s);
    return out[0];
}

// Loads and stores rather than set1/reduce: those trip GCC 12's -Wuninitialized.
__attribute__((target("avx512f"))) double fma_loop_f32_avx512(std::int64_t iterations) {
    float mv[16], cv[16], av[16];
    std::fill(mv, mv + 16, static_cast<float>(fma_multiplier));
    std::fill(cv, cv + 16, static_cast<float>(fma_addend));
    std::fill(av, av + 16, 1.0f);
    const __m512 m = _mm512_loadu_ps(mv);
    const __m512 c = _mm512_loadu_ps(cv);
    const __m512 start = _mm512_loadu_ps(av);
#define HB_INIT(k) __m512 a##k = _mm512_mul_ps(start, _mm512_add_ps(m, c));
#define HB_STEP(k) a##k = _mm512_fmadd_ps(a##k, m, c);
#define HB_SUM(k) s = _mm512_add_ps(s, a##k);
    HB_CHAINS_16(HB_INIT)
    for (std::int64_t i = 0; i < iterations; ++i) { HB_CHAINS_16(HB_STEP) }
    __m512 s = _mm512_setzero_ps();
    HB_CHAINS_16(HB_SUM)
#undef HB_INIT
#undef HB_STEP
#undef HB_SUM
    _mm512_storeu_ps(av, s);
    return av[0];
}

__attribute__((target("avx512f"))) double fma_loop_f64_avx512(std::int64_t iterations) {
    double mv[8], cv[8], av[8];
    std::fill(mv, mv + 8, fma_multiplier);
    std::fill(cv, cv + 8, fma_addend);
    std::fill(av, av + 8, 1.0);
    const __m512d m = _mm512_loadu_pd(mv);
    const __m512d c = _mm512_loadu_pd(cv);
    const __m512d start = _mm512_loadu_pd(av);
#define HB_INIT(k) __m512d a##k = _mm512_mul_pd(start, _mm512_add_pd(m, c));
#define HB_STEP(k) a##k = _mm512_fmadd_pd(a##k, m, c);
#define HB_SUM(k) s = _mm512_add_pd(s, a##k);
    HB_CHAINS_16(HB_INIT)
    for (std::int64_t i = 0; i < iterations; ++i) { HB_CHAINS_16(HB_STEP) }
    __m512d s = _mm512_setzero_pd();
    HB_CHAINS_16(HB_SUM)
#undef HB_INIT
#undef HB_STEP
#undef HB_SUM
    _mm512_storeu_pd(av, s);
    return av[0];
}

__attribute__((target("avx2"))) double read_avx2(const float* p, std::size_t n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
    for (std::size_t i = 0; i + 64 <= n; i += 64) {
        s0 = _mm256_add_ps(s0, _mm256_load_ps(p + i));
        s1 = _mm256_add_ps(s1, _mm256_load_ps(p + i + 8));
        s2 = _mm256_add_ps(s2, _mm256_load_ps(p + i + 16));
        s3 = _mm256_add_ps(s3, _mm256_load_ps(p + i + 24));
        s4 = _mm256_add_ps(s4, _mm256_load_ps(p + i + 32));
        s5 = _mm256_add_ps(s5, _mm256_load_ps(p + i + 40));
        s6 = _mm256_add_ps(s6, _mm256_load_ps(p + i + 48));
        s7 = _mm256_add_ps(s7, _mm256_load_ps(p + i + 56));
    }
    const __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)),
                                   _mm256_add_ps(_mm256_add_ps(s4, s5), _mm256_add_ps(s6, s7)));
    float out[8];
    _mm256_storeu_ps(out, s);
    return out[0];
}

__attribute__((target("avx2"))) void write_nt_avx2(float* p, std::size_t n, float value) {
    const __m256 v = _mm256_set1_ps(value);
    for (std::size_t i = 0; i + 32 <= n; i += 32) {
        _mm256_stream_ps(p + i, v);
        _mm256_stream_ps(p + i + 8, v);
        _mm256_stream_ps(p + i + 16, v);
        _mm256_stream_ps(p + i + 24, v);
    }
    _mm_sfence();
}

__attribute__((target("avx2"))) void copy_nt_avx2(const float* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i + 32 <= n; i += 32) {
        const __m256 a = _mm256_load_ps(src + i), b = _mm256_load_ps(src + i + 8);
        const __m256 c = _mm256_load_ps(src + i + 16), d = _mm256_load_ps(src + i + 24);
        _mm256_stream_ps(dst + i, a);
        _mm256_stream_ps(dst + i + 8, b);
        _mm256_stream_ps(dst + i + 16, c);
        _mm256_stream_ps(dst + i + 24, d);
    }
    _mm_sfence();
}
#endif

template <typename T>
double fma_loop_scalar(std::int64_t iterations) {
    const T m = static_cast<T>(fma_multiplier), c = static_cast<T>(fma_addend);
#define HB_INIT(k) T a##k = T(1) + T(0.01) * k;
#define HB_STEP(k) a##k = a##k * m + c;
#define HB_SUM(k) s += a##k;
    HB_CHAINS_12(HB_INIT)
    for (std::int64_t i = 0; i < iterations; ++i) { HB_CHAINS_12(HB_STEP) }
    T s = 0;
    HB_CHAINS_12(HB_SUM)
#undef HB_INIT
#undef HB_STEP
#undef HB_SUM
    return static_cast<double>(s);
}

double read_scalar(const float* p, std::size_t n) {
    std::uint32_t s[8] = {};
    for (std::size_t i = 0; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; ++k) {
            std::uint32_t bits;
            std::memcpy(&bits, p + i + k, sizeof bits);
            s[k] ^= bits;
        }
    return static_cast<double>(s[0] ^ s[1] ^ s[2] ^ s[3] ^ s[4] ^ s[5] ^ s[6] ^ s[7]);
}

struct FmaKernel {
    double (*loop)(std::int64_t);
    double flops_per_iteration;
    std::string isa;
};

std::vector<FmaKernel> fma_kernels(DType dtype, const CpuInfo& cpu) {
    const bool f32 = dtype == DType::f32;
    std::vector<FmaKernel> kernels;
#if defined(__x86_64__)
    if (cpu.avx512f)
        kernels.push_back({f32 ? fma_loop_f32_avx512 : fma_loop_f64_avx512,
                           2.0 * avx512_chains * (f32 ? 16 : 8), "avx512f"});
    if (cpu.avx2_fma)
        kernels.push_back({f32 ? fma_loop_f32_avx2 : fma_loop_f64_avx2,
                           2.0 * avx2_chains * (f32 ? 8 : 4), "avx2+fma"});
#endif
    if (kernels.empty())
        kernels.push_back({f32 ? fma_loop_scalar<float> : fma_loop_scalar<double>,
                           2.0 * scalar_chains, "scalar (no AVX2/FMA)"});
    return kernels;
}

}  // namespace

std::vector<double> time_parallel(const CpuInfo& cpu, const std::vector<int>& cpus, int runs,
                                  const std::function<void(int)>& work) {
    std::vector<double> seconds(static_cast<std::size_t>(runs), 0);
    const int threads = static_cast<int>(cpus.size());
    Clock::time_point start;
#pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num();
        bind_to_cpus(0, {cpus[static_cast<std::size_t>(t)]});
        for (int r = -1; r < runs; ++r) {
#pragma omp barrier
#pragma omp master
            start = Clock::now();
#pragma omp barrier
            work(t);
#pragma omp barrier
#pragma omp master
            if (r >= 0) seconds[static_cast<std::size_t>(r)] = std::chrono::duration<double>(Clock::now() - start).count();
        }
        bind_to_cpus(0, cpu.allowed_cpus);  // restored
    }
    return seconds;
}

MicrobenchResult microbench_rates(const std::vector<double>& seconds, double amount, const std::string& isa) {
    MicrobenchResult r;
    r.isa = isa;
    for (double s : seconds) r.run_per_s.push_back(s > 0 ? amount / s : 0);
    r.best_per_s = *std::max_element(r.run_per_s.begin(), r.run_per_s.end());
    return r;
}

std::string MicrobenchResult::describe_spread() const {
    const double worst = run_per_s.empty() ? 0 : *std::min_element(run_per_s.begin(), run_per_s.end());
    char text[160];
    std::snprintf(text, sizeof text, "best of %zu runs (worst run %.4g, %.1f%% below)", run_per_s.size(), worst,
                  best_per_s > 0 ? 100.0 * (best_per_s - worst) / best_per_s : 0.0);
    return text;
}

std::string_view memory_pattern_name(MemoryPattern p) {
    switch (p) {
        case MemoryPattern::read: return "read";
        case MemoryPattern::write_nt: return "non-temporal write";
        case MemoryPattern::copy_nt: return "copy with non-temporal stores";
    }
    return "?";
}

MicrobenchResult measure_fma_flops(DType dtype, const CpuInfo& cpu, const std::vector<int>& cpus,
                                   double seconds_per_run, int runs) {
    if (dtype != DType::f32 && dtype != DType::f64)
        throw Error("FMA microbenchmark: only float32 and float64 are measured", ExitCode::internal);
    MicrobenchResult best;
    // On CPUs where 512-bit FMAs issue on fewer pipes than 256-bit ones, the narrower
    // kernel is faster; the peak is the faster of the ISAs present.
    for (const FmaKernel& k : fma_kernels(dtype, cpu)) {
        std::vector<double> sink(cpus.size(), 0);
        // Size the run from a short single-thread probe so that one run lasts about
        // seconds_per_run whatever the machine.
        const std::int64_t probe_iterations = 20000;
        auto probe_start = Clock::now();
        sink[0] += k.loop(probe_iterations);
        const double probe_s = std::max(1e-6, std::chrono::duration<double>(Clock::now() - probe_start).count());
        const auto iterations = std::max<std::int64_t>(
            probe_iterations, static_cast<std::int64_t>(probe_iterations * seconds_per_run / probe_s));
        const auto seconds = time_parallel(cpu, cpus, runs, [&](int t) {
            sink[static_cast<std::size_t>(t)] += k.loop(iterations);
        });
        const double flops = k.flops_per_iteration * static_cast<double>(iterations) * static_cast<double>(cpus.size());
        MicrobenchResult r = microbench_rates(seconds, flops, k.isa);
        microbench_sink = sink[0];
        if (r.best_per_s > best.best_per_s) best = r;
    }
    return best;
}

MicrobenchResult measure_bandwidth(MemoryPattern pattern, float* buffer, std::size_t bytes,
                                   const CpuInfo& cpu, const std::vector<int>& cpus, int passes,
                                   int runs) {
    const std::size_t threads = cpus.size();
    // Each thread gets a slice that is a whole number of 128-byte blocks.
    const std::size_t block_floats = 32;
    std::size_t region_floats = bytes / sizeof(float);
    if (pattern == MemoryPattern::copy_nt) region_floats /= 2;  // source half, destination half
    const std::size_t slice_floats = region_floats / threads / block_floats * block_floats;
    if (slice_floats == 0) throw Error("bandwidth microbenchmark: buffer too small for the thread count", ExitCode::internal);
    float* source = buffer;
    float* destination = buffer + region_floats;
    std::vector<double> sink(threads, 0);
    std::string isa = "scalar (no AVX2)";
#if defined(__x86_64__)
    const bool avx2 = cpu.avx2_fma || __builtin_cpu_supports("avx2");
    if (avx2) isa = "avx2";
#else
    const bool avx2 = false;
#endif
    const auto seconds = time_parallel(cpu, cpus, runs, [&](int t) {
        float* mine = source + static_cast<std::size_t>(t) * slice_floats;
        float* theirs = destination + static_cast<std::size_t>(t) * slice_floats;
        for (int pass = 0; pass < passes; ++pass) {
            switch (pattern) {
                case MemoryPattern::read:
#if defined(__x86_64__)
                    if (avx2) { sink[static_cast<std::size_t>(t)] += read_avx2(mine, slice_floats); break; }
#endif
                    sink[static_cast<std::size_t>(t)] += read_scalar(mine, slice_floats);
                    break;
                case MemoryPattern::write_nt:
#if defined(__x86_64__)
                    if (avx2) { write_nt_avx2(mine, slice_floats, static_cast<float>(pass)); break; }
#endif
                    std::fill(mine, mine + slice_floats, static_cast<float>(pass));
                    break;
                case MemoryPattern::copy_nt:
#if defined(__x86_64__)
                    if (avx2) { copy_nt_avx2(mine, theirs, slice_floats); break; }
#endif
                    std::memcpy(theirs, mine, slice_floats * sizeof(float));
                    break;
            }
        }
    });
    const double moved_per_pass = static_cast<double>(slice_floats * threads * sizeof(float)) *
                                  (pattern == MemoryPattern::copy_nt ? 2.0 : 1.0);
    MicrobenchResult r = microbench_rates(seconds, moved_per_pass * passes, isa);
    microbench_sink = sink[0];
    return r;
}

}  // namespace hb
