// The resize_bilinear baseline: its shared object is loaded the way the worker loads a
// kernel, run on small generated cases along both of its paths (oneDNN resampling:
// align_corners=false with output_size or an exact scale_factor; the C++ loop:
// align_corners=true or an inexact scale_factor) in every dtype, and compared with the
// operator's fp64 golden at the precision gate's max-error bound.
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
    Baseline(const Baseline&) = delete;
    Baseline& operator=(const Baseline&) = delete;
    const std::string& error() const { return error_; }
    hb_kernel_fn kernel() const { return kernel_; }
    hb_workspace_fn workspace() const { return workspace_; }

  private:
    void* handle_ = nullptr;
    hb_kernel_fn kernel_ = nullptr;
    hb_workspace_fn workspace_ = nullptr;
    std::string error_;
};

const Proto& proto_for(const std::string& op) {
    static std::map<std::string, Proto> protos;
    auto it = protos.find(op);
    if (it == protos.end())
        it = protos.emplace(op, load_proto(std::string(HB_SOURCE_DIR) + "/suite/level2/" + op + "/proto.yaml", op, 2))
                 .first;
    return it->second;
}

// The precision gate's per-element bound: 10 * tau, tau from the proto's overrides or the
// methodology defaults.
double max_error_bound(const Proto& proto, DType t) {
    auto it = proto.tau_overrides.find(t);
    if (it != proto.tau_overrides.end()) return 10 * it->second;
    switch (t) {
        case DType::f16: return 10 * std::ldexp(1.0, -10);
        case DType::bf16: return 10 * std::ldexp(1.0, -7);
        default: return 10 * std::ldexp(1.0, -13);
    }
}

struct Input {
    DType dtype;
    Shape shape;
    ValueRange range;
};

// Runs the baseline on generated inputs and compares every output with the golden rounded
// to its dtype; NaN positions must match, infinities in sign. Interpolations of mixed-sign
// values cancel to near 0, where the relative error of fp32 arithmetic grows without
// bound (the gate's fallback accepts it); `floor` bounds the denominator |expected| from
// below for them.
void check_baseline(const Baseline& baseline, const std::string& op_name, const std::vector<Input>& inputs,
                    const AttrMap& attrs, double floor = 1e-7) {
    SCOPED_TRACE(op_name + " " + attrs_to_string(attrs) + " " + std::string(dtype_name(inputs.at(0).dtype)) + " " +
                 shape_to_string(inputs.at(0).shape));
    const Operator* op = find_operator(op_name);
    ASSERT_NE(op, nullptr);
    const Proto& proto = proto_for(op_name);
    CaseSpec spec;
    spec.op = op_name;
    spec.case_id = 7;
    spec.attrs = attrs;
    for (const auto& in : inputs) {
        CaseInput ci;
        ci.shapes = {in.shape};
        ci.dtype = in.dtype;
        ci.range = in.range;
        spec.inputs.push_back(ci);
    }
    const Problem problem = resolve_problem(proto, *op, spec);
    std::vector<Arg> in_args = generate_inputs(problem, *op, 0);
    std::vector<Arg> outputs = allocate_args(problem.outputs, false);
    KernelCall call(op_name, in_args, outputs, problem.attrs, 2);
    const std::uint64_t workspace_bytes = baseline.workspace() ? baseline.workspace()(&call.shape_only_call()) : 0;
    Buffer workspace(workspace_bytes);
    call.set_workspace(workspace_bytes ? workspace.data() : nullptr, workspace_bytes);
    ASSERT_EQ(baseline.kernel()(&call.call()), 0) << call.error_message();

    ValueArgs<double> golden = values_for_specs<double>(problem.outputs);
    op->golden(problem, values_from_args(in_args), golden);
    for (std::size_t o = 0; o < outputs.size(); ++o) {
        std::vector<double> expected = golden.at(o).one().v;
        const DType out_dtype = problem.outputs.at(o).tensors.at(0).dtype;
        round_values_to_dtype(expected, out_dtype);
        const std::vector<double> got = to_f64(outputs.at(o).tensors.at(0));
        ASSERT_EQ(got.size(), expected.size());
        const double bound = is_integer(out_dtype) ? 0 : max_error_bound(proto, out_dtype);
        double worst = 0;
        std::size_t worst_at = 0;
        for (std::size_t k = 0; k < got.size(); ++k) {
            if (std::isnan(expected[k]) || std::isnan(got[k])) {
                EXPECT_EQ(std::isnan(got[k]), std::isnan(expected[k]))
                    << "output " << o << " element " << k << ": " << got[k] << " vs " << expected[k];
                continue;
            }
            if (std::isinf(expected[k]) && std::isinf(got[k])) {
                EXPECT_EQ(got[k], expected[k]) << "output " << o << " element " << k;
                continue;
            }
            const double e = std::fabs(got[k] - expected[k]) / std::max(std::fabs(expected[k]) + 1e-7, floor);
            if (e > worst) worst = e, worst_at = k;
        }
        if (bound == 0)
            EXPECT_EQ(worst, 0) << "output " << o << " element " << worst_at << ": " << got[worst_at] << " vs "
                                << expected[worst_at];
        else
            EXPECT_LT(worst, bound) << "output " << o << " element " << worst_at << ": " << got[worst_at] << " vs "
                                    << expected[worst_at];
    }
}

// ---------------------------------------------------------------- resize_bilinear

AttrValue int_pair(std::int64_t a, std::int64_t b) {
    AttrValue v;
    v.type = AttrType::int_list;
    v.ints = {a, b};
    return v;
}

AttrValue float_pair(double a, double b) {
    AttrValue v;
    v.type = AttrType::float_list;
    v.floats = {a, b};
    return v;
}

TEST(BaselinesLevel2Resize, ResizeMatchesGoldenOnBothPaths) {
    const Baseline baseline("resize_bilinear");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const Shape x = {2, 3, 17, 24};
    const std::vector<AttrMap> variants = {
        // oneDNN: output_size up, down and mixed; scale_factor with exact sizes (24 * 1.5 = 36).
        {{"output_size", int_pair(40, 61)}},
        {{"output_size", int_pair(7, 9)}},
        {{"output_size", int_pair(30, 10)}},
        {{"scale_factor", float_pair(2.0, 1.5)}},
        // The loop: align_corners, and scale factors whose sizes are inexact (17 * 1.3 = 22.1).
        {{"output_size", int_pair(40, 61)}, {"align_corners", AttrValue::of_bool(true)}},
        {{"output_size", int_pair(5, 1)}, {"align_corners", AttrValue::of_bool(true)}},
        {{"scale_factor", float_pair(1.3, 0.7)}},
        {{"scale_factor", float_pair(0.45, 2.5)}, {"align_corners", AttrValue::of_bool(true)}},
    };
    for (DType dtype : {DType::f16, DType::bf16, DType::f32})
        for (std::size_t k = 0; k < variants.size(); ++k) {
            check_baseline(baseline, "resize_bilinear", {{dtype, x, {-2, 2}}}, variants[k], 1e-2);
            // The loop follows PyTorch on special values too (a NaN times weight 0 is NaN);
            // oneDNN reads a clamped border pixel twice instead of its neighbour at weight 0,
            // so NaN positions differ there and only the loop variants are checked.
            if (k >= 4) check_baseline(baseline, "resize_bilinear", {{dtype, x, {NAN, NAN}}}, variants[k], 1e-2);
        }
}

}  // namespace
}  // namespace hb
