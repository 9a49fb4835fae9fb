// The baselines of foreach_addcdiv_scalar, foreach_norm and swi_glu, loaded as the harness
// loads them, agree with the operators' goldens on small fp32, fp16 and bf16 tensors.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "core/error.hpp"
#include "core/kernel_call.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "suite/inputs.hpp"

namespace hb {
namespace {

const std::vector<DType> float_dtypes = {DType::f32, DType::f16, DType::bf16};

class Baseline {
  public:
    explicit Baseline(const std::string& op) {
        const std::string path = std::string(HB_BASELINE_DIR) + "/" + op + ".so";
        handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle_) throw Error("cannot load " + path + ": " + dlerror());
        kernel_ = reinterpret_cast<hb_kernel_fn>(dlsym(handle_, "hapbench_kernel"));
        if (!kernel_) throw Error(path + " does not export hapbench_kernel");
    }
    ~Baseline() { dlclose(handle_); }
    int operator()(const hb_call& call) const { return kernel_(&call); }

  private:
    void* handle_ = nullptr;
    hb_kernel_fn kernel_ = nullptr;
};

Proto proto_for(const std::string& op) {
    auto input = [](const std::string& name, bool is_list) {
        InputDef d;
        d.name = name;
        d.dtypes = float_dtypes;
        d.is_list = is_list;
        return d;
    };
    auto attr = [](const std::string& name, AttrType type, std::optional<AttrValue> default_value) {
        AttrDef d;
        d.name = name;
        d.type = type;
        d.required = !default_value;
        d.default_value = default_value;
        return d;
    };
    Proto p;
    p.op = op;
    p.level = 1;
    OutputDef y;
    y.dtypes = float_dtypes;
    if (op == "foreach_addcdiv_scalar") {
        p.attrs = {attr("scalar", AttrType::f, std::nullopt)};
        p.inputs = {input("x1", true), input("x2", true), input("x3", true)};
        y.name = "y";
    } else if (op == "foreach_norm") {
        p.attrs = {attr("scalar", AttrType::f, std::nullopt)};
        p.inputs = {input("x", true)};
        y.name = "y";
    } else {
        p.attrs = {attr("dim", AttrType::i, AttrValue::of_int(-1))};
        p.inputs = {input("input", false)};
        y.name = "output";
    }
    p.outputs = {y};
    return p;
}

// Relative error allowed against the fp64 golden rounded to the dtype: a few units in the
// last place of the output dtype (the baselines compute in fp32 and round once).
double tolerance(DType t) { return t == DType::f32 ? 2e-5 : t == DType::f16 ? 4e-3 : 3e-2; }

struct CaseInputs {
    std::vector<Shape> shapes;
    std::vector<ValueRange> ranges;  // one per input
};

// Builds the case, fills its inputs, runs the baseline and compares every output element
// with the golden. `patch` may overwrite generated input values (NaN members).
void check_baseline(const std::string& op_name, DType dtype, const std::vector<CaseInputs>& inputs_per_arg,
                    const AttrMap& attrs, const std::function<void(std::vector<Arg>&)>& patch = {}) {
    const Proto proto = proto_for(op_name);
    const Operator* op = find_operator(op_name);
    ASSERT_NE(op, nullptr);
    CaseSpec spec;
    spec.op = op_name;
    spec.case_id = 1;
    spec.attrs = attrs;
    for (std::size_t a = 0; a < proto.inputs.size(); ++a) {
        CaseInput in;
        in.is_list = proto.inputs[a].is_list;
        in.dtype = dtype;
        in.shapes = inputs_per_arg.at(a).shapes;
        spec.inputs.push_back(in);
    }
    const Problem problem = resolve_problem(proto, *op, spec);
    std::vector<Arg> inputs = allocate_args(problem.inputs, false);
    std::uint64_t seed = 1;
    for (std::size_t a = 0; a < inputs.size(); ++a)
        for (auto& t : inputs[a].tensors) fill_tensor(t, inputs_per_arg[a].ranges.at(0), seed++);
    if (patch) patch(inputs);
    std::vector<Arg> outputs = allocate_args(problem.outputs, false);

    KernelCall call(op_name, inputs, outputs, problem.attrs, 2);
    const Baseline baseline(op_name);
    ASSERT_EQ(baseline(call.call()), 0) << call.error_message();

    ValueArgs<double> want = values_for_specs<double>(problem.outputs);
    op->golden(problem, values_from_args(inputs), want);
    for (std::size_t a = 0; a < outputs.size(); ++a)
        for (std::size_t t = 0; t < outputs[a].tensors.size(); ++t) {
            const auto got = to_f64(outputs[a].tensors[t]);
            auto ref = want[a].tensors[t].v;
            round_values_to_dtype(ref, dtype);
            ASSERT_EQ(got.size(), ref.size());
            for (std::size_t i = 0; i < got.size(); ++i) {
                if (std::isnan(ref[i]) || std::isinf(ref[i])) {
                    EXPECT_TRUE(std::isnan(ref[i]) ? std::isnan(got[i]) : got[i] == ref[i])
                        << op_name << " " << dtype_name(dtype) << " tensor " << t << " element " << i << ": got " << got[i]
                        << ", want " << ref[i];
                    continue;
                }
                EXPECT_LE(std::fabs(got[i] - ref[i]), tolerance(dtype) * std::fabs(ref[i]) + 1e-6)
                    << op_name << " " << dtype_name(dtype) << " tensor " << t << " element " << i << ": got " << got[i]
                    << ", want " << ref[i];
            }
        }
}

TEST(BaselineForeachAddcdivScalar, MatchesGolden) {
    const std::vector<Shape> shapes = {{37, 129}, {5000}, {3, 4, 1}};
    for (DType t : float_dtypes) {
        SCOPED_TRACE(dtype_name(t));
        check_baseline("foreach_addcdiv_scalar", t,
                       {{shapes, {{-3, 3}}}, {shapes, {{-3, 3}}}, {shapes, {{0.5, 2}}}},
                       {{"scalar", AttrValue::of_float(-1.5)}});
    }
}

TEST(BaselineForeachNorm, MatchesGoldenForEveryOrder) {
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<Shape> shapes = {{31, 67}, {4099}, {2, 3}};
    for (DType t : float_dtypes)
        for (double order : {1.0, 2.0, 3.0, 0.5, -1.0, 0.0, inf, -inf}) {
            SCOPED_TRACE(std::string(dtype_name(t)) + " p=" + std::to_string(order));
            check_baseline("foreach_norm", t, {{shapes, {{-2, 2}}}}, {{"scalar", AttrValue::of_float(order)}});
        }
}

TEST(BaselineForeachNorm, NanMemberPropagates) {
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<Shape> shapes = {{100}, {50}};
    auto put_nan = [](std::vector<Arg>& in) { in[0].tensors[0].set(17, std::nan("")); };
    for (DType t : float_dtypes)
        for (double order : {2.0, 0.0, inf, -inf, 1.5}) {
            SCOPED_TRACE(std::string(dtype_name(t)) + " p=" + std::to_string(order));
            check_baseline("foreach_norm", t, {{shapes, {{-2, 2}}}}, {{"scalar", AttrValue::of_float(order)}}, put_nan);
        }
}

TEST(BaselineForeachNorm, LongMemberStaysAccurateInFp32) {
    // One running fp32 accumulator per lane drifts by ~1e-4 relative over millions of terms.
    for (double order : {1.0, 2.0, 3.0})
        check_baseline("foreach_norm", DType::f32, {{{{3'000'017}}, {{-10, 10}}}}, {{"scalar", AttrValue::of_float(order)}});
}

TEST(BaselineSwiGlu, MatchesGoldenOnEverySplitKind) {
    struct Split {
        Shape shape;
        std::int64_t dim;
    };
    // [3, 8200] dim -1 has 4100-element halves (the oneDNN path for fp32); the rest run the loop.
    const std::vector<Split> splits = {{{3, 8200}, -1}, {{5, 38}, -1}, {{4, 7}, 0}, {{2, 6, 5}, 1}, {{8194}, 0}};
    for (DType t : float_dtypes)
        for (const auto& s : splits) {
            SCOPED_TRACE(std::string(dtype_name(t)) + " " + shape_to_string(s.shape) + " dim " + std::to_string(s.dim));
            check_baseline("swi_glu", t, {{{s.shape}, {{-6, 6}}}}, {{"dim", AttrValue::of_int(s.dim)}});
        }
}

}  // namespace
}  // namespace hb
