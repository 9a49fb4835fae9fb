// Reference arg_max: the int64 index of the maximum of each slice along `dim`, as
// torch.argmax on the CPU: the FIRST of equal maxima; a NaN counts as the maximum, and the
// first NaN wins. float16/bfloat16 compare in fp32 (exact), integers compare as integers.
// Plain on purpose: one OpenMP loop over the slices, each scanned in order.
#include <omp.h>

#include <cstdint>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

struct Fp32 {
    using Storage = float;
    using Key = float;
    static float load(float v) { return v; }
};
struct Fp16 {
    using Storage = uint16_t;
    using Key = float;
    static float load(uint16_t v) { return hb_f16_to_f32(v); }
};
struct Bf16 {
    using Storage = uint16_t;
    using Key = float;
    static float load(uint16_t v) { return hb_bf16_to_f32(v); }
};
struct Int32 {
    using Storage = int32_t;
    using Key = int32_t;
    static int32_t load(int32_t v) { return v; }
};
struct Int64 {
    using Storage = int64_t;
    using Key = int64_t;
    static int64_t load(int64_t v) { return v; }
};

// A value replaces the running maximum when it is NaN or strictly greater, unless the
// running maximum is already NaN; x != x is the NaN test (false for integers).
template <typename Key>
bool replaces(Key candidate, Key best) {
    if (best != best) return false;
    return candidate != candidate || candidate > best;
}

template <typename Type>
void arg_max_all(const hb_tensor& input, int64_t* out, int64_t outer, int64_t size, int64_t inner) {
    const auto* x = static_cast<const typename Type::Storage*>(input.data);
    const int64_t slices = outer * inner;
#pragma omp parallel for schedule(static) if (slices * size >= 32768)
    for (int64_t s = 0; s < slices; ++s) {
        const int64_t o = s / inner;
        const int64_t i = s % inner;
        const auto* first = x + o * size * inner + i;
        typename Type::Key best = Type::load(first[0]);
        int64_t best_k = 0;
        for (int64_t k = 1; k < size; ++k) {
            const typename Type::Key v = Type::load(first[k * inner]);
            if (replaces(v, best)) {
                best = v;
                best_k = k;
            }
        }
        out[s] = best_k;
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* in_arg = hb_input(call, "input");
    hb_arg* out_arg = hb_output(call, "indices");
    if (!in_arg || !out_arg || in_arg->count != 1 || out_arg->count != 1)
        return hb_fail(call, 1, "arg_max: expected input `input` and output `indices`");
    const hb_tensor& input = in_arg->tensors[0];
    const hb_tensor& output = out_arg->tensors[0];
    if (!hb_is_contiguous(&input) || !hb_is_contiguous(&output))
        return hb_fail(call, 3, "arg_max: only contiguous tensors are supported");
    if (output.dtype != HB_INT64) return hb_fail(call, 2, "arg_max: the output must be int64");

    // A 0-d input is one slice of one element.
    const int64_t rank = input.rank > 0 ? input.rank : 1;
    int64_t dim = hb_attr_int(call, "dim", 0);
    if (dim < 0) dim += rank;
    if (dim < 0 || dim >= rank) return hb_fail(call, 4, "arg_max: dim is out of range for the input's rank");
    int64_t outer = 1, size = 1, inner = 1;
    for (int32_t d = 0; d < input.rank; ++d) {
        if (d < dim) outer *= input.shape[d];
        else if (d == dim) size = input.shape[d];
        else inner *= input.shape[d];
    }
    if (size == 0) return hb_fail(call, 4, "arg_max: the reduced dimension is empty");
    if (hb_numel(&output) != outer * inner) return hb_fail(call, 2, "arg_max: the output has the wrong size");

    auto* out = static_cast<int64_t*>(output.data);
    switch (input.dtype) {
        case HB_FLOAT32: arg_max_all<Fp32>(input, out, outer, size, inner); return 0;
        case HB_FLOAT16: arg_max_all<Fp16>(input, out, outer, size, inner); return 0;
        case HB_BFLOAT16: arg_max_all<Bf16>(input, out, outer, size, inner); return 0;
        case HB_INT32: arg_max_all<Int32>(input, out, outer, size, inner); return 0;
        case HB_INT64: arg_max_all<Int64>(input, out, outer, size, inner); return 0;
        default: return hb_fail(call, 2, "arg_max: input must be float16, bfloat16, float32, int32 or int64");
    }
}
