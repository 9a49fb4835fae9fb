// masked_scale(x, mask, scale=1): y = x * mask * scale; y has x's dtype and shape, the mask
// has x's shape and its own dtype (int8, uint8, float16, bfloat16, float32).
#include <algorithm>

#include "core/error.hpp"
#include "ops/elementwise.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"

namespace hb {

class MaskedScaleOp final : public OperatorWithCompute<MaskedScaleOp> {
  public:
    std::string name() const override { return "masked_scale"; }
    int level() const override { return 1; }
    std::string baseline_description() const override {
        return "oneDNN binary_mul with the scale as a src0 scale (jit f32 with int8/uint8/bf16/fp32 masks; "
               "fp16 and bf16 x and fp16 masks are unimplemented on AVX2, so they are converted to fp32, "
               "as a framework does)";
    }
    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const TensorSpec& x = p.input("x").tensors.at(0);
        const TensorSpec& mask = p.input("mask").tensors.at(0);
        if (mask.shape != x.shape)
            throw Error(p.context() + "mask has shape " + shape_to_string(mask.shape) + " but x has " +
                        shape_to_string(x.shape) + "; they must be equal");
        return same_shape_output(p, "y");
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const T scale = static_cast<T>(p.attr_float("scale"));
        const auto& x = in[0].one().v;
        const auto& mask = in[1].one().v;
        auto& y = out[0].one().v;
#pragma omp parallel for schedule(static)
        for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] * mask[i] * scale;
    }

    WorkModel work(const Problem& p) const override {
        const TensorSpec& x = p.input("x").tensors.at(0);
        const TensorSpec& mask = p.input("mask").tensors.at(0);
        // Two multiplies, and a conversion of the mask where its dtype differs from x's.
        WorkModel w = mask.dtype == x.dtype
                          ? elementwise_work(p, {{OpClass::mul, 2}})
                          : elementwise_work(p, {{OpClass::mul, 2}, {OpClass::cast, 1}});
        w.bytes_read += static_cast<double>(mask.bytes());
        // cann-bench (docs/hap.md): x * mask * scale = 2 mul, and the mask converted to the
        // dtype x computes in where they differ.
        const DType compute = formula_dtype(x.dtype, FormulaMath::elementwise);
        add_formula(w, x.dtype, FormulaMath::elementwise, static_cast<double>(x.numel()),
                    {{OpClass::mul, 2}, {OpClass::cast, mask.dtype == compute ? 0.0 : 1.0}});
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        const DType mask_dtype =
            sampler.pick(std::vector<DType>{DType::i8, DType::u8, DType::f16, DType::bf16, DType::f32});
        // The narrower dtype sets the alignment unit, so an aligned case is aligned for both
        // inputs and a non-aligned one (odd innermost size) for neither.
        const DType narrower = dtype_size(mask_dtype) < dtype_size(d.dtype) ? mask_dtype : d.dtype;
        const int rank = sampler.pick_rank(1, 5);
        const Shape shape = sampler.shape(std::max<std::int64_t>(1, d.target_elements / 2), rank, narrower, d.aligned);
        out.inputs.at(0).shapes = {shape};
        out.inputs.at(1).shapes = {shape};
        out.inputs.at(1).dtype = mask_dtype;
        // Integer masks come out 0 or 1; floating masks uniform in [0, 1].
        out.inputs.at(1).range = ValueRange{0.0, 1.0};
        // Dropout-style scales 1/(1-p), identity, zero, negative and fractional values.
        const double scale = sampler.pick(std::vector<double>{1.0, 1.25, 2.0, 0.5, 0.0, -1.0, -0.75, 0.125, 10.0});
        out.attrs = {{"scale", AttrValue::of_float(scale)}};
    }
};

HB_REGISTER_OPERATOR(MaskedScaleOp)

}  // namespace hb
