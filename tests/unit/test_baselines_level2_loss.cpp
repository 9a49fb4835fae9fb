// The baseline of cross_entropy_loss: its shared object is loaded the way the worker loads a
// kernel, run on small tensors of every dtype, on both of its layouts ([N, C] rows and
// [N, C, d...] position blocks, with a partial block), every reduction and kinds of
// ignore_index, and compared with the operator's fp64 golden at the precision gate's
// max-error bound; NaN positions must match.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <algorithm>
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

// Runs the baseline on generated logits in `range` and class targets (the operator's hook
// sets about one in eight to ignore_index) and compares with the golden rounded to dtype.
void check_baseline(const Baseline& baseline, DType dtype, const Shape& input, ValueRange range,
                    const std::string& reduction, std::int64_t ignore) {
    const std::string op_name = "cross_entropy_loss";
    SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + shape_to_string(input) + " " + range.to_string() + " " +
                 reduction + " ignore " + std::to_string(ignore));
    const Operator* op = find_operator(op_name);
    ASSERT_NE(op, nullptr);
    const Proto proto = proto_for(op_name);
    CaseSpec spec;
    spec.op = op_name;
    spec.case_id = 7;
    spec.attrs = {{"reduction", AttrValue::of_string(reduction)}, {"ignore_index", AttrValue::of_int(ignore)}};
    Shape target = input;
    target.erase(target.begin() + 1);
    CaseInput x, t;
    x.shapes = {input};
    x.dtype = dtype;
    x.range = range;
    t.shapes = {target};
    t.dtype = DType::i64;
    t.range = ValueRange{0, static_cast<double>(input[1] - 1)};
    spec.inputs = {x, t};
    const Problem problem = resolve_problem(proto, *op, spec);
    std::vector<Arg> inputs = generate_inputs(problem, *op, 0);
    std::vector<Arg> outputs = allocate_args(problem.outputs, false);
    KernelCall call(op_name, inputs, outputs, problem.attrs, 2);
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
        // Losses near 0 lose relative precision in any fp32 log(sum): compare those absolutely.
        const double e = std::fabs(got[i] - expected[i]) / std::max(std::fabs(expected[i]), 1e-3);
        if (e > worst) worst = e, worst_at = i;
    }
    EXPECT_LT(worst, max_error_bound(proto, dtype)) << "element " << worst_at << ": " << got[worst_at] << " vs "
                                                    << expected[worst_at];
}

TEST(BaselinesLevel2Loss, CrossEntropyMatchesGoldenOnRowsAndPositionBlocks) {
    const Baseline baseline("cross_entropy_loss");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    for (DType dtype : float_dtypes) {
        for (const std::string reduction : {"none", "mean", "sum"}) {
            check_baseline(baseline, dtype, {37, 129}, {-5, 5}, reduction, -100);          // rows
            check_baseline(baseline, dtype, {300, 2}, {-50, 50}, reduction, 0);             // binary, class 0 ignored
            check_baseline(baseline, dtype, {3, 11, 70}, {-2, 3}, reduction, 4);            // 64 + a partial block
            check_baseline(baseline, dtype, {2, 5, 3, 7, 5}, {-88, 88}, reduction, 5);      // 5-D, ignore past C
            check_baseline(baseline, dtype, {9, 31}, {-INFINITY, INFINITY}, reduction, -1);
            check_baseline(baseline, dtype, {4, 7, 9}, {NAN, NAN}, reduction, -100);
        }
    }
}

TEST(BaselinesLevel2Loss, CrossEntropyRejectsATargetOutsideTheClasses) {
    const Baseline baseline("cross_entropy_loss");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const Operator* op = find_operator("cross_entropy_loss");
    ASSERT_NE(op, nullptr);
    CaseSpec spec;
    spec.op = "cross_entropy_loss";
    spec.case_id = 1;
    CaseInput x, t;
    x.shapes = {{4, 3}};
    t.shapes = {{4}};
    t.dtype = DType::i64;
    spec.inputs = {x, t};
    const Problem problem = resolve_problem(proto_for("cross_entropy_loss"), *op, spec);
    std::vector<Arg> inputs = generate_inputs(problem, *op, 0);
    static_cast<std::int64_t*>(inputs.at(1).tensors.at(0).data())[2] = 3;  // C is 3
    std::vector<Arg> outputs = allocate_args(problem.outputs, false);
    KernelCall call("cross_entropy_loss", inputs, outputs, problem.attrs, 2);
    EXPECT_NE(baseline.kernel()(&call.call()), 0);
}

}  // namespace
}  // namespace hb
