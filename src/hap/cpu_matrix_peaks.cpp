#include "hap/cpu_matrix_peaks.hpp"

#include <algorithm>
#include <cstdio>

namespace hb {

namespace {

struct Candidate {
    double flops = 0;    // per core
    std::string how;     // the instruction and how it serves the dtype
    std::string detail;  // how its rate was measured
};

std::string gflops(double flops) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GFLOP/s", flops / 1e9);
    return text;
}

Figure fastest(const std::string& dtype, const std::vector<Candidate>& candidates) {
    const auto best = std::max_element(candidates.begin(), candidates.end(),
                                       [](const Candidate& a, const Candidate& b) { return a.flops < b.flops; });
    std::string source = "calibrated: the fastest way to run " + dtype + " contractions on this CPU, " + best->how + ", " +
                         gflops(best->flops) + " per core (" + best->detail + ")";
    if (candidates.size() > 1) {
        source += "; candidates:";
        for (const auto& c : candidates) source += " " + c.how + " " + gflops(c.flops) + ";";
        source.pop_back();
    }
    return Figure{best->flops, source};
}

}  // namespace

CalibratedMatrixUnit cpu_matrix_unit(const MatrixPeakInputs& in, const CpuOpCosts& costs) {
    const double per_mac = costs.flops_per_mac.value;
    auto instruction = [&](MatrixInstruction i) -> const MeasuredRate* {
        auto it = in.instructions.find(i);
        return it == in.instructions.end() || !(it->second.per_core > 0) ? nullptr : &it->second;
    };
    auto measured = [&](MatrixInstruction i, double fraction, const std::string& how) {
        const MeasuredRate* r = instruction(i);
        return Candidate{r->per_core * per_mac * fraction, how, r->source};
    };
    const MeasuredRate* amx_bf16 = instruction(MatrixInstruction::amx_bf16);
    const MeasuredRate* amx_int8 = instruction(MatrixInstruction::amx_int8);
    const MeasuredRate* amx_fp16 = instruction(MatrixInstruction::amx_fp16);
    const std::string fma = in.fma_isa + " FMA";

    CalibratedMatrixUnit out;
    ExecutionUnit& u = out.unit;
    u.name = "matrix";
    u.group = "Matrix";
    u.scope = UnitScope::core;
    u.serves = {WorkKind::matrix};
    u.flops_per_mac = costs.flops_per_mac;
    u.runs_as = costs.runs_as;
    u.runs_as_source = costs.runs_as_source;
    u.flops_per_s[DType::f64] = Figure{in.fma_f64.per_core, in.fma_f64.source};

    // Only ways that meet the precision gate count. Products rounded to fp16 (AVX512-FP16
    // FMA) or an fp32 operand cut to one or two bf16 terms leave 2^-12 .. 2^-16 of relative
    // error in every product, which fails the max-error screen and the same-precision
    // fallback wherever a sum cancels; so AVX512-FP16 is not a candidate, and AMX-BF16 serves
    // fp32 only with three bf16 terms per operand and six tile products (oneMKL's
    // FLOAT_TO_BF16X3 mode; the three dropped products are below 2^-24 relative), and fp16
    // (exactly two bf16 terms) with all four products.
    std::vector<Candidate> f32 = {{in.fma_f32.per_core, fma, in.fma_f32.source}};
    if (amx_bf16)
        f32.push_back(measured(MatrixInstruction::amx_bf16, 1.0 / 6,
                               "AMX-BF16 at a sixth of its rate (fp32 split into three bf16, six products)"));
    u.flops_per_s[DType::f32] = fastest("float32", f32);

    const Candidate widened{in.fma_f32.per_core, "fp32 " + fma + " on widened operands", in.fma_f32.source};
    std::vector<Candidate> f16 = {widened}, bf16 = {widened};
    if (amx_bf16) {
        f16.push_back(measured(MatrixInstruction::amx_bf16, 1.0 / 4, "AMX-BF16 at a quarter of its rate (fp16 split exactly into two bf16, four products)"));
        bf16.push_back(measured(MatrixInstruction::amx_bf16, 1, "AMX-BF16"));
    }
    if (instruction(MatrixInstruction::amx_fp16)) f16.push_back(measured(MatrixInstruction::amx_fp16, 1, "AMX-FP16"));
    if (instruction(MatrixInstruction::avx512_bf16_dot))
        bf16.push_back(measured(MatrixInstruction::avx512_bf16_dot, 1, "AVX512-BF16 dot products"));
    if (f16.size() > 1) u.flops_per_s[DType::f16] = fastest("float16", f16);
    if (bf16.size() > 1) u.flops_per_s[DType::bf16] = fastest("bfloat16", bf16);

    // int8 (and uint8): a 256-bit register holds four times the fp32 lanes and integer
    // multiply-adds (vpmaddubsw, vpmaddwd) issue at least as often as FMAs, an upper bound
    // without dot-product instructions; VNNI and AMX-INT8 where present.
    std::vector<Candidate> int8 = {{in.fma_f32.per_core * 4,
                                    "derived: the fp32 FMA rate x 4 (lanes per register relative to fp32; integer "
                                    "multiply-adds issue at least as often as FMAs)",
                                    in.fma_f32.source}};
    if (instruction(MatrixInstruction::avx512_vnni_dot))
        int8.push_back(measured(MatrixInstruction::avx512_vnni_dot, 1, "AVX512-VNNI dot products"));
    if (instruction(MatrixInstruction::avx_vnni_dot))
        int8.push_back(measured(MatrixInstruction::avx_vnni_dot, 1, "AVX-VNNI dot products"));
    if (amx_int8) int8.push_back(measured(MatrixInstruction::amx_int8, 1, "AMX-INT8"));
    u.flops_per_s[DType::i8] = fastest("int8", int8);
    u.flops_per_s[DType::u8] = fastest("uint8", int8);
    // Wider integers and bool have no contraction instructions: lanes per register.
    for (DType t : {DType::boolean, DType::i16, DType::i32, DType::i64}) {
        const double lanes = 4.0 / static_cast<double>(dtype_size(t));
        u.flops_per_s[t] = Figure{in.fma_f32.per_core * lanes,
                                  "derived: the fp32 FMA rate x " + std::to_string(lanes).substr(0, 4) +
                                      " (lanes per register relative to fp32)"};
    }

    out.beside_vector = amx_bf16 || amx_int8 || amx_fp16;
    u.shares_with = out.beside_vector ? std::vector<std::string>{} : std::vector<std::string>{"vector"};
    u.source = "matrix multiply-accumulate at the fastest rate per dtype (each figure names its instruction). " +
               std::string(out.beside_vector
                               ? "The AMX tile unit runs beside the FMA pipes, so matrix and vector work overlap (for "
                                 "float64, whose MACs share the FMA pipes with vector math, a looser bound)"
                               : "Every rate here issues on the FMA pipes that vector math uses, hence shares_with vector") +
               (in.amx_note.empty() ? "" : "; " + in.amx_note);
    return out;
}

void measure_matrix_instructions(const CpuInfo& cpu, const std::vector<int>& cpus, double seconds_per_run, int runs,
                                 const std::function<void(const std::string&)>& progress, MatrixPeakInputs& out) {
    const int n = static_cast<int>(cpus.size());
    std::string why_not;
    const bool amx_reported = cpu.amx_int8 || cpu.amx_bf16 || cpu.amx_fp16;
    const bool amx_allowed = amx_reported && request_amx_permission(why_not);
    if (amx_reported && !amx_allowed) out.amx_note = "AMX is reported by the CPU but unusable: " + why_not + "; its peaks are absent";
    for (MatrixInstruction i : all_matrix_instructions()) {
        if (!matrix_instruction_present(i, cpu)) continue;
        const bool amx = i == MatrixInstruction::amx_int8 || i == MatrixInstruction::amx_bf16 || i == MatrixInstruction::amx_fp16;
        if (amx && !amx_allowed) continue;
        const std::string name(matrix_instruction_info(i).name);
        if (progress) progress("matrix throughput, " + name);
        const MicrobenchResult all = measure_matrix_macs(i, cpu, cpus, seconds_per_run, runs);
        const MicrobenchResult one = n > 1 ? measure_matrix_macs(i, cpu, {cpus.front()}, seconds_per_run, runs) : all;
        char text[160];
        std::snprintf(text, sizeof text, "%d threads pinned one per CPU reached %.1f GMAC/s (%s), one CPU alone %.1f GMAC/s",
                      n, all.best_per_s / 1e9, all.describe_spread().c_str(), one.best_per_s / 1e9);
        out.instructions[i] = MeasuredRate{std::max(all.best_per_s / n, one.best_per_s),
                                           "measured " + name + ": " + text + "; per core the larger of all/" +
                                               std::to_string(n) + " and one"};
    }
}

}  // namespace hb
