// What the baseline tests share: a baseline shared object loaded the way the worker loads a
// kernel, a case resolved against its operator's suite proto with inputs generated as the
// harness generates them, and the comparison of the baseline's outputs with the fp64 golden.
#pragma once

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/kernel_call.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "suite/inputs.hpp"
#include "spec/proto.hpp"
#include "verify/thresholds.hpp"

namespace hb::test {

// build/baselines/<op>.so, opened once for the tests of one operator.
class BaselineLibrary {
  public:
    explicit BaselineLibrary(const std::string& op) : op_(op) {
        const std::string path = std::string(HB_BASELINE_DIR) + "/" + op + ".so";
        if (!std::filesystem::exists(path)) {
            error_ = path + " is missing: build it with `make baseline_" + op + "`";
            return;
        }
        handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle_) {
            error_ = "cannot load " + path + ": " + dlerror();
            return;
        }
        kernel_ = reinterpret_cast<hb_kernel_fn>(dlsym(handle_, "hapbench_kernel"));
        workspace_ = reinterpret_cast<hb_workspace_fn>(dlsym(handle_, "hapbench_workspace_bytes"));
        if (!kernel_) error_ = path + " exports no hapbench_kernel: is baseline.cpp built with the kernel ABI?";
    }
    ~BaselineLibrary() {
        if (handle_) dlclose(handle_);
    }
    BaselineLibrary(const BaselineLibrary&) = delete;
    BaselineLibrary& operator=(const BaselineLibrary&) = delete;

    const std::string& op() const { return op_; }
    const std::string& error() const { return error_; }  // empty when the kernel is loaded
    hb_kernel_fn kernel() const { return kernel_; }
    hb_workspace_fn workspace() const { return workspace_; }  // null: the baseline needs none

  private:
    std::string op_;
    void* handle_ = nullptr;
    hb_kernel_fn kernel_ = nullptr;
    hb_workspace_fn workspace_ = nullptr;
    std::string error_;
};

// suite/level<level>/<op>/proto.yaml, read once per test binary; a Problem keeps a pointer
// to its proto, so the cache also keeps every resolved problem's proto alive.
inline const Proto& suite_proto(const std::string& op, int level) {
    static std::map<std::string, Proto> protos;
    auto it = protos.find(op);
    if (it == protos.end()) {
        const std::string path = std::string(HB_SOURCE_DIR) + "/suite/level" + std::to_string(level) + "/" + op +
                                 "/proto.yaml";
        it = protos.emplace(op, load_proto(path, op, level)).first;
    }
    return it->second;
}

// One input of a case: a tensor (one shape) or a list (one shape per member, foreach ops),
// or an optional input left absent (absent_input()).
struct BaselineInput {
    DType dtype;
    std::vector<Shape> shapes;
    ValueRange range;
    bool present = true;

    BaselineInput(DType dtype, Shape shape, ValueRange range)
        : dtype(dtype), shapes{std::move(shape)}, range(range) {}
};

// An optional input that the case leaves out.
inline BaselineInput absent_input() {
    BaselineInput input(DType::f32, {}, {0, 0});
    input.shapes.clear();
    input.present = false;
    return input;
}

// A list input; a function rather than a constructor, as {4} would read as either form.
inline BaselineInput list_input(DType dtype, std::vector<Shape> member_shapes, ValueRange range) {
    BaselineInput input(dtype, {}, range);
    input.shapes = std::move(member_shapes);
    return input;
}

inline std::string describe_case(const std::string& op, const std::vector<BaselineInput>& inputs,
                                 const AttrMap& attrs) {
    // Appended piece by piece: GCC 12 warns (-Wrestrict, a known false positive) on chains
    // of operator+ that start from a literal.
    std::string text = op;
    text.append(" ").append(attrs_to_string(attrs));
    for (const BaselineInput& input : inputs) {
        if (!input.present) {
            text.append(" absent");
            continue;
        }
        text.append(" ").append(dtype_name(input.dtype));
        for (const Shape& shape : input.shapes) text.append(shape_to_string(shape));
        text.append(input.range.to_string());
    }
    return text;
}

// A case resolved against its operator's suite proto, its inputs generated as the harness
// generates them (the operator's fix_inputs included) and its outputs allocated.
struct PreparedCase {
    const Operator* op = nullptr;
    Problem problem;
    std::vector<Arg> inputs;
    std::vector<Arg> outputs;
};

inline PreparedCase prepare_case(const std::string& op_name, const std::vector<BaselineInput>& inputs,
                                 const AttrMap& attrs) {
    PreparedCase prepared;
    prepared.op = find_operator(op_name);
    if (!prepared.op) throw Error("no operator " + op_name + " is registered (known: " + known_operator_names() + ")");
    const Proto& proto = suite_proto(op_name, prepared.op->level());
    if (inputs.size() != proto.inputs.size())
        throw Error(op_name + ": the test gives " + std::to_string(inputs.size()) + " inputs, the proto has " +
                    std::to_string(proto.inputs.size()));
    CaseSpec spec;
    spec.op = op_name;
    spec.case_id = 7;  // any fixed id: it seeds the inputs, which then repeat from run to run
    spec.attrs = attrs;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        CaseInput case_input;
        case_input.is_list = proto.inputs[k].is_list;
        // An optional input given no shapes is absent too (moe_re_routing's per_token_scales).
        case_input.present = inputs[k].present && !(proto.inputs[k].optional && inputs[k].shapes.empty());
        case_input.shapes = inputs[k].shapes;
        case_input.dtype = inputs[k].dtype;
        case_input.range = inputs[k].range;
        spec.inputs.push_back(case_input);
    }
    prepared.problem = resolve_problem(proto, *prepared.op, spec);
    prepared.inputs = generate_inputs(prepared.problem, *prepared.op, 0);
    prepared.outputs = allocate_args(prepared.problem.outputs, false);
    return prepared;
}

// Calls the baseline on the case with the workspace it asks for, on two threads; returns the
// kernel's status and leaves its message in `error_message`.
inline int call_baseline(const BaselineLibrary& baseline, PreparedCase& prepared, std::string& error_message) {
    KernelCall call(baseline.op(), prepared.inputs, prepared.outputs, prepared.problem.attrs, 2);
    const std::uint64_t workspace_bytes = baseline.workspace() ? baseline.workspace()(&call.shape_only_call()) : 0;
    Buffer workspace(workspace_bytes);
    call.set_workspace(workspace_bytes ? workspace.data() : nullptr, workspace_bytes);
    const int status = baseline.kernel()(&call.call());
    error_message = call.error_message();
    return status;
}

// One output element under comparison, as a skip predicate sees it.
struct ComparedElement {
    std::size_t output;
    std::size_t index;
    double got;
    double want;
    const std::vector<Arg>& inputs;
};

// How check_baseline compares. NaN positions must match and infinities must be equal in any
// case; integer outputs must be within the proto's absolute tolerance (0: exact).
struct CheckOptions {
    // Overwrites generated input values before the call (a NaN planted in one list member).
    std::function<void(std::vector<Arg>&)> patch_inputs;
    // Floating outputs that select or index rather than compute (gather, arg_max): exact.
    bool exact_floats = false;
    // Otherwise a floating element's error is
    //   max(|got - want| - absolute_slack, 0) / max(|want| + denominator_offset, denominator_floor)
    // and must stay below max_rel(dtype), by default the gate's 10 tau (proto overrides
    // included). A floor keeps results that cancel to near 0 from failing on noise.
    double absolute_slack = 0;
    double denominator_offset = 1e-7;
    double denominator_floor = 0;
    std::function<double(DType)> max_rel;
    // Exempts an element from comparison: a known, documented divergence of the baseline.
    std::function<bool(const ComparedElement&)> skip;
};

// For interpolations (resize, grid sampling): mixed-sign values cancel to near 0, where the
// relative error of fp32 arithmetic grows without bound (the gate's fallback accepts it).
inline CheckOptions interpolating() {
    CheckOptions options;
    options.denominator_floor = 1e-2;
    return options;
}

// The error of one element against the bound: 0 when it matches, infinity when NaN or
// infinity positions differ (or an exact comparison fails).
inline double element_error(double got, double want, DType dtype, const CheckOptions& options) {
    constexpr double mismatch = std::numeric_limits<double>::infinity();
    if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want) ? 0 : mismatch;
    if (std::isinf(got) || std::isinf(want) || (options.exact_floats && is_floating(dtype)))
        return got == want ? 0 : mismatch;
    if (!is_floating(dtype)) return std::fabs(got - want);
    const double excess = std::max(std::fabs(got - want) - options.absolute_slack, 0.0);
    if (excess == 0) return 0;
    return excess / std::max(std::fabs(want) + options.denominator_offset, options.denominator_floor);
}

// Compares every tensor of every output with the golden rounded to the output's dtype.
inline void compare_with_golden(const PreparedCase& prepared, const CheckOptions& options) {
    ValueArgs<double> golden = values_for_specs<double>(prepared.problem.outputs);
    prepared.op->golden(prepared.problem, values_from_args(prepared.inputs), golden);
    for (std::size_t o = 0; o < prepared.outputs.size(); ++o)
        for (std::size_t t = 0; t < prepared.outputs[o].tensors.size(); ++t) {
            const DType dtype = prepared.problem.outputs.at(o).tensors.at(t).dtype;
            const Thresholds thresholds = thresholds_for(dtype, prepared.problem.proto->tau_overrides);
            const double max_rel = options.max_rel ? options.max_rel(dtype) : thresholds.max_rel;
            std::vector<double> want = golden.at(o).tensors.at(t).v;
            round_values_to_dtype(want, dtype);
            const std::vector<double> got = to_f64(prepared.outputs[o].tensors[t]);
            ASSERT_EQ(got.size(), want.size()) << "output " << prepared.problem.outputs[o].name << " tensor " << t;
            std::size_t failures = 0, worst_at = 0;
            double worst = 0;
            for (std::size_t i = 0; i < got.size(); ++i) {
                if (options.skip && options.skip({o, i, got[i], want[i], prepared.inputs})) continue;
                const double error = element_error(got[i], want[i], dtype, options);
                const bool fails = is_floating(dtype) ? !(error < max_rel) : error > thresholds.abs_tolerance();
                if (!fails) continue;
                if (failures++ == 0 || error > worst) worst = error, worst_at = i;
            }
            EXPECT_EQ(failures, 0u) << "output " << prepared.problem.outputs[o].name << " tensor " << t << ": "
                                    << failures << " of " << got.size() << " elements off; worst at element "
                                    << worst_at << ": got " << got[worst_at] << ", want " << want[worst_at]
                                    << " (error " << worst << ", bound "
                                    << (is_floating(dtype) ? max_rel : thresholds.abs_tolerance()) << ")";
        }
}

// Runs the baseline on one case of its operator and compares every output with the golden.
inline void check_baseline(const BaselineLibrary& baseline, const std::vector<BaselineInput>& inputs,
                           const AttrMap& attrs = {}, const CheckOptions& options = {}) {
    SCOPED_TRACE(describe_case(baseline.op(), inputs, attrs));
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    PreparedCase prepared = prepare_case(baseline.op(), inputs, attrs);
    if (options.patch_inputs) options.patch_inputs(prepared.inputs);
    std::string error_message;
    ASSERT_EQ(call_baseline(baseline, prepared, error_message), 0) << error_message;
    compare_with_golden(prepared, options);
}

}  // namespace hb::test
