// A hardware model: the execution units of one machine, the peak rate of each, and where
// every figure comes from. It is data (hardware/*.yaml, schema in hardware/README.md); the
// solver (hap/solver.hpp) turns a case's WorkModel into T_HW with it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "ops/work_model.hpp"

namespace hb {

enum class HardwareKind { cpu, nvidia, ascend };
std::string_view hardware_kind_name(HardwareKind k);

// Published peaks are upper bounds by construction; calibrated ones were measured here and
// a kernel may beat them by a small margin (methodology section 5).
enum class PeakOrigin { published, calibrated };
std::string_view peak_origin_name(PeakOrigin o);

// Whether a unit's peak is for the whole chip or for one core (and so scales with the
// number of cores an implementation uses).
enum class UnitScope { chip, core };
std::string_view unit_scope_name(UnitScope s);

// The kinds of work in a WorkModel that a unit can serve.
// l1_to_l0a / l1_to_l0b / l0c_to_gm are on-chip traffic the solver derives from a work
// model's contractions and the tile shape it chooses (Ascend MTE1 and FixPipe).
enum class WorkKind { bytes_read, bytes_written, vector, matrix, l1_to_l0a, l1_to_l0b, l0c_to_gm };
std::string_view work_kind_name(WorkKind k);

// One number of the model and the reason to believe it.
struct Figure {
    double value = 0;
    std::string source;
};

struct ExecutionUnit {
    std::string name;
    std::string group;  // the bottleneck label (Memory, Vector, Matrix; Cube, MTE on Ascend)
    UnitScope scope = UnitScope::chip;
    // Per-core units: instances of this unit in one core (an Ascend AI core pairs one Cube
    // with two Vector units); the solver splits parallel work over cores_used * instances.
    int instances_per_core = 1;
    std::vector<WorkKind> serves;  // empty: recorded for reference, not used by the solver

    std::optional<Figure> bytes_per_s;     // required when serving bytes_read/bytes_written
    std::map<DType, Figure> flops_per_s;   // per dtype; required when serving vector/matrix
    // Dtypes without a rate of their own that execute at another dtype's rate
    // (fp16 elementwise math runs in fp32 on CPUs without native half arithmetic).
    std::map<DType, DType> runs_as;
    std::string runs_as_source;
    // Flops one element of each vector op class costs on this unit; a class that is absent
    // is not served by this unit.
    std::map<OpClass, Figure> vector_flops_per_element;
    std::optional<Figure> flops_per_mac;  // required when serving matrix
    // Optional: a rate per byte kind that overrides bytes_per_s for that kind (Ascend MTE1
    // moves L1->L0A at 512 B/cycle and L1->L0B at 256 B/cycle). Kinds on one unit add.
    std::map<WorkKind, Figure> bytes_per_s_for;
    // Optional: flops one element of a DataStream costs when its dtype runs_as another
    // (conversion on load and on store; Ascend 910B vector: bf16 <-> fp32 casts).
    std::optional<Figure> runs_as_conversion;
    // Optional: the buffer alignment granule in bytes; rows a kernel must keep whole
    // (WorkModel::row_elements) are padded to it, and the vector work with them.
    std::optional<Figure> align_bytes;
    // Optional (matrix units): each of m, n, k of a contraction is padded to a multiple of
    // this (the cube's 16x16x16 fractal); absent: no padding.
    std::optional<Figure> mac_granule;
    // Units that issue on the same hardware as this one (CPU vector math and matrix MACs
    // both run on the FMA pipes): their times add instead of overlapping.
    std::vector<std::string> shares_with;
    std::string source;  // what the unit is and how its figures were obtained

    bool serves_kind(WorkKind k) const;
    // The byte rate for kind `k` (bytes_per_s_for, else bytes_per_s); nullptr if none.
    const Figure* byte_rate_for(WorkKind k) const;
    // The rate for `dtype`, following runs_as; nullptr when the unit has none.
    const Figure* rate_for(DType dtype) const;
};

struct Provenance {
    PeakOrigin origin = PeakOrigin::published;
    std::string date;       // ISO date the figures were taken or measured
    std::string host;       // machine name (calibrated) or empty
    std::string cpu_model;  // /proc/cpuinfo model name (calibrated CPU models)
    std::string method;     // how the figures were obtained, or the documents they come from
};

struct HardwareModel {
    std::string name;
    HardwareKind kind = HardwareKind::cpu;
    std::string description;
    Provenance provenance;
    double floor_us = 0;  // T_HW never goes below this (accelerators: launch floor)
    int cores = 1;        // cores an implementation may spread over
    std::vector<ExecutionUnit> units;
    // Optional: capacities in bytes of the per-core buffers that bound tile shapes
    // (Ascend: l1, l0a, l0b, l0c, ub). The solver reads l0a, l0b and l0c.
    std::map<std::string, Figure> buffers;
    // How the matrix and vector engines exchange data: on_chip (one SM / core shares
    // registers and shared memory), global_memory (Ascend 910B: separate cube and vector
    // cores, data crosses through GM/L2). Default on_chip.
    std::string cube_vector_exchange = "on_chip";
    // Optional: per convention other than hapbench's (by name: "cann-bench") and per compute
    // dtype, the element-operations per second (whole chip) that convention prices formula
    // operations at, where they differ from the vector unit's own rates (the 910B2's
    // published values imply 6.0e12 for fp32; its sourced lanes give 5.53e12). Absent: the
    // vector unit's rates are used (docs/hap.md, "The two conventions").
    std::map<std::string, std::map<DType, Figure>> convention_vector_ops_per_s;
    std::string source_path;  // the file it was loaded from, for messages; empty if built

    const ExecutionUnit* find_unit(const std::string& name) const;
};

// Loads `path_or_name`: a path to a YAML file, or a bare name such as `cpu-example` that
// names hardware/<name>.yaml in the source tree. Every problem is an hb::Error naming the
// file, line and field.
HardwareModel load_hardware_model(const std::string& path_or_name);
// Parses YAML text; `origin` names the text in messages.
HardwareModel parse_hardware_model(const std::string& yaml_text, const std::string& origin);
// Checks the invariants the loader enforces (used for models built in code, too).
void validate_hardware_model(const HardwareModel& model);

// Bare names of the models shipped in hardware/.
std::vector<std::string> known_hardware_models();
std::string hardware_model_dir();

std::string to_yaml(const HardwareModel& model);

}  // namespace hb
