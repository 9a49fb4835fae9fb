// Computes only the first half of every output tensor.
#include "hapbench/kernel.h"
#include "hapbench/half.h"

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x1 = hb_input(call, "x1");
    const hb_arg* x2 = hb_input(call, "x2");
    const hb_arg* x3 = hb_input(call, "x3");
    hb_arg* y = hb_output(call, "y");
    const double scalar = hb_attr_float(call, "scalar", 1.0);
    for (int32_t t = 0; t < y->count; ++t) {
        const int64_t n = hb_numel(&y->tensors[t]) / 2;
        const hb_dtype dtype = y->tensors[t].dtype;
        for (int64_t i = 0; i < n; ++i) {
            if (dtype == HB_FLOAT32) {
                const float* a = static_cast<const float*>(x1->tensors[t].data);
                const float* b = static_cast<const float*>(x2->tensors[t].data);
                const float* c = static_cast<const float*>(x3->tensors[t].data);
                static_cast<float*>(y->tensors[t].data)[i] = a[i] + static_cast<float>(scalar) * b[i] / c[i];
            } else {
                const uint16_t* a = static_cast<const uint16_t*>(x1->tensors[t].data);
                const uint16_t* b = static_cast<const uint16_t*>(x2->tensors[t].data);
                const uint16_t* c = static_cast<const uint16_t*>(x3->tensors[t].data);
                const bool half = dtype == HB_FLOAT16;
                auto load = [half](uint16_t v) { return half ? hb_f16_to_f32(v) : hb_bf16_to_f32(v); };
                const float r = load(a[i]) + static_cast<float>(scalar) * load(b[i]) / load(c[i]);
                static_cast<uint16_t*>(y->tensors[t].data)[i] = half ? hb_f32_to_f16(r) : hb_f32_to_bf16(r);
            }
        }
    }
    return 0;
}
