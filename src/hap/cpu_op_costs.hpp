// What calibration cannot measure: the flops one element of each vector op class costs on
// a CPU's FMA pipes, the cost of a MAC, and which dtypes run at another dtype's rate. Kept
// as data with the reasoning (hardware/op-costs/cpu.yaml), copied into calibrated models.
#pragma once

#include <map>
#include <string>

#include "hap/hardware_model.hpp"

namespace hb {

struct CpuOpCosts {
    std::map<OpClass, Figure> vector_flops_per_element;
    Figure flops_per_mac;
    std::map<DType, DType> runs_as;
    std::string runs_as_source;
    std::string source_path;
};

std::string default_cpu_op_costs_path();
// Errors name the file, line and field; every OpClass must have a cost.
CpuOpCosts load_cpu_op_costs(const std::string& path);

}  // namespace hb
