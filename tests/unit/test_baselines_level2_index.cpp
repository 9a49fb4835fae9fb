// The threaded C++ baselines of arg_max, cummin, gather and scatter: each shared object is
// loaded the way the worker loads a kernel, run on generated inputs of every dtype it accepts
// and on each of its loop shapes, and compared with the operator's fp64 golden: index and
// selected outputs exactly, accumulated (scatter add/multiply) at the gate's max-error bound.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "core/kernel_call.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "suite/inputs.hpp"

namespace hb {
namespace {

class Baseline {
  public:
    explicit Baseline(const std::string& op) {
        const std::string path = std::string(HB_BASELINE_DIR) + "/" + op + ".so";
        if (!std::filesystem::exists(path)) {
            error_ = path + " is missing: build it with `make baseline_" + op + "`";
            return;
        }
        handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle_) {
            error_ = dlerror();
            return;
        }
        kernel_ = reinterpret_cast<hb_kernel_fn>(dlsym(handle_, "hapbench_kernel"));
        workspace_ = reinterpret_cast<hb_workspace_fn>(dlsym(handle_, "hapbench_workspace_bytes"));
        if (!kernel_) error_ = path + " exports no hapbench_kernel";
    }
    ~Baseline() {
        if (handle_) dlclose(handle_);
    }
    const std::string& error() const { return error_; }
    hb_kernel_fn kernel() const { return kernel_; }
    hb_workspace_fn workspace() const { return workspace_; }

  private:
    void* handle_ = nullptr;
    hb_kernel_fn kernel_ = nullptr;
    hb_workspace_fn workspace_ = nullptr;
    std::string error_;
};

const Proto& suite_proto(const std::string& op) {
    static std::map<std::string, Proto> protos;
    auto it = protos.find(op);
    if (it == protos.end())
        it = protos.emplace(op, load_proto(std::string(HB_SOURCE_DIR) + "/suite/level2/" + op + "/proto.yaml", op, 2))
                 .first;
    return it->second;
}

struct InputSpec {
    DType dtype;
    Shape shape;
    ValueRange range;
};

std::string describe(const std::string& op, const std::vector<InputSpec>& inputs, const AttrMap& attrs) {
    std::string s = op + " " + attrs_to_string(attrs);
    for (const auto& in : inputs)
        s += " " + std::string(dtype_name(in.dtype)) + shape_to_string(in.shape) + in.range.to_string();
    return s;
}

// The gate's per-element bound for floating outputs that accumulate (10 * tau).
double max_error_bound(DType t) {
    switch (t) {
        case DType::f16: return 10 * std::ldexp(1.0, -10);
        case DType::bf16: return 10 * std::ldexp(1.0, -7);
        default: return 10 * std::ldexp(1.0, -13);
    }
}

// Runs the baseline on generated (and fixed) inputs and compares every output with the
// golden rounded to its dtype: exactly, or within the gate's bound where `accumulates`.
void check_baseline(const std::string& op_name, const std::vector<InputSpec>& specs, const AttrMap& attrs,
                    bool accumulates = false) {
    SCOPED_TRACE(describe(op_name, specs, attrs));
    const Baseline baseline(op_name);
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const Operator* op = find_operator(op_name);
    ASSERT_NE(op, nullptr);
    CaseSpec spec;
    spec.op = op_name;
    spec.case_id = 7;
    spec.attrs = attrs;
    for (const auto& s : specs) {
        CaseInput in;
        in.shapes = {s.shape};
        in.dtype = s.dtype;
        in.range = s.range;
        spec.inputs.push_back(in);
    }
    const Problem problem = resolve_problem(suite_proto(op_name), *op, spec);
    std::vector<Arg> inputs = generate_inputs(problem, *op, 0);
    std::vector<Arg> outputs = allocate_args(problem.outputs, false);
    KernelCall call(op_name, inputs, outputs, problem.attrs, 2);
    const std::uint64_t workspace_bytes = baseline.workspace() ? baseline.workspace()(&call.shape_only_call()) : 0;
    Buffer workspace(workspace_bytes);
    call.set_workspace(workspace_bytes ? workspace.data() : nullptr, workspace_bytes);
    ASSERT_EQ(baseline.kernel()(&call.call()), 0) << call.error_message();

    ValueArgs<double> golden = values_for_specs<double>(problem.outputs);
    op->golden(problem, values_from_args(inputs), golden);
    for (std::size_t o = 0; o < golden.size(); ++o) {
        std::vector<double> expected = golden[o].one().v;
        const DType dtype = problem.outputs[o].tensors.at(0).dtype;
        round_values_to_dtype(expected, dtype);
        const std::vector<double> got = to_f64(outputs.at(o).tensors.at(0));
        ASSERT_EQ(got.size(), expected.size());
        const bool exact = !accumulates || !is_floating(dtype);
        std::size_t mismatches = 0, first = 0;
        for (std::size_t i = 0; i < got.size(); ++i) {
            bool same;
            if (std::isnan(expected[i]) || std::isnan(got[i])) same = std::isnan(expected[i]) && std::isnan(got[i]);
            else if (exact || std::isinf(expected[i]) || std::isinf(got[i])) same = got[i] == expected[i];
            else same = std::fabs(got[i] - expected[i]) / (std::fabs(expected[i]) + 1e-7) < max_error_bound(dtype);
            if (!same && mismatches++ == 0) first = i;
        }
        EXPECT_EQ(mismatches, 0u) << "output " << problem.outputs[o].name << ": first at element " << first << ": "
                                  << got[first] << " vs " << expected[first];
    }
}

AttrMap dim_attrs(std::int64_t dim) { return {{"dim", AttrValue::of_int(dim)}}; }

const std::vector<DType> arg_max_dtypes = {DType::f16, DType::bf16, DType::f32, DType::i32, DType::i64};

// Shapes and dims for each loop of the baseline: many contiguous lines, one long line split
// into chunks, and lines strided across an inner dimension wider than one block.
const std::vector<std::pair<Shape, std::int64_t>> reduce_layouts = {
    {{67, 129}, -1}, {{100003}, 0}, {{3, 17, 301}, 1}, {{2, 5, 3, 7}, -3}, {{1, 1}, 0}};

TEST(BaselinesLevel2Index, ArgMaxMatchesGoldenIncludingTies) {
    for (DType dtype : arg_max_dtypes)
        for (const auto& [shape, dim] : reduce_layouts)
            for (ValueRange range : {ValueRange{-3, 3}, ValueRange{-1000, 1000}})
                for (bool keepdim : {false, true}) {
                    AttrMap attrs = dim_attrs(dim);
                    attrs["keepdim"] = AttrValue::of_bool(keepdim);
                    check_baseline("arg_max", {{dtype, shape, range}}, attrs);
                }
}

TEST(BaselinesLevel2Index, ArgMaxFindsTheFirstNaNAndInfinity) {
    for (DType dtype : {DType::f16, DType::bf16, DType::f32})
        for (const auto& [shape, dim] : reduce_layouts)
            for (ValueRange range : {ValueRange{NAN, NAN}, ValueRange{-INFINITY, INFINITY}, ValueRange{0, 0}})
                check_baseline("arg_max", {{dtype, shape, range}}, dim_attrs(dim));
}

TEST(BaselinesLevel2Index, CumminMatchesGoldenIncludingTiesAndNaN) {
    // {100003}: one long line, scanned in chunks with carries.
    for (DType dtype : {DType::f16, DType::bf16, DType::f32, DType::i32})
        for (const auto& [shape, dim] : reduce_layouts)
            for (ValueRange range : {ValueRange{-3, 3}, ValueRange{-1000, 1000}, ValueRange{NAN, NAN},
                                     ValueRange{-INFINITY, INFINITY}, ValueRange{0, 0}})
                check_baseline("cummin", {{dtype, shape, range}}, dim_attrs(dim));
}

TEST(BaselinesLevel2Index, GatherMatchesGoldenForEveryDtypeAndLayout) {
    struct Layout {
        Shape x, index;
        std::int64_t dim;
    };
    const std::vector<Layout> layouts = {{{1009}, {3001}, 0},         {{37, 129}, {50, 129}, 0},
                                         {{37, 129}, {20, 300}, -1},  {{4, 9, 33}, {3, 20, 31}, 1},
                                         {{5, 6, 7}, {5, 2, 7}, -3}};
    for (DType dtype : {DType::f16, DType::bf16, DType::f32, DType::i8, DType::i32, DType::i64})
        for (DType index_dtype : {DType::i8, DType::i32, DType::i64})
            for (const auto& l : layouts) {
                // Indices are redrawn in range by the operator's fix_inputs.
                const ValueRange index_range{0, 1e9};
                check_baseline("gather", {{dtype, l.x, ValueRange{-100, 100}}, {index_dtype, l.index, index_range}},
                               dim_attrs(l.dim));
            }
}

TEST(BaselinesLevel2Index, ScatterMatchesGoldenForEveryReduce) {
    struct Layout {
        Shape data, indices;
        std::int64_t dim;
    };
    // Indices never longer than data along dim here, so that update is valid too.
    const std::vector<Layout> layouts = {{{1009}, {700}, 0}, {{37, 129}, {20, 129}, 0}, {{37, 129}, {30, 100}, -1},
                                         {{4, 9, 33}, {3, 5, 31}, 1}, {{5, 6, 7}, {5, 2, 7}, -3}};
    const std::vector<AttrValue> reduces = {AttrValue{},
                                            AttrValue::of_string("update"),
                                            AttrValue::of_string("add"),
                                            AttrValue::of_string("multiply"),
                                            AttrValue::of_string("amin"),
                                            AttrValue::of_string("amax")};
    for (DType dtype : {DType::f16, DType::bf16, DType::f32, DType::i32, DType::i64})
        for (DType index_dtype : {DType::i32, DType::i64})
            for (const auto& l : layouts)
                for (const AttrValue& reduce : reduces) {
                    AttrMap attrs = dim_attrs(l.dim);
                    attrs["reduce"] = reduce;
                    const bool accumulates = reduce.type == AttrType::s && (reduce.s == "add" || reduce.s == "multiply");
                    check_baseline("scatter",
                                   {{dtype, l.data, ValueRange{-2, 2}}, {index_dtype, l.indices, ValueRange{0, 1e9}},
                                    {dtype, l.indices, ValueRange{-2, 2}}},
                                   attrs, accumulates);
                }
}

TEST(BaselinesLevel2Index, ScatterPropagatesNaNInMinMax) {
    for (const char* reduce : {"amin", "amax"})
        for (DType dtype : {DType::f16, DType::bf16, DType::f32}) {
            AttrMap attrs = dim_attrs(1);
            attrs["reduce"] = AttrValue::of_string(reduce);
            check_baseline("scatter",
                           {{dtype, {40, 33}, ValueRange{NAN, NAN}}, {DType::i64, {40, 50}, ValueRange{0, 1e9}},
                            {dtype, {40, 50}, ValueRange{NAN, NAN}}},
                           attrs);
        }
}

}  // namespace
}  // namespace hb
