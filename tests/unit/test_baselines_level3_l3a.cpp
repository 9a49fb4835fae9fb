// The baselines of grouped_matmul, quant_matmul and weight_quant_batch_matmul: each shared
// object is loaded the way the worker loads a kernel, run on small cases of every dtype and
// every path it has (native oneDNN types and the fp32 fallbacks, transposed weights, empty
// groups, both output structures, batch broadcasting, every epilogue input, special values),
// and compared with the operator's fp64 golden at the precision gate's max-error bound. The
// ctest entries baselines_onednn_max_isa_* rerun them with oneDNN capped at AVX2, AVX512_CORE
// and AVX512_CORE_BF16, where other kernels (and the fallbacks) run.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "baseline_check.hpp"

namespace hb::test {
namespace {

// An input of a case, or an absent optional one.
using Input = std::optional<BaselineInput>;

PreparedCase prepare(const std::string& op_name, const std::vector<Input>& inputs, const AttrMap& attrs) {
    PreparedCase prepared;
    prepared.op = find_operator(op_name);
    if (!prepared.op) throw Error("no operator " + op_name + " is registered");
    const Proto& proto = suite_proto(op_name, prepared.op->level());
    CaseSpec spec;
    spec.op = op_name;
    spec.case_id = 7;
    spec.attrs = attrs;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        CaseInput in;
        in.is_list = proto.inputs.at(k).is_list;
        in.present = inputs[k].has_value();
        if (in.present) {
            in.shapes = inputs[k]->shapes;
            in.dtype = inputs[k]->dtype;
            in.range = inputs[k]->range;
        }
        spec.inputs.push_back(in);
    }
    prepared.problem = resolve_problem(proto, *prepared.op, spec);
    prepared.inputs = generate_inputs(prepared.problem, *prepared.op, 0);
    prepared.outputs = allocate_args(prepared.problem.outputs, false);
    return prepared;
}

// Contractions cancel: an element far below the typical magnitude of its output carries the
// accumulation error of the whole sum. The floor is a fraction of that magnitude: a
// thousandth, or more where the baseline rounds an operand first (a bf16 dequantized
// weight carries 2^-9 of relative error into every product, as the operator's own
// same-precision reference does).
CheckOptions contraction_options(double typical_magnitude, double floor_fraction) {
    CheckOptions options;
    options.denominator_floor = floor_fraction * typical_magnitude;
    return options;
}

void check(const BaselineLibrary& baseline, const std::vector<Input>& inputs, const AttrMap& attrs, double magnitude,
           const std::string& what, double floor_fraction = 1e-3) {
    SCOPED_TRACE(baseline.op() + " " + what + " " + attrs_to_string(attrs));
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    PreparedCase prepared = prepare(baseline.op(), inputs, attrs);
    std::string message;
    ASSERT_EQ(call_baseline(baseline, prepared, message), 0) << message;
    compare_with_golden(prepared, contraction_options(magnitude, floor_fraction));
}

AttrValue int_list(std::vector<std::int64_t> v) {
    AttrValue a;
    a.type = AttrType::int_list;
    a.ints = std::move(v);
    return a;
}

const std::vector<DType> float_dtypes = {DType::f32, DType::bf16, DType::f16};

TEST(BaselinesLevel3L3a, GroupedMatmulEveryDtypeLayoutAndOutputStructure) {
    const BaselineLibrary baseline("grouped_matmul");
    for (DType dtype : float_dtypes)
        for (bool transpose : {false, true})
            for (std::int64_t split : {0, 2}) {
                const std::int64_t m = 37, k = 70, n = 33, e = 4;
                const AttrMap attrs = {{"group_list", int_list({5, 5, 30, 37})},  // an empty group
                                       {"split_item", AttrValue::of_int(split)},
                                       {"transpose_weight", AttrValue::of_bool(transpose)}};
                const Shape w = transpose ? Shape{e, n, k} : Shape{e, k, n};
                const DType bias_dtype = dtype == DType::bf16 && split == 2 ? DType::f32 : dtype;
                check(baseline, {BaselineInput(dtype, {m, k}, {-1, 1}), BaselineInput(dtype, w, {-1, 1}),
                                 BaselineInput(bias_dtype, {e, n}, {-1, 1})},
                      attrs, 5, std::string(dtype_name(dtype)));
                check(baseline, {BaselineInput(dtype, {m, k}, {-2, 2}), BaselineInput(dtype, w, {-2, 2}), std::nullopt}, attrs,
                      20, std::string(dtype_name(dtype)) + " no bias");
            }
}

TEST(BaselinesLevel3L3a, GroupedMatmulSpecialValuesAndOneRowGroups) {
    const BaselineLibrary baseline("grouped_matmul");
    for (DType dtype : float_dtypes) {
        const AttrMap attrs = {{"group_list", int_list({1, 2, 40})}, {"split_item", AttrValue::of_int(1)},
                               {"transpose_weight", AttrValue::of_bool(false)}};
        for (ValueRange range : {ValueRange{-INFINITY, INFINITY}, ValueRange{NAN, NAN}, ValueRange{0, 0}})
            check(baseline, {BaselineInput(dtype, {40, 19}, range), BaselineInput(dtype, {3, 19, 21}, range), std::nullopt},
                  attrs, 5, std::string(dtype_name(dtype)) + " " + range.to_string());
    }
}

AttrMap output(const char* dtype) { return {{"output_dtype", AttrValue::of_string(dtype)}}; }

TEST(BaselinesLevel3L3a, QuantMatmulEveryEpilogueInput) {
    const BaselineLibrary baseline("quant_matmul");
    const ValueRange full{-128, 127};
    // typical |out|: sqrt(k) x 74^2 x scale, k = 300, scale 0.01: about 1000.
    for (const char* out : {"float16", "bfloat16"}) {
        check(baseline, {BaselineInput(DType::i8, {9, 300}, full), BaselineInput(DType::i8, {300, 70}, full),
                         BaselineInput(DType::f32, {70}, {0.001, 0.01}), std::nullopt, std::nullopt, std::nullopt},
              output(out), 1000, "per channel");
        check(baseline, {BaselineInput(DType::i8, {9, 300}, full), BaselineInput(DType::i8, {300, 70}, full),
                         BaselineInput(DType::bf16, {1}, {0.001, 0.01}), BaselineInput(DType::f32, {1}, {-1, 1}),
                         BaselineInput(DType::f32, {9}, {0.001, 0.01}), BaselineInput(DType::i32, {70}, {-100, 100})},
              output(out), 10, "per tensor, offset, per token, int32 bias");
        for (DType bias : {DType::f16, DType::bf16, DType::f32})
            check(baseline, {BaselineInput(DType::i8, {17, 300}, full), BaselineInput(DType::i8, {300, 70}, full),
                             BaselineInput(DType::f32, {70}, {0.001, 0.01}), BaselineInput(DType::f32, {70}, {-1, 1}),
                             std::nullopt, BaselineInput(bias, {1, 70}, {-1, 1})},
                  output(out), 1000, std::string("offset, bias ") + std::string(dtype_name(bias)));
    }
}

TEST(BaselinesLevel3L3a, QuantMatmulBatchBroadcastingAndSpecialScales) {
    const BaselineLibrary baseline("quant_matmul");
    const ValueRange full{-128, 127};
    const BaselineInput scale(DType::f32, {33}, {0.001, 0.01});
    check(baseline, {BaselineInput(DType::i8, {2, 1, 5, 64}, full), BaselineInput(DType::i8, {3, 64, 33}, full), scale,
                     std::nullopt, std::nullopt, std::nullopt},
          output("float16"), 500, "[2,1] x [3] batches");
    check(baseline, {BaselineInput(DType::i8, {4, 5, 64}, full), BaselineInput(DType::i8, {64, 33}, full), scale, std::nullopt,
                     std::nullopt, BaselineInput(DType::f32, {4, 1, 33}, {-1, 1})},
          output("bfloat16"), 500, "shared weight, [batch, 1, n] bias");
    check(baseline, {BaselineInput(DType::i8, {5, 64}, full), BaselineInput(DType::i8, {4, 64, 33}, full), scale, std::nullopt,
                     std::nullopt, BaselineInput(DType::i32, {33}, {-100, 100})},
          output("float16"), 500, "shared x1");
    for (ValueRange special : {ValueRange{-INFINITY, INFINITY}, ValueRange{NAN, NAN}})
        check(baseline, {BaselineInput(DType::i8, {5, 64}, full), BaselineInput(DType::i8, {64, 33}, full),
                         BaselineInput(DType::f32, {33}, special), std::nullopt, std::nullopt, std::nullopt},
              output("float16"), 500, "scale " + special.to_string());
    check(baseline, {BaselineInput(DType::i8, {5, 64}, {0, 0}), BaselineInput(DType::i8, {64, 33}, full), scale, std::nullopt,
                     std::nullopt, BaselineInput(DType::bf16, {33}, {-1, 1})},
          output("bfloat16"), 1, "zero x1");
}

TEST(BaselinesLevel3L3a, WeightQuantBatchMatmulBothDtypesAndOptionalInputs) {
    const BaselineLibrary baseline("weight_quant_batch_matmul");
    // typical |y|: sqrt(k) x 0.58 x 74 x 0.05, k = 500: about 50.
    for (DType dtype : {DType::f16, DType::bf16}) {
        const DType bias = dtype == DType::f16 ? DType::f16 : DType::f32;
        // W' rounded to bf16 carries up to 2^-9 of each product's magnitude (|W'| up to 12.7):
        // about 0.16 of rms error over k = 500, single elements 4 sigma out (0.6 was seen).
        const double floor = dtype == DType::bf16 ? 0.25 : 1e-3;
        for (std::int64_t m : {1, 20})
            check(baseline, {BaselineInput(dtype, {m, 500}, {-1, 1}), BaselineInput(DType::i8, {500, 90}, {-128, 127}),
                             BaselineInput(dtype, {90}, {0.001, 0.1}), BaselineInput(dtype, {90}, {-0.1, 0.1}),
                             BaselineInput(bias, {90}, {-0.1, 0.1})},
                  {}, 50, std::string(dtype_name(dtype)) + " rows " + std::to_string(m), floor);
        check(baseline, {BaselineInput(dtype, {7, 500}, {-1, 1}), BaselineInput(DType::i8, {500, 90}, {-128, 127}),
                         BaselineInput(dtype, {1, 90}, {0.001, 0.1}), std::nullopt, std::nullopt},
              {}, 50, std::string(dtype_name(dtype)) + " scale only", floor);
        for (ValueRange special : {ValueRange{-INFINITY, INFINITY}, ValueRange{NAN, NAN}})
            check(baseline, {BaselineInput(dtype, {3, 200}, special), BaselineInput(DType::i8, {200, 40}, {-128, 127}),
                             BaselineInput(dtype, {40}, {0.001, 0.1}), std::nullopt, std::nullopt},
                  {}, 50, std::string(dtype_name(dtype)) + " x " + special.to_string(), floor);
    }
}

}  // namespace
}  // namespace hb::test
