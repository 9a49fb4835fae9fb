// The baselines of maximum, apply_adam_w, gcd and dynamic_quant: each shared object is
// loaded the way the worker loads a kernel, run on small tensors of every dtype and
// broadcast it accepts (oneDNN and C++ paths alike), and compared with the operator's fp64
// golden: integer outputs exactly (or within the operator's +-k), floating outputs at the
// precision gate's max-error bound.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cmath>
#include <filesystem>

#include "core/kernel_call.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "suite/inputs.hpp"
#include "suite/proto.hpp"
#include "verify/thresholds.hpp"

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

Proto proto_for(const std::string& op) {
    return load_proto(std::string(HB_SOURCE_DIR) + "/suite/level2/" + op + "/proto.yaml", op, 2);
}

struct InputCase {
    DType dtype;
    Shape shape;
    ValueRange range;
};

std::string describe(const std::string& op, const std::vector<InputCase>& inputs, const AttrMap& attrs) {
    std::string s = op;
    for (const auto& in : inputs)
        s += " " + std::string(dtype_name(in.dtype)) + shape_to_string(in.shape) + in.range.to_string();
    return s + " " + attrs_to_string(attrs);
}

// Runs the baseline on generated inputs (after the operator's fix_inputs) and compares every
// output with the golden rounded to its dtype. skip(i, inputs) exempts an element of output 0.
template <typename Skip>
void check_baseline(const Baseline& baseline, const std::string& op_name, const std::vector<InputCase>& cases,
                    const AttrMap& attrs, Skip skip) {
    SCOPED_TRACE(describe(op_name, cases, attrs));
    const Operator* op = find_operator(op_name);
    ASSERT_NE(op, nullptr);
    const Proto proto = proto_for(op_name);
    CaseSpec spec;
    spec.op = op_name;
    spec.case_id = 7;
    spec.attrs = attrs;
    for (const auto& c : cases) {
        CaseInput in;
        in.shapes = {c.shape};
        in.dtype = c.dtype;
        in.range = c.range;
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
    for (std::size_t k = 0; k < outputs.size(); ++k) {
        const DType out_dtype = problem.outputs.at(k).tensors.at(0).dtype;
        const Thresholds th = thresholds_for(out_dtype, proto.tau_overrides);
        std::vector<double> expected = golden.at(k).one().v;
        round_values_to_dtype(expected, out_dtype);
        const std::vector<double> got = to_f64(outputs.at(k).tensors.at(0));
        ASSERT_EQ(got.size(), expected.size());
        double worst = 0;
        std::size_t worst_at = 0;
        for (std::size_t i = 0; i < got.size(); ++i) {
            if (k == 0 && skip(i, inputs)) continue;
            if (std::isnan(expected[i]) || std::isnan(got[i])) {
                EXPECT_EQ(std::isnan(got[i]), std::isnan(expected[i]))
                    << "output " << k << " element " << i << ": " << got[i] << " vs " << expected[i];
                continue;
            }
            if (std::isinf(expected[i]) && std::isinf(got[i])) {
                EXPECT_EQ(got[i], expected[i]) << "output " << k << " element " << i;
                continue;
            }
            const double e = th.integer() ? std::fabs(got[i] - expected[i])
                                          : std::fabs(got[i] - expected[i]) / (std::fabs(expected[i]) + 1e-7);
            if (e > worst) worst = e, worst_at = i;
        }
        const double bound = th.integer() ? th.abs_tolerance() : th.max_rel;
        EXPECT_LE(worst, bound) << "output " << k << " element " << worst_at << ": " << got[worst_at] << " vs "
                                << expected[worst_at];
    }
}

void check_baseline(const Baseline& baseline, const std::string& op_name, const std::vector<InputCase>& cases,
                    const AttrMap& attrs = {}) {
    check_baseline(baseline, op_name, cases, attrs, [](std::size_t, const std::vector<Arg>&) { return false; });
}

// ---- maximum -----------------------------------------------------------------------------

// Pairs of shapes that take oneDNN's jit (equal, row and column broadcast, the other
// direction by swapping), oneDNN's ref:any (the C++ loop instead) and both directions.
const std::vector<std::pair<Shape, Shape>> maximum_shapes = {
    {{7}, {7}},           {{3, 129}, {1, 129}},     {{3, 129}, {3, 1}},          {{129}, {5, 3, 129}},
    {{2, 3, 5, 33, 9}, {1, 1, 1, 33, 1}}, {{5, 1, 67}, {3, 67}}, {{2, 5, 1001}, {2, 5, 1001}}, {{1}, {4, 9}}};

TEST(BaselinesLevel2Elementwise, MaximumMatchesGoldenForEveryDtypeAndBroadcast) {
    const Baseline baseline("maximum");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    for (DType dtype : {DType::f32, DType::f16, DType::bf16, DType::i8, DType::i32, DType::i64})
        for (const auto& [a, b] : maximum_shapes)
            for (ValueRange range : {ValueRange{-100, 100}, ValueRange{-INFINITY, INFINITY}})
                check_baseline(baseline, "maximum", {{dtype, a, range}, {dtype, b, range}});
}

// NaN inputs: the C++ loop propagates them as torch.maximum; oneDNN's jit max (float32
// here, which has it) returns src1 when either operand is NaN, so only positions where the
// second operand is NaN, or both agree, are checked there.
TEST(BaselinesLevel2Elementwise, MaximumNanRuleOnEachPath) {
    const Baseline baseline("maximum");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const ValueRange nans{NAN, NAN};
    for (DType dtype : {DType::f16, DType::bf16})
        for (const auto& [a, b] : maximum_shapes) check_baseline(baseline, "maximum", {{dtype, a, nans}, {dtype, b, nans}});
    // float32 with equal shapes runs oneDNN's jit: skip elements where only x1 is NaN.
    const Shape s{3, 129};
    check_baseline(baseline, "maximum", {{DType::f32, s, nans}, {DType::f32, s, nans}}, {},
                   [](std::size_t i, const std::vector<Arg>& in) {
                       return std::isnan(in[0].tensors[0].get(i)) && !std::isnan(in[1].tensors[0].get(i));
                   });
}

// ---- apply_adam_w ------------------------------------------------------------------------

TEST(BaselinesLevel2Elementwise, ApplyAdamWMatchesGoldenOnEveryPath) {
    const Baseline baseline("apply_adam_w");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const auto f = AttrValue::of_float;
    const std::vector<AttrMap> attr_sets = {
        {{"lr", f(1e-3)}, {"beta1", f(0.9)}, {"beta2", f(0.999)}, {"weight_decay", f(0.0)}},
        {{"lr", f(0.1)}, {"beta1", f(0.5)}, {"beta2", f(0.9)}, {"weight_decay", f(0.5)}, {"step", AttrValue::of_int(7)}},
        {{"lr", f(1e-2)}, {"beta1", f(0.0)}, {"beta2", f(0.99)}, {"weight_decay", f(0.01)}, {"epsilon", f(1e-6)},
         {"maximize", AttrValue::of_bool(true)}},
    };
    for (const AttrMap& attrs : attr_sets)
        for (DType dtype : {DType::f32, DType::f16, DType::bf16})
            for (const Shape& shape : {Shape{7}, Shape{3, 129}, Shape{2, 5, 1001}})
                for (ValueRange range : {ValueRange{-1, 1}, ValueRange{-INFINITY, INFINITY}, ValueRange{NAN, NAN}})
                    check_baseline(baseline, "apply_adam_w",
                                   {{dtype, shape, range}, {dtype, shape, range},
                                    {dtype, shape, std::isfinite(range.lo) ? ValueRange{-0.1, 0.1} : range},
                                    {dtype, shape, std::isfinite(range.lo) ? ValueRange{0, 0.1} : range}},
                                   attrs);
}

// ---- gcd ---------------------------------------------------------------------------------

TEST(BaselinesLevel2Elementwise, GcdMatchesGoldenForEveryDtypeAndBroadcast) {
    const Baseline baseline("gcd");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    for (DType dtype : {DType::i16, DType::i32, DType::i64})
        for (const auto& [a, b] : maximum_shapes)
            for (ValueRange range : {ValueRange{-1000, 1000}, ValueRange{-INFINITY, INFINITY}, ValueRange{0, 0}})
                check_baseline(baseline, "gcd", {{dtype, a, range}, {dtype, b, range}});
}

// ---- dynamic_quant -----------------------------------------------------------------------

TEST(BaselinesLevel2Elementwise, DynamicQuantMatchesGoldenWithinOne) {
    const Baseline baseline("dynamic_quant");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    for (DType dtype : {DType::f16, DType::bf16})
        for (const Shape& shape : {Shape{3, 7}, Shape{5, 129}, Shape{2, 5, 1001}})
            for (ValueRange range : {ValueRange{-1, 1}, ValueRange{-1000, 1000}, ValueRange{0, 0},
                                     ValueRange{-INFINITY, INFINITY}, ValueRange{NAN, NAN}})
                check_baseline(baseline, "dynamic_quant", {{dtype, shape, range}});
}

}  // namespace
}  // namespace hb
