// The baselines of softmax, rms_norm and group_norm: each shared object is loaded the way
// the worker loads a kernel, run on small tensors of every dtype and on every path it has
// (oneDNN and loop, shared and per-thread groups), and compared with the operator's fp64
// golden at the precision gate's max-error bound (with the operator's tau override).
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cmath>
#include <filesystem>

#include "core/kernel_call.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "suite/inputs.hpp"
#include "suite/proto.hpp"

namespace hb {
namespace {

const std::vector<DType> float_dtypes = {DType::f16, DType::bf16, DType::f32};

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

Proto proto_for(const std::string& op) {
    return load_proto(std::string(HB_SOURCE_DIR) + "/suite/level2/" + op + "/proto.yaml", op, 2);
}

// The gate's per-element bound: 10 * tau, tau from the proto's override where it has one.
double max_error_bound(const Proto& proto, DType t) {
    if (auto it = proto.tau_overrides.find(t); it != proto.tau_overrides.end()) return 10 * it->second;
    switch (t) {
        case DType::f16: return 10 * std::ldexp(1.0, -10);
        case DType::bf16: return 10 * std::ldexp(1.0, -7);
        default: return 10 * std::ldexp(1.0, -13);
    }
}

// Runs the baseline on generated inputs (one shape per input, all in `dtype`) and compares
// with the golden rounded to the output dtype; NaN positions must match.
void check_baseline(const Baseline& baseline, const std::string& op_name, DType dtype, const std::vector<Shape>& shapes,
                    ValueRange range, AttrMap attrs) {
    SCOPED_TRACE(op_name + " " + std::string(dtype_name(dtype)) + " " + shape_to_string(shapes.at(0)) + " " +
                 range.to_string() + " " + attrs_to_string(attrs));
    const Operator* op = find_operator(op_name);
    ASSERT_NE(op, nullptr);
    const Proto proto = proto_for(op_name);
    CaseSpec spec;
    spec.op = op_name;
    spec.case_id = 7;
    spec.attrs = std::move(attrs);
    for (const Shape& s : shapes) {
        CaseInput in;
        in.shapes = {s};
        in.dtype = dtype;
        in.range = range;
        spec.inputs.push_back(in);
    }
    const Problem problem = resolve_problem(proto, *op, spec);
    std::vector<Arg> inputs = generate_inputs(problem, *op, 0);
    std::vector<Arg> outputs = allocate_args(problem.outputs, false);
    KernelCall call(op_name, inputs, outputs, problem.attrs, 2);
    const std::uint64_t workspace_bytes = baseline.workspace() ? baseline.workspace()(&call.shape_only_call()) : 0;
    Buffer workspace(workspace_bytes);
    call.set_workspace(workspace_bytes ? workspace.data() : nullptr, workspace_bytes);
    ASSERT_EQ(baseline.kernel()(&call.call()), 0) << call.error_message();

    ValueArgs<double> golden = values_for_specs<double>(problem.outputs);
    op->golden(problem, values_from_args(inputs), golden);
    std::vector<double> expected = golden.at(0).one().v;
    round_values_to_dtype(expected, dtype);
    const std::vector<double> got = to_f64(outputs.at(0).tensors.at(0));
    ASSERT_EQ(got.size(), expected.size());
    double worst = 0;
    std::size_t worst_at = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(expected[i]) || std::isnan(got[i])) {
            EXPECT_EQ(std::isnan(got[i]), std::isnan(expected[i])) << "element " << i << ": " << got[i] << " vs " << expected[i];
            continue;
        }
        if (std::isinf(expected[i]) && std::isinf(got[i])) {
            EXPECT_EQ(got[i], expected[i]) << "element " << i;
            continue;
        }
        const double e = std::fabs(got[i] - expected[i]) / (std::fabs(expected[i]) + 1e-7);
        if (e > worst) worst = e, worst_at = i;
    }
    EXPECT_LT(worst, max_error_bound(proto, dtype)) << "element " << worst_at << ": " << got[worst_at] << " vs "
                                                    << expected[worst_at];
}


TEST(BaselinesLevel2Norm, SoftmaxMatchesGoldenOnTheOneDnnAndLoopPaths) {
    const Baseline baseline("softmax");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const auto dim = [](std::int64_t d) { return AttrMap{{"dim", AttrValue::of_int(d)}}; };
    for (DType dtype : float_dtypes) {
        check_baseline(baseline, "softmax", dtype, {{7, 129}}, {-5, 5}, dim(-1));     // oneDNN, last dim
        check_baseline(baseline, "softmax", dtype, {{3, 1001}}, {-50, 50}, dim(1));   // oneDNN, long rows
        check_baseline(baseline, "softmax", dtype, {{37, 130}}, {-5, 5}, dim(0));     // loop, inner 130
        check_baseline(baseline, "softmax", dtype, {{2, 9, 3, 5}}, {-3, 3}, dim(-3)); // loop, inner 15
        check_baseline(baseline, "softmax", dtype, {{4, 67}}, {-INFINITY, INFINITY}, dim(0));
    }
}

TEST(BaselinesLevel2Norm, RmsNormMatchesGoldenForOneAndSeveralNormalizedDims) {
    const Baseline baseline("rms_norm");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    for (DType dtype : float_dtypes) {
        check_baseline(baseline, "rms_norm", dtype, {{9, 257}, {257}}, {-3, 3}, {});
        check_baseline(baseline, "rms_norm", dtype, {{3, 5, 77}, {5, 77}}, {-100, 100},
                       {{"epsilon", AttrValue::of_float(1e-3)}});
        check_baseline(baseline, "rms_norm", dtype, {{4, 33}, {33}}, {0, 0}, {});
    }
}

TEST(BaselinesLevel2Norm, GroupNormMatchesGoldenOnPerThreadAndSharedGroups) {
    const Baseline baseline("group_norm");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const auto attrs = [](std::int64_t g, double eps) {
        return AttrMap{{"num_groups", AttrValue::of_int(g)}, {"epsilon", AttrValue::of_float(eps)}};
    };
    for (DType dtype : float_dtypes) {
        check_baseline(baseline, "group_norm", dtype, {{3, 12, 5, 7}, {12}, {12}}, {-2, 2}, attrs(4, 1e-5));
        check_baseline(baseline, "group_norm", dtype, {{5, 6}, {6}, {6}}, {-1, 3}, attrs(3, 1e-3));
        // One sample, one group of 3 x 30000 elements: the threads share the group.
        check_baseline(baseline, "group_norm", dtype, {{1, 3, 30000}, {3}, {3}}, {-10, 10}, attrs(1, 1e-6));
        check_baseline(baseline, "group_norm", dtype, {{2, 8, 33}, {8}, {8}}, {NAN, NAN}, attrs(8, 1e-5));
    }
}

}  // namespace
}  // namespace hb
