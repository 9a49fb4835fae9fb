// Microbenchmarks for the matrix peaks of a CPU: the throughput of each instruction a
// contraction kernel can issue besides plain FMAs with results that meet the precision gate
// (AVX512-BF16 dot products, VNNI int8 dot products, AMX tile multiplies), in
// multiply-accumulates per second of a set of CPUs together. cpu_matrix_peaks turns them into
// the model's per-dtype rates.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hap/cpu_info.hpp"
#include "hap/cpu_microbench.hpp"

namespace hb {

enum class MatrixInstruction {
    avx512_bf16_dot,  // vdpbf16ps zmm: 32 bf16 pairs into 16 fp32 lanes
    avx512_vnni_dot,  // vpdpbusd zmm: 64 u8 x s8 products into 16 int32 lanes
    avx_vnni_dot,     // vpdpbusd ymm (AVX-VNNI): 32 products
    amx_int8,         // tdpbssd: a 16x64 int8 tile by a 64x16 one, 16,384 MACs
    amx_bf16,         // tdpbf16ps: a 16x32 bf16 tile by a 32x16 one, 8,192 MACs
    amx_fp16,         // tdpfp16ps: as tdpbf16ps in fp16 (GCC 12 has no intrinsic: inline assembly)
};

struct MatrixInstructionInfo {
    std::string_view name;  // as the model's sources print it
    double macs_per_instruction;
};
const MatrixInstructionInfo& matrix_instruction_info(MatrixInstruction instruction);
const std::vector<MatrixInstruction>& all_matrix_instructions();

// Whether the CPU reports the instruction set (AMX also needs request_amx_permission).
bool matrix_instruction_present(MatrixInstruction instruction, const CpuInfo& cpu);

// AMX tile data is off for a Linux process until it asks (arch_prctl ARCH_REQ_XCOMP_PERM,
// kernel 5.16 and later). Returns true when tiles are usable here; otherwise `why_not` says
// why (a kernel that cannot get tiles cannot use AMX either, so its peaks are absent).
bool request_amx_permission(std::string& why_not);

// Multiply-accumulates per second of `cpus` together (one pinned thread each), the best of
// `runs` runs of about `seconds_per_run`. The instruction must be present (and for AMX,
// permitted).
MicrobenchResult measure_matrix_macs(MatrixInstruction instruction, const CpuInfo& cpu, const std::vector<int>& cpus,
                                     double seconds_per_run, int runs);

}  // namespace hb
