// The matrix unit of a calibrated CPU model. Per dtype, its rate is the fastest way this
// CPU can run a contraction of that dtype to the precision gate's standard, from measured
// instruction rates (cpu_matrix_microbench) and the FMA peaks: a kernel may use any of
// them, so T_HW must assume the fastest. A dtype without an instruction of its own here
// is absent and runs at the fp32 rate through runs_as (absent, never zero).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "hap/cpu_info.hpp"
#include "hap/cpu_matrix_microbench.hpp"
#include "hap/cpu_op_costs.hpp"
#include "hap/hardware_model.hpp"

namespace hb {

// A measured per-core rate and how it was measured.
struct MeasuredRate {
    double per_core = 0;  // flops per second (FMA-class) or MACs per second (instructions)
    std::string source;
};

struct MatrixPeakInputs {
    MeasuredRate fma_f32, fma_f64;  // flops/s per core of FMA chains (an FMA is 2 flops)
    std::string fma_isa;            // e.g. "avx512f"
    std::map<MatrixInstruction, MeasuredRate> instructions;  // MACs/s per core, only those usable here
    std::string amx_note;           // why AMX, though reported, was not measured (empty otherwise)
};

struct CalibratedMatrixUnit {
    ExecutionUnit unit;
    // True when a rate comes from the AMX tile unit, which runs beside the FMA pipes: the
    // matrix unit then shares nothing with the vector unit (a looser bound for fp64, whose
    // MACs do share the FMA pipes, never a wrong one).
    bool beside_vector = false;
};

CalibratedMatrixUnit cpu_matrix_unit(const MatrixPeakInputs& in, const CpuOpCosts& costs);

// Measures every matrix instruction this CPU has (AMX after asking the kernel for tile
// data), on all of `cpus` and on the first alone; per core = the larger of all / n and the
// one-CPU rate, as for the FMA peaks. `progress` gets one line per instruction.
void measure_matrix_instructions(const CpuInfo& cpu, const std::vector<int>& cpus, double seconds_per_run, int runs,
                                 const std::function<void(const std::string&)>& progress, MatrixPeakInputs& out);

}  // namespace hb
