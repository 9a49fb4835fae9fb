// Reference cummin: running minimum along `dim` and the int64 index where it was taken, as
// torch.cummin on the CPU: element k replaces the minimum when it is NaN, or when the minimum
// is not NaN and x[k] <= minimum. Ties therefore move the index to the LAST occurrence; a NaN
// propagates, and each later NaN moves the index to itself. The values output copies the
// selected input element as stored. Plain on purpose: one OpenMP loop over the lines.
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

// x != x is the NaN test (false for integers).
template <typename Key>
bool replaces(Key candidate, Key minimum) {
    if (candidate != candidate) return true;
    return minimum == minimum && candidate <= minimum;
}

template <typename Type>
void cummin_all(const hb_tensor& input, const hb_tensor& values, int64_t* indices, int64_t outer, int64_t size,
                int64_t inner) {
    const auto* x = static_cast<const typename Type::Storage*>(input.data);
    auto* y = static_cast<typename Type::Storage*>(values.data);
    const int64_t lines = outer * inner;
#pragma omp parallel for schedule(static) if (lines * size >= 32768)
    for (int64_t line = 0; line < lines; ++line) {
        const int64_t first = line / inner * size * inner + line % inner;
        typename Type::Storage stored = x[first];
        typename Type::Key minimum = Type::load(stored);
        int64_t index = 0;
        for (int64_t k = 0; k < size; ++k) {
            const int64_t at = first + k * inner;
            const typename Type::Key v = Type::load(x[at]);
            if (k > 0 && replaces(v, minimum)) {
                minimum = v;
                stored = x[at];
                index = k;
            }
            y[at] = stored;
            indices[at] = index;
        }
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* in_arg = hb_input(call, "input");
    hb_arg* values_arg = hb_output(call, "values");
    hb_arg* indices_arg = hb_output(call, "indices");
    if (!in_arg || !values_arg || !indices_arg || in_arg->count != 1 || values_arg->count != 1 || indices_arg->count != 1)
        return hb_fail(call, 1, "cummin: expected input `input` and outputs `values` and `indices`");
    const hb_tensor& input = in_arg->tensors[0];
    const hb_tensor& values = values_arg->tensors[0];
    const hb_tensor& indices = indices_arg->tensors[0];
    if (!hb_is_contiguous(&input) || !hb_is_contiguous(&values) || !hb_is_contiguous(&indices))
        return hb_fail(call, 3, "cummin: only contiguous tensors are supported");
    if (values.dtype != input.dtype || indices.dtype != HB_INT64 || hb_numel(&values) != hb_numel(&input) ||
        hb_numel(&indices) != hb_numel(&input))
        return hb_fail(call, 2, "cummin: values must have the input's dtype and shape, indices int64 of its shape");

    // A 0-d input is one line of one element.
    const int64_t rank = input.rank > 0 ? input.rank : 1;
    int64_t dim = hb_attr_int(call, "dim", 0);
    if (dim < 0) dim += rank;
    if (dim < 0 || dim >= rank) return hb_fail(call, 4, "cummin: dim is out of range for the input's rank");
    int64_t outer = 1, size = 1, inner = 1;
    for (int32_t d = 0; d < input.rank; ++d) {
        if (d < dim) outer *= input.shape[d];
        else if (d == dim) size = input.shape[d];
        else inner *= input.shape[d];
    }
    if (size == 0) return 0;

    auto* idx = static_cast<int64_t*>(indices.data);
    switch (input.dtype) {
        case HB_FLOAT32: cummin_all<Fp32>(input, values, idx, outer, size, inner); return 0;
        case HB_FLOAT16: cummin_all<Fp16>(input, values, idx, outer, size, inner); return 0;
        case HB_BFLOAT16: cummin_all<Bf16>(input, values, idx, outer, size, inner); return 0;
        case HB_INT32: cummin_all<Int32>(input, values, idx, outer, size, inner); return 0;
        default: return hb_fail(call, 2, "cummin: input must be float16, bfloat16, float32 or int32");
    }
}
