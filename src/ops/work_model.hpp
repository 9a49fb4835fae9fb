// What a case costs, independent of hardware: compulsory global-memory traffic, vector
// operations by class and dtype, matrix MACs by dtype, and the parallel structure. The
// hardware models (src/hap) turn this into per-unit times.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.hpp"

namespace hb {

// Classes of vector operation. Each hardware model states the cost of one element of
// each class on each unit (a transcendental costs several basic instructions).
enum class OpClass { add, mul, fma, div, sqrt, exp, log, tanh, erf, pow, cmp, select, cast, abs };
std::string_view op_class_name(OpClass c);
bool parse_op_class(std::string_view name, OpClass& out);

struct VectorWork {
    OpClass op_class;
    DType dtype;           // the dtype the operation runs in (fp16 math may run in fp32)
    double elements = 0;   // element operations of this class
};

struct MatrixWork {
    DType dtype;
    double macs = 0;
};

struct WorkModel {
    double bytes_read = 0;     // compulsory reads from main/global memory
    double bytes_written = 0;  // compulsory writes
    std::vector<VectorWork> vector;
    std::vector<MatrixWork> matrix;
    // Independent work items a kernel can spread over cores (rows, list members, blocks);
    // small cases cannot keep every core busy.
    double parallel_items = 1;
    // Innermost contiguous length in elements (alignment and tiling depend on it).
    std::int64_t innermost = 1;

    void add_vector(OpClass c, DType t, double n) { vector.push_back({c, t, n}); }
};

}  // namespace hb
