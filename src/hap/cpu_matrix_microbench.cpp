#include "hap/cpu_matrix_microbench.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>

#include "core/error.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace hb {

namespace {

using Clock = std::chrono::steady_clock;

volatile double matrix_microbench_sink = 0;

// Independent accumulators per loop iteration: enough to cover latency x pipes (FMA-class
// instructions: 4-5 cycles x 2 pipes; AMX: one tile multiply per 16 cycles with a latency
// of a few of them, covered by 6 of the 8 tiles as accumulators).
#define HB_CHAINS_16(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)
constexpr int chains = 16;
constexpr int amx_accumulators = 6;

#if defined(__x86_64__)
// Vectors come from memory and go back to it, not through set1/reduce intrinsics: those
// trip GCC 12's -Wuninitialized on AVX-512 types.

// Each instruction adds 2 x 2^-20 per lane: no overflow, no denormals over any run.
__attribute__((target("avx512f,avx512bf16"))) double bf16_dot_loop(std::int64_t iterations) {
    alignas(64) std::uint16_t av[32], bv[32];
    alignas(64) float cv[16];
    std::fill(av, av + 32, static_cast<std::uint16_t>(0x3580));  // 2^-20 in bf16
    std::fill(bv, bv + 32, static_cast<std::uint16_t>(0x3f80));  // 1
    std::fill(cv, cv + 16, 1.0f);
    const __m512bh a = (__m512bh)_mm512_load_si512(av), b = (__m512bh)_mm512_load_si512(bv);
    const __m512 start = _mm512_load_ps(cv);
#define HB_INIT(k) __m512 c##k = start;
#define HB_STEP(k) c##k = _mm512_dpbf16_ps(c##k, a, b);
#define HB_SUM(k) s = _mm512_add_ps(s, c##k);
    HB_CHAINS_16(HB_INIT)
    for (std::int64_t i = 0; i < iterations; ++i) { HB_CHAINS_16(HB_STEP) }
    __m512 s = start;
    HB_CHAINS_16(HB_SUM)
#undef HB_INIT
#undef HB_STEP
#undef HB_SUM
    _mm512_store_ps(cv, s);
    return cv[0];
}

// Integer accumulators wrap harmlessly.
__attribute__((target("avx512f,avx512vnni"))) double vnni512_loop(std::int64_t iterations) {
    alignas(64) std::int32_t ones[16];
    std::fill(ones, ones + 16, 0x01010101);
    const __m512i a = _mm512_load_si512(ones), b = a;
#define HB_INIT(k) __m512i c##k = a;
#define HB_STEP(k) c##k = _mm512_dpbusd_epi32(c##k, a, b);
#define HB_SUM(k) s = _mm512_add_epi32(s, c##k);
    HB_CHAINS_16(HB_INIT)
    for (std::int64_t i = 0; i < iterations; ++i) { HB_CHAINS_16(HB_STEP) }
    __m512i s = a;
    HB_CHAINS_16(HB_SUM)
#undef HB_INIT
#undef HB_STEP
#undef HB_SUM
    _mm512_store_si512(ones, s);
    return ones[0];
}

__attribute__((target("avx2,avxvnni"))) double vnni256_loop(std::int64_t iterations) {
    alignas(32) std::int32_t ones[8];
    std::fill(ones, ones + 8, 0x01010101);
    const __m256i a = _mm256_load_si256(reinterpret_cast<const __m256i*>(ones)), b = a;
#define HB_INIT(k) __m256i c##k = a;
#define HB_STEP(k) c##k = _mm256_dpbusd_avx_epi32(c##k, a, b);
#define HB_SUM(k) s = _mm256_add_epi32(s, c##k);
    HB_CHAINS_16(HB_INIT)
    for (std::int64_t i = 0; i < iterations; ++i) { HB_CHAINS_16(HB_STEP) }
    __m256i s = a;
    HB_CHAINS_16(HB_SUM)
#undef HB_INIT
#undef HB_STEP
#undef HB_SUM
    _mm256_store_si256(reinterpret_cast<__m256i*>(ones), s);
    return ones[0];
}

// The tile configuration of palette 1: 8 tiles of 16 rows x 64 bytes.
struct alignas(64) TileConfig {
    std::uint8_t palette = 1;
    std::uint8_t start_row = 0;
    std::uint8_t reserved[14] = {};
    std::uint16_t bytes_per_row[16] = {};
    std::uint8_t rows[16] = {};
};

// Tiles 0-5 accumulate, 6 and 7 hold the operands (loaded once: the loop measures the
// tile multiply unit, which a kernel keeps fed from L1 between the multiplies).
enum class TileKind { int8, bf16, fp16 };

__attribute__((target("amx-tile,amx-int8,amx-bf16"))) double amx_loop(std::int64_t iterations, TileKind kind) {
    const bool bf16 = kind != TileKind::int8;
    TileConfig config;
    for (int t = 0; t < 8; ++t) {
        config.bytes_per_row[t] = 64;
        config.rows[t] = 16;
    }
    _tile_loadconfig(&config);
    alignas(64) std::uint16_t operands[2][16 * 32];
    // int8: ones; bf16: 2^-20 (0x3580) times 1 (0x3f80); fp16: 2^-14 (0x0400) times 1
    // (0x3c00): no overflow over any run.
    const std::uint16_t small = kind == TileKind::int8 ? 0x0101 : kind == TileKind::bf16 ? 0x3580 : 0x0400;
    const std::uint16_t one = kind == TileKind::int8 ? 0x0101 : kind == TileKind::bf16 ? 0x3f80 : 0x3c00;
    std::fill(operands[0], operands[0] + 16 * 32, small);
    std::fill(operands[1], operands[1] + 16 * 32, one);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    _tile_zero(4);
    _tile_zero(5);
    _tile_loadd(6, operands[0], 64);
    _tile_loadd(7, operands[1], 64);
    if (kind == TileKind::fp16) {
        for (std::int64_t i = 0; i < iterations; ++i)
            asm volatile(
                "tdpfp16ps %%tmm7, %%tmm6, %%tmm0\n\t"
                "tdpfp16ps %%tmm7, %%tmm6, %%tmm1\n\t"
                "tdpfp16ps %%tmm7, %%tmm6, %%tmm2\n\t"
                "tdpfp16ps %%tmm7, %%tmm6, %%tmm3\n\t"
                "tdpfp16ps %%tmm7, %%tmm6, %%tmm4\n\t"
                "tdpfp16ps %%tmm7, %%tmm6, %%tmm5" ::: "memory");
    } else if (bf16) {
        for (std::int64_t i = 0; i < iterations; ++i) {
            _tile_dpbf16ps(0, 6, 7);
            _tile_dpbf16ps(1, 6, 7);
            _tile_dpbf16ps(2, 6, 7);
            _tile_dpbf16ps(3, 6, 7);
            _tile_dpbf16ps(4, 6, 7);
            _tile_dpbf16ps(5, 6, 7);
        }
    } else {
        for (std::int64_t i = 0; i < iterations; ++i) {
            _tile_dpbssd(0, 6, 7);
            _tile_dpbssd(1, 6, 7);
            _tile_dpbssd(2, 6, 7);
            _tile_dpbssd(3, 6, 7);
            _tile_dpbssd(4, 6, 7);
            _tile_dpbssd(5, 6, 7);
        }
    }
    alignas(64) std::int32_t result[16 * 16];
    _tile_stored(0, result, 64);
    _tile_release();
    float first;
    std::memcpy(&first, result, sizeof first);
    return bf16 ? first : result[0];
}

double amx_int8_loop(std::int64_t iterations) { return amx_loop(iterations, TileKind::int8); }
double amx_bf16_loop(std::int64_t iterations) { return amx_loop(iterations, TileKind::bf16); }
double amx_fp16_loop(std::int64_t iterations) { return amx_loop(iterations, TileKind::fp16); }
#endif

struct Kernel {
    double (*loop)(std::int64_t) = nullptr;
    double instructions_per_iteration = 0;
};

Kernel kernel_for(MatrixInstruction instruction) {
#if defined(__x86_64__)
    switch (instruction) {
        case MatrixInstruction::avx512_bf16_dot: return {bf16_dot_loop, chains};
        case MatrixInstruction::avx512_vnni_dot: return {vnni512_loop, chains};
        case MatrixInstruction::avx_vnni_dot: return {vnni256_loop, chains};
        case MatrixInstruction::amx_int8: return {amx_int8_loop, amx_accumulators};
        case MatrixInstruction::amx_bf16: return {amx_bf16_loop, amx_accumulators};
        case MatrixInstruction::amx_fp16: return {amx_fp16_loop, amx_accumulators};
    }
#endif
    return {};
}

}  // namespace

const MatrixInstructionInfo& matrix_instruction_info(MatrixInstruction instruction) {
    static const MatrixInstructionInfo infos[] = {
        {"AVX512-BF16 vdpbf16ps (zmm)", 32},
        {"AVX512-VNNI vpdpbusd (zmm)", 64},      {"AVX-VNNI vpdpbusd (ymm)", 32},
        {"AMX-INT8 tdpbssd (16x64 by 64x16)", 16 * 16 * 64}, {"AMX-BF16 tdpbf16ps (16x32 by 32x16)", 16 * 16 * 32},
        {"AMX-FP16 tdpfp16ps (16x32 by 32x16)", 16 * 16 * 32},
    };
    return infos[static_cast<int>(instruction)];
}

const std::vector<MatrixInstruction>& all_matrix_instructions() {
    static const std::vector<MatrixInstruction> all = {
        MatrixInstruction::avx512_bf16_dot, MatrixInstruction::avx512_vnni_dot,
        MatrixInstruction::avx_vnni_dot,    MatrixInstruction::amx_int8,        MatrixInstruction::amx_bf16,
        MatrixInstruction::amx_fp16};
    return all;
}

bool matrix_instruction_present(MatrixInstruction instruction, const CpuInfo& cpu) {
    switch (instruction) {
        case MatrixInstruction::avx512_bf16_dot: return cpu.avx512_bf16;
        case MatrixInstruction::avx512_vnni_dot: return cpu.avx512_vnni;
        case MatrixInstruction::avx_vnni_dot: return cpu.avx_vnni;
        case MatrixInstruction::amx_int8: return cpu.amx_int8;
        case MatrixInstruction::amx_bf16: return cpu.amx_bf16;
        case MatrixInstruction::amx_fp16: return cpu.amx_fp16;
    }
    return false;
}

bool request_amx_permission(std::string& why_not) {
#if defined(__x86_64__) && defined(SYS_arch_prctl)
    constexpr int arch_req_xcomp_perm = 0x1023;  // asm/prctl.h, Linux 5.16
    constexpr int xfeature_xtiledata = 18;
    if (syscall(SYS_arch_prctl, arch_req_xcomp_perm, xfeature_xtiledata) == 0) return true;
    why_not = std::string("the kernel refused AMX tile data (arch_prctl ARCH_REQ_XCOMP_PERM: ") + std::strerror(errno) + ")";
    return false;
#else
    why_not = "not an x86-64 Linux build";
    return false;
#endif
}

MicrobenchResult measure_matrix_macs(MatrixInstruction instruction, const CpuInfo& cpu, const std::vector<int>& cpus,
                                     double seconds_per_run, int runs) {
    const Kernel k = kernel_for(instruction);
    if (!k.loop || !matrix_instruction_present(instruction, cpu))
        throw Error("matrix microbenchmark: " + std::string(matrix_instruction_info(instruction).name) +
                        " is not available on this CPU",
                    ExitCode::internal);
    std::vector<double> sink(cpus.size(), 0);
    // Size the run from a short single-thread probe so that one run lasts about
    // seconds_per_run whatever the machine.
    const std::int64_t probe_iterations = 4000;
    const auto probe_start = Clock::now();
    sink[0] += k.loop(probe_iterations);
    const double probe_s = std::max(1e-6, std::chrono::duration<double>(Clock::now() - probe_start).count());
    const auto iterations = std::max<std::int64_t>(
        probe_iterations, static_cast<std::int64_t>(probe_iterations * seconds_per_run / probe_s));
    const auto seconds = time_parallel(cpu, cpus, runs, [&](int t) { sink[static_cast<std::size_t>(t)] += k.loop(iterations); });
    const double macs = matrix_instruction_info(instruction).macs_per_instruction * k.instructions_per_iteration *
                        static_cast<double>(iterations) * static_cast<double>(cpus.size());
    matrix_microbench_sink = sink[0];
    return microbench_rates(seconds, macs, std::string(matrix_instruction_info(instruction).name));
}

}  // namespace hb
