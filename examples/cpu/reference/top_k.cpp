// Reference top_k (torch.topk, sorted): the k largest (or smallest) elements of every slice
// along dim, sorted, and their int64 positions. NaN ranks above +inf (first when largest,
// last when smallest). Each element becomes an unsigned key that orders values that way, so
// one comparison serves every dtype; y copies the selected elements' bits. Plain on purpose:
// one OpenMP loop over the slices, each gathered into a buffer, its k best moved to the front
// (nth_element) and sorted.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

uint64_t float_key(double v) {
    if (v != v) return ~uint64_t{0};  // every NaN above +inf
    if (v == 0) v = 0.0;
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return (bits >> 63) ? ~bits : bits | (uint64_t{1} << 63);
}

uint64_t key_of(const void* x, int64_t i, hb_dtype t) {
    switch (t) {
        case HB_FLOAT32: return float_key(static_cast<const float*>(x)[i]);
        case HB_FLOAT16: return float_key(hb_f16_to_f32(static_cast<const uint16_t*>(x)[i]));
        case HB_BFLOAT16: return float_key(hb_bf16_to_f32(static_cast<const uint16_t*>(x)[i]));
        case HB_INT8: return static_cast<uint64_t>(static_cast<int64_t>(static_cast<const int8_t*>(x)[i])) ^ (uint64_t{1} << 63);
        case HB_UINT8: return static_cast<const uint8_t*>(x)[i];
        case HB_INT32: return static_cast<uint64_t>(static_cast<int64_t>(static_cast<const int32_t*>(x)[i])) ^ (uint64_t{1} << 63);
        case HB_INT64: return static_cast<uint64_t>(static_cast<const int64_t*>(x)[i]) ^ (uint64_t{1} << 63);
        default: return 0;
    }
}

size_t element_bytes(hb_dtype t) {
    switch (t) {
        case HB_INT8: case HB_UINT8: return 1;
        case HB_FLOAT16: case HB_BFLOAT16: return 2;
        case HB_FLOAT32: case HB_INT32: return 4;
        case HB_INT64: return 8;
        default: return 0;
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    hb_arg* y_arg = hb_output(call, "y");
    hb_arg* idx_arg = hb_output(call, "idx");
    if (!x_arg || !y_arg || !idx_arg) return hb_fail(call, 1, "top_k: expected input `x` and outputs `y`, `idx`");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    const hb_tensor& idx = idx_arg->tensors[0];
    const size_t bytes = element_bytes(x.dtype);
    if (bytes == 0 || y.dtype != x.dtype || idx.dtype != HB_INT64) return hb_fail(call, 2, "top_k: unsupported dtypes");
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&y) || !hb_is_contiguous(&idx))
        return hb_fail(call, 3, "top_k: only contiguous tensors are supported");
    int64_t dim = hb_attr_int(call, "dim", -1);
    if (dim < 0) dim += x.rank;
    if (dim < 0 || dim >= x.rank) return hb_fail(call, 2, "top_k: dim out of range");
    const int64_t k = hb_attr_int(call, "k", 1);
    const bool largest = hb_attr_int(call, "largest", 1) != 0;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < dim; ++d) outer *= x.shape[d];
    for (int d = static_cast<int>(dim) + 1; d < x.rank; ++d) inner *= x.shape[d];
    const int64_t size = x.shape[dim];
    if (k < 1 || k > size || y.shape[dim] != k) return hb_fail(call, 2, "top_k: k must be in [1, size along dim] and match y");

    const auto* src = static_cast<const char*>(x.data);
    auto* dst = static_cast<char*>(y.data);
    auto* out_idx = static_cast<int64_t*>(idx.data);
#pragma omp parallel
    {
        std::vector<std::pair<uint64_t, int64_t>> line(static_cast<size_t>(size));
#pragma omp for schedule(dynamic)
        for (int64_t s = 0; s < outer * inner; ++s) {
            const int64_t o = s / inner, i = s % inner;
            for (int64_t j = 0; j < size; ++j) line[j] = {key_of(x.data, (o * size + j) * inner + i, x.dtype), j};
            // The k best to the front (nth_element), then those k sorted.
            auto better = [largest](const std::pair<uint64_t, int64_t>& a, const std::pair<uint64_t, int64_t>& b) {
                return largest ? a.first > b.first : a.first < b.first;
            };
            std::nth_element(line.begin(), line.begin() + (k - 1), line.end(), better);
            std::sort(line.begin(), line.begin() + k, better);
            for (int64_t r = 0; r < k; ++r) {
                const int64_t at = (o * k + r) * inner + i;
                std::memcpy(dst + at * bytes, src + ((o * size + line[r].second) * inner + i) * bytes, bytes);
                out_idx[at] = line[r].second;
            }
        }
    }
    return 0;
}
