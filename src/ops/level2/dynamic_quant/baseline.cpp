// Baseline for dynamic_quant: a threaded C++ loop, OpenMP over rows; per row an fp32
// max|x| pass and a quantize pass (the row stays in cache between them), as a framework's
// CPU per-token quantizer runs. oneDNN 2.6 has no dynamic quantization: its reorder takes
// scales given in advance, so it would need a separate reduction pass plus a reorder per
// row with its own scale.
#include <cmath>
#include <cstdint>
#include <string>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;

template <typename Element>
void quantize_rows(const hb_tensor& x, const hb_tensor& y, const hb_tensor& scale) {
    const auto* in = static_cast<const Element*>(x.data);
    auto* q = static_cast<std::int8_t*>(y.data);
    auto* s_out = static_cast<float*>(scale.data);
    const std::int64_t row = x.shape[x.rank - 1];
    const std::int64_t rows = row == 0 ? 0 : hb_numel(&x) / row;
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
        const Element* xr = in + r * row;
        float max_abs = 0.0f;
        bool nan = false;
        for (std::int64_t i = 0; i < row; ++i) {
            const float a = std::fabs(to_f32(xr[i]));
            nan |= a != a;
            max_abs = a > max_abs ? a : max_abs;
        }
        const float s = nan ? NAN : std::max(max_abs, 1e-12f) / 127.0f;
        s_out[r] = s;
        std::int8_t* qr = q + r * row;
        for (std::int64_t i = 0; i < row; ++i) {
            const float v = to_f32(xr[i]) / s;
            qr[i] = v != v ? 0 : static_cast<std::int8_t>(std::fmin(std::fmax(std::nearbyint(v), -128.0f), 127.0f));
        }
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* y_arg = hb_output(call, "y");
    const hb_arg* s_arg = hb_output(call, "scale");
    if (!x_arg || !y_arg || !s_arg || x_arg->count != 1 || y_arg->count != 1 || s_arg->count != 1)
        return hb_fail(call, 1, "dynamic_quant: expected input x and outputs y and scale");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    const hb_tensor& scale = s_arg->tensors[0];
    if (x.rank < 1 || y.dtype != HB_INT8 || scale.dtype != HB_FLOAT32 || hb_numel(&y) != hb_numel(&x))
        return hb_fail(call, 2, "dynamic_quant: y must be int8 with x's size, scale float32");
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&y) || !hb_is_contiguous(&scale))
        return hb_fail(call, 2, "dynamic_quant: only contiguous tensors are supported");
    switch (x.dtype) {
        case HB_FLOAT16: quantize_rows<Half>(x, y, scale); return 0;
        case HB_BFLOAT16: quantize_rows<BFloat16>(x, y, scale); return 0;
        default: return hb_fail(call, 2, "dynamic_quant: x must be float16 or bfloat16");
    }
}
