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
inline constexpr OpClass all_op_classes[] = {OpClass::add, OpClass::mul,  OpClass::fma,    OpClass::div,
                                             OpClass::sqrt, OpClass::exp, OpClass::log,    OpClass::tanh,
                                             OpClass::erf, OpClass::pow,  OpClass::select, OpClass::cmp,
                                             OpClass::cast, OpClass::abs};
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

// Elements entering or leaving vector compute in one dtype (each input element loaded
// once, each output element stored once). A hardware model whose vector unit has no
// arithmetic in that dtype (Ascend 910B: bf16) charges a conversion per element here.
struct DataStream {
    DType dtype;
    double elements = 0;
};

// A batched matrix contraction C[batch, m, n] = sum_k A[batch, m, k] * B[batch, k, n]. It
// carries the structure a tiling depends on: the solver derives the MACs (padded to the
// matrix unit's fractal), the on-chip traffic of a tile shape (MTE1 L1->L0A/L0B re-reads,
// FixPipe L0C->GM) and, where `vector_ok`, the alternative of running it on the vector
// unit. Its MACs are NOT also listed in `matrix`; its operands and result ARE in
// bytes_read / bytes_written (compulsory global-memory traffic as for any other work).
struct Contraction {
    DType dtype;                    // operand dtype (accumulation is wider)
    DType out_dtype = DType::f32;   // dtype of C as written to global memory
    double batch = 1;
    std::int64_t m = 1, n = 1, k = 1;
    bool vector_ok = false;         // a vector-unit implementation is valid (small m or n)
};

// A chain of dependent steps (a recurrence: step t needs step t - 1's result). The steps run
// one after another, and within one step at most `items_per_step` independent items can be
// spread over the cores (gru and lstm: batch x hidden, one hidden unit of one sequence each).
// The solver prices one step's work with that parallelism under the same implementation
// choice as the rest of the case and charges `steps` of them: T_HW is at least that long, even
// where the case's total work alone would spread over more cores (docs/hap.md, "Dependent
// chains"). The step's work is also part of the case's own totals (bytes, vector,
// contractions): the chain adds a bound, never work.
struct DependentChain {
    double steps = 0;                       // 0: the case has no chain
    double items_per_step = 1;
    std::vector<VectorWork> vector;         // one step's vector work
    std::vector<Contraction> contractions;  // one step's contractions
    double cube_vector_bytes = 0;           // one step's matrix-to-vector crossing
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

    // --- Added for accelerator models (issue 3); every field defaults to "absent" so that
    // --- work models written before them mean what they meant. See docs/hap.md.
    // Data entering/leaving vector compute, per dtype (see DataStream).
    std::vector<DataStream> vector_io;
    // Contractions with their shapes (see Contraction).
    std::vector<Contraction> contractions;
    // Bytes that pass from the matrix stage to the vector stage (or back), e.g. the scores of
    // an attention block. On hardware whose cube and vector cores exchange data only through
    // global memory (Ascend 910B) a fused kernel still writes and re-reads them; an unfused
    // pair of kernels does so everywhere.
    double cube_vector_bytes = 0;
    // Elements of the row a kernel must hold whole in one core's buffer (the reduced last
    // dimension of a softmax or a norm); 0 when the work can be processed as a flat array.
    // Hardware with an alignment granule (Ascend UB: 32 bytes) pads each such row.
    std::int64_t row_elements = 0;

    // --- The cann-bench convention (issue 15; docs/hap.md, "The two conventions"). ---
    // The operator's formula as written, counted per element it is evaluated at: op class,
    // the dtype it computes in, and occurrences over the whole case. Priced only under
    // `--convention cann-bench`, by the convention's one cost table
    // (hardware/conventions/cann-bench.yaml), never by the hardware model's costs; the
    // implementation-level `vector` work above is what the hapbench convention prices. Fill it
    // with add_formula (ops/formula_count.hpp). Matrix work needs no separate count: the
    // convention prices `contractions` and `matrix` as MACs.
    std::vector<VectorWork> formula;

    // --- Dependent steps (issue 18: recurrences), see DependentChain. ---
    DependentChain chain;

    void add_vector(OpClass c, DType t, double n) { vector.push_back({c, t, n}); }
    void add_vector_io(DType t, double n) { vector_io.push_back({t, n}); }
};

}  // namespace hb
