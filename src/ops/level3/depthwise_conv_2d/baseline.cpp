// Baseline for depthwise_conv_2d: oneDNN convolution_forward with groups = C (its depthwise
// kernels), through dnnl_conv_baseline.hpp as conv_2d's: formats chosen by oneDNN with
// reorders from and to NCHW in every call; dtypes oneDNN runs only in its reference kernel
// on this CPU through fp32 copies; outputs whose window meets the padding at a non-finite
// weight set to NaN afterwards (oneDNN skips padded taps; the operator multiplies them).
#include <string>

#include "ops/dnnl_conv_baseline.hpp"

namespace {

using namespace hb::baseline;

std::string views(const hb_call* call, Conv2dCall& c) {
    std::string error = flat_view(hb_input(call, "x"), "input x", c.x);
    if (error.empty()) error = flat_view(hb_input(call, "weight"), "input weight", c.w);
    if (error.empty()) error = flat_view(hb_input(call, "bias"), "input bias", c.bias);
    if (error.empty()) error = flat_view(hb_output(call, "y"), "output y", c.y);
    if (!error.empty()) return error;
    const hb_tensor& x = hb_input(call, "x")->tensors[0];
    const hb_tensor& w = hb_input(call, "weight")->tensors[0];
    const hb_tensor& y = hb_output(call, "y")->tensors[0];
    if (x.rank != 4 || w.rank != 3 || y.rank != 4 || w.shape[0] != x.shape[1] || y.shape[1] != x.shape[1])
        return "depthwise_conv_2d: x [N, C, H, W], weight [C, Kh, Kw] and y [N, C, Ho, Wo] expected";
    if (c.w.dtype != c.x.dtype || c.bias.dtype != c.x.dtype || c.y.dtype != c.x.dtype)
        return "depthwise_conv_2d: x, weight, bias and y must share one dtype";
    if (c.x.dtype != HB_FLOAT16 && c.x.dtype != HB_BFLOAT16 && c.x.dtype != HB_FLOAT32)
        return "depthwise_conv_2d: float16, bfloat16 or float32 expected";
    const hb_attr* stride = hb_attr_find(call, "stride");
    const hb_attr* padding = hb_attr_find(call, "padding");
    const hb_attr* dilation = hb_attr_find(call, "dilation");
    for (const hb_attr* a : {stride, padding, dilation})
        if (!a || a->type != HB_ATTR_INT_LIST || a->count != 2)
            return "depthwise_conv_2d: stride, padding and dilation must each list two integers";
    c.n = x.shape[0], c.cin = c.cout = c.groups = x.shape[1], c.h = x.shape[2], c.wd = x.shape[3];
    c.kh = w.shape[1], c.kw = w.shape[2];
    c.oh = y.shape[2], c.ow = y.shape[3];
    c.sh = stride->ints[0], c.sw = stride->ints[1];
    c.top = c.bottom = padding->ints[0], c.left = c.right = padding->ints[1];
    c.dh = dilation->ints[0], c.dw = dilation->ints[1];
    return {};
}

}  // namespace

extern "C" HB_EXPORT std::uint64_t hapbench_workspace_bytes(const hb_call* call) {
    Conv2dCall c;
    if (!views(call, c).empty()) return 0;  // the kernel reports the error
    try {
        return conv2d_workspace_bytes(c);
    } catch (const std::exception&) {
        return 0;
    }
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    Conv2dCall c;
    if (const std::string error = views(call, c); !error.empty()) return hb_fail(call, 2, error.c_str());
    return run_conv2d(call, c);
}
