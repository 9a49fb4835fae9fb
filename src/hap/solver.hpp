// T_HW = min over implementation choices d of max over execution units k of
// work_k(d) / peak_k (methodology section 5), for any hardware model.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "hap/hardware_model.hpp"
#include "ops/work_model.hpp"

namespace hb {

// One way an implementation can map a case onto the machine (docs/hap.md, "choices"):
//  - cores_used: how many cores it spreads over (at most the case's parallel items);
//  - path: where its contractions run, "cube" (the matrix unit) or "vector" (the vector
//    unit, allowed where Contraction::vector_ok); empty when the case has none;
//  - tile_m x tile_n: the L0C output tile of a cube contraction, which sets how often
//    L1 operands are re-sent to L0A/L0B (MTE1); 0 when the model states no buffers;
//  - fused: one kernel for the matrix and the vector stage, or two; it matters only where
//    WorkModel::cube_vector_bytes > 0.
struct ImplementationChoice {
    int cores_used = 1;
    std::string path;
    int tile_m = 0;
    int tile_n = 0;
    bool fused = true;
    std::string describe() const;
};

struct HapResult {
    double t_hw_us = 0;                    // after the floor
    double unfloored_us = 0;               // before the floor
    bool floored = false;                  // the floor set t_hw_us
    std::map<std::string, double> unit_us; // each serving unit's own work / peak, winning choice
    std::string bottleneck_unit;
    std::string bottleneck_group;          // the label reported per case (Memory, Vector, ...)
    ImplementationChoice choice;           // the choice that attained the minimum
    double choices_searched = 0;           // how many choices solve() compared
    // A case with a dependent chain (WorkModel::chain): its steps' time under the winning
    // choice, and whether it, not the case's total work, set unfloored_us (the bottleneck is
    // then the busiest unit of one step).
    double chain_us = 0;
    bool chain_bound = false;
};

// The choices the solver minimises over for this case on this model.
std::vector<ImplementationChoice> implementation_choices(const WorkModel& work,
                                                         const HardwareModel& model);

// Time on every unit (and the bottleneck) for one fixed choice, floor not applied.
HapResult solve_for_choice(const WorkModel& work, const HardwareModel& model,
                           const ImplementationChoice& choice);

// Throws hb::Error when the model cannot serve some of the work (a vector op class or a
// dtype that no unit has a rate for), naming the model, the work and the fix.
HapResult solve(const WorkModel& work, const HardwareModel& model);

}  // namespace hb
