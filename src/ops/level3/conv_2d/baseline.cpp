// Baseline for conv_2d: oneDNN convolution_forward (direct algorithm) through
// dnnl_conv_baseline.hpp: formats chosen by oneDNN (format_tag::any) with reorders of x and
// the filter from NCHW / OIHW and of y back to NCHW in every call, as PyTorch's oneDNN path
// does for plain tensors; a dtype oneDNN runs only in its reference kernel on this CPU
// (float16: oneDNN 2.6 has no f16 convolution; bfloat16 below AVX-512) goes through fp32
// copies, and so does a half-precision x holding inf or NaN (see has_nonfinite_half).
// Afterwards, outputs whose window meets the padding at a non-finite filter tap are set to
// NaN, the operator's 0 * inf (oneDNN skips padded taps).
#include <string>

#include "ops/dnnl_conv_baseline.hpp"

namespace {

using namespace hb::baseline;

std::string views(const hb_call* call, Conv2dCall& c) {
    std::string error = flat_view(hb_input(call, "x"), "input x", c.x);
    if (error.empty()) error = flat_view(hb_input(call, "filter"), "input filter", c.w);
    if (error.empty()) error = flat_view(hb_input(call, "bias"), "input bias", c.bias);
    if (error.empty()) error = flat_view(hb_output(call, "y"), "output y", c.y);
    if (!error.empty()) return error;
    const hb_tensor& x = hb_input(call, "x")->tensors[0];
    const hb_tensor& w = hb_input(call, "filter")->tensors[0];
    const hb_tensor& y = hb_output(call, "y")->tensors[0];
    if (x.rank != 4 || w.rank != 4 || y.rank != 4 || w.shape[1] != x.shape[1] || y.shape[1] != w.shape[0])
        return "conv_2d: x [N, Cin, H, W], filter [Cout, Cin, Kh, Kw] and y [N, Cout, Ho, Wo] expected";
    if (c.w.dtype != c.x.dtype || c.bias.dtype != c.x.dtype || c.y.dtype != c.x.dtype)
        return "conv_2d: x, filter, bias and y must share one dtype";
    if (c.x.dtype != HB_FLOAT16 && c.x.dtype != HB_BFLOAT16 && c.x.dtype != HB_FLOAT32)
        return "conv_2d: float16, bfloat16 or float32 expected";
    const hb_attr* strides = hb_attr_find(call, "strides");
    const hb_attr* pads = hb_attr_find(call, "pads");
    const hb_attr* dilations = hb_attr_find(call, "dilations");
    if (!strides || strides->type != HB_ATTR_INT_LIST || strides->count != 2 || !pads ||
        pads->type != HB_ATTR_INT_LIST || pads->count != 4)
        return "conv_2d: strides [sh, sw] and pads [top, bottom, left, right] expected";
    c.n = x.shape[0], c.cin = x.shape[1], c.h = x.shape[2], c.wd = x.shape[3];
    c.cout = w.shape[0], c.kh = w.shape[2], c.kw = w.shape[3];
    c.oh = y.shape[2], c.ow = y.shape[3];
    c.sh = strides->ints[0], c.sw = strides->ints[1];
    c.top = pads->ints[0], c.bottom = pads->ints[1], c.left = pads->ints[2], c.right = pads->ints[3];
    if (dilations && dilations->type == HB_ATTR_INT_LIST && dilations->count == 2)
        c.dh = dilations->ints[0], c.dw = dilations->ints[1];
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
