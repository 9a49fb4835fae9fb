// T_HW under a convention (docs/hap.md, "The two conventions"). The hapbench convention is the
// solver (hap/solver.hpp). The cann-bench convention is the reference benchmark's:
//
//   T_HW = max(floor_us, input bytes / read bandwidth, sum of cost[class] * count / rate[dtype],
//              MACs / matrix rate)
//
// with every input read in full (ops/formula_count.hpp: all_input_bytes), no writes, the
// operator's formula counted as written (WorkModel::formula) and priced by the one cost table
// of hardware/conventions/cann-bench.yaml, at the model's convention rates where it states
// them (conventions: cann-bench: vector_ops_per_s) and its vector unit's rates otherwise.
#pragma once

#include <map>
#include <string>

#include "hap/convention_name.hpp"
#include "hap/hardware_model.hpp"
#include "hap/solver.hpp"
#include "ops/problem.hpp"
#include "ops/work_model.hpp"

namespace hb {

// Element-operations one operation of each class costs under a convention.
struct ConventionCosts {
    std::string name;
    std::map<OpClass, Figure> cost;  // every OpClass present
    std::string source_path;
};

std::string default_cann_bench_costs_path();
// Errors name the file, line and field; every OpClass must have a positive cost.
ConventionCosts load_convention_costs(const std::string& path);
// hardware/conventions/cann-bench.yaml, loaded once per process.
const ConventionCosts& cann_bench_costs();

// The rates the cann-bench convention uses on `model`, whole chip, and where each comes from.
struct ConventionRates {
    double read_bytes_per_s = 0;
    std::string read_unit;    // the unit serving bytes_read that sets the rate
    std::string read_group;
    std::string vector_unit;  // the unit vector work is labelled with
    std::string vector_group;
};
ConventionRates cann_bench_rates(const HardwareModel& model);
// Element-operations per second for formula work computing in `dtype`: the model's
// convention rate, else its vector unit's rate for the dtype over the cost of an add there.
// Throws hb::Error naming the model and the dtype when it has neither.
double cann_bench_vector_ops_per_s(const HardwareModel& model, DType dtype);

// T_HW under the cann-bench convention. unit_us holds the three terms under the names of the
// units they stand for (the read unit, the vector unit, the matrix unit when there is matrix
// work); bottleneck_unit is the largest, floored as hapbench's solver floors.
HapResult solve_cann_bench(const WorkModel& work, double input_bytes, const HardwareModel& model,
                           const ConventionCosts& costs);

// One case under `convention`: the solver for hapbench, solve_cann_bench for cann-bench.
// Errors carry the case's context ("softmax case 3: ").
HapResult t_hw_under(Convention convention, const Problem& problem, const WorkModel& work,
                     const HardwareModel& model);

}  // namespace hb
