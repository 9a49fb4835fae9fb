// The baselines of unsorted_segment_sum, apply_rotary_pos_emb, grid_sampler_3d and
// resize_bilinear: each shared object is loaded the way the worker loads a kernel, run on
// small generated cases along every attribute path and dtype, and compared with the
// operator's fp64 golden at the precision gate's max-error bound (exact for integers).
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

// ---------------------------------------------------------------- unsorted_segment_sum

// Shapes that take each of the baseline's three schedules: long rows (trailing-dim slices),
// short rows with a small y (per-thread partials), short rows with a large y (segment ranges).
TEST(BaselinesLevel2Spatial, SegmentSumMatchesGoldenOnEverySchedule) {
    const Baseline baseline("unsorted_segment_sum");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    struct Layout {
        Shape data;
        std::int64_t segments;
    };
    const std::vector<Layout> layouts = {
        {{37, 1031}, 5}, {{301, 3, 7}, 17}, {{2000}, 1}, {{3001, 3}, 1000003}};
    for (DType dtype : {DType::f16, DType::bf16, DType::f32, DType::i32, DType::i64})
        for (DType ids : {DType::i32, DType::i64})
            for (const auto& l : layouts) {
                // Integer sums with no rounding to hide behind; floats within the gate.
                const ValueRange range = is_integer(dtype) ? ValueRange{-1000, 1000} : ValueRange{-2, 2};
                check_baseline(baseline, "unsorted_segment_sum",
                               {{dtype, l.data, range}, {ids, {l.data[0]}, {0, double(l.segments - 1)}}},
                               {{"num_segments", AttrValue::of_int(l.segments)}});
            }
}

TEST(BaselinesLevel2Spatial, SegmentSumWrapsInt32AndPropagatesSpecialValues) {
    const Baseline baseline("unsorted_segment_sum");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const AttrMap attrs = {{"num_segments", AttrValue::of_int(3)}};
    check_baseline(baseline, "unsorted_segment_sum",
                   {{DType::i32, {500, 4}, {-2147483648.0, 2147483647.0}}, {DType::i32, {500}, {0, 2}}}, attrs);
    for (DType dtype : {DType::f16, DType::bf16, DType::f32}) {
        check_baseline(baseline, "unsorted_segment_sum",
                       {{dtype, {200, 3}, {-INFINITY, INFINITY}}, {DType::i64, {200}, {0, 2}}}, attrs);
        check_baseline(baseline, "unsorted_segment_sum", {{dtype, {200, 3}, {NAN, NAN}}, {DType::i64, {200}, {0, 2}}},
                       attrs);
    }
}


// ---------------------------------------------------------------- apply_rotary_pos_emb

TEST(BaselinesLevel2Spatial, RopeMatchesGoldenInEveryLayoutAndMode) {
    const Baseline baseline("apply_rotary_pos_emb");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    for (DType dtype : {DType::f16, DType::bf16, DType::f32})
        for (std::int64_t layout : {0, 1})
            for (const char* mode : {"half", "interleaved"}) {
                const AttrMap attrs = {{"layout", AttrValue::of_int(layout)}, {"rotaryMode", AttrValue::of_string(mode)}};
                auto qk = [&](std::int64_t heads) {
                    return layout == 0 ? Shape{2, 13, heads, 80} : Shape{2, heads, 13, 80};
                };
                // Shared and per-batch tables; key with fewer heads.
                for (const Shape& table : {Shape{13, 40}, Shape{2, 13, 40}})
                    check_baseline(baseline, "apply_rotary_pos_emb",
                                   {{dtype, qk(6), {-2, 2}}, {dtype, qk(3), {-2, 2}}, {dtype, table, {-1, 1}},
                                    {dtype, table, {-1, 1}}},
                                   attrs);
            }
}


// ---------------------------------------------------------------- grid_sampler_3d

TEST(BaselinesLevel2Spatial, GridSamplerMatchesGoldenInEveryMode) {
    const Baseline baseline("grid_sampler_3d");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    for (DType dtype : {DType::f16, DType::f32})
        for (const char* interp : {"bilinear", "nearest"})
            for (const char* pad : {"zeros", "border", "reflection"})
                for (bool align : {false, true})
                    check_baseline(baseline, "grid_sampler_3d",
                                   {{dtype, {2, 3, 5, 6, 7}, {-2, 2}}, {dtype, {2, 4, 9, 11, 3}, {-2.5, 2.5}}},
                                   {{"interpolation_mode", AttrValue::of_string(interp)},
                                    {"padding_mode", AttrValue::of_string(pad)},
                                    {"align_corners", AttrValue::of_bool(align)}},
                                   1e-2);
}

}  // namespace
}  // namespace hb
