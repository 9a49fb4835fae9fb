// Baseline for arg_max: the int64 index of the first maximum of each slice along dim (a NaN
// is the maximum, its first occurrence wins), as torch.argmax on the CPU.
// Plain OpenMP C++ for every dtype: oneDNN's reduction primitive returns values only (no
// index output), so there is no vendor arg-max to call; this is the loop a framework runs.
// The input is seen as [outer, size, inner] around dim:
//   inner == 1: each line is contiguous; lines go to threads, or, when there are fewer lines
//     than threads, each line is cut into chunks whose (value, index) results merge in chunk
//     order with the same rule, which keeps the first maximum.
//   inner > 1: blocks of the inner dimension go to threads; each keeps running maxima for
//     its block and walks the size rows, so the compares vectorize across inner.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;

// torch's rule: NaN beats everything and the first NaN stays; otherwise strictly greater.
// For integers the NaN tests fold away.
template <typename Key>
inline bool replaces(Key candidate, Key best) {
    return !(best != best) && (candidate > best || candidate != candidate);
}

template <typename Element>
void arg_max_lines(const Element* x, std::int64_t* out, std::int64_t outer, std::int64_t size, std::int64_t inner) {
    using Key = decltype(compare_key(Element{}));
    const int threads = omp_get_max_threads();
    if (inner == 1) {
        if (outer >= threads) {
#pragma omp parallel for schedule(static)
            for (std::int64_t o = 0; o < outer; ++o) {
                const Element* line = x + o * size;
                Key best = compare_key(line[0]);
                std::int64_t best_k = 0;
                for (std::int64_t k = 1; k < size; ++k) {
                    const Key v = compare_key(line[k]);
                    if (replaces(v, best)) {
                        best = v;
                        best_k = k;
                    }
                }
                out[o] = best_k;
            }
            return;
        }
        // Few long lines: chunks per thread, merged in order.
        for (std::int64_t o = 0; o < outer; ++o) {
            const Element* line = x + o * size;
            const std::int64_t chunks = std::min<std::int64_t>(threads, size);
            std::vector<Key> chunk_best(static_cast<std::size_t>(chunks));
            std::vector<std::int64_t> chunk_index(static_cast<std::size_t>(chunks));
#pragma omp parallel for schedule(static)
            for (std::int64_t c = 0; c < chunks; ++c) {
                const std::int64_t begin = size * c / chunks, end = size * (c + 1) / chunks;
                Key best = compare_key(line[begin]);
                std::int64_t best_k = begin;
                for (std::int64_t k = begin + 1; k < end; ++k) {
                    const Key v = compare_key(line[k]);
                    if (replaces(v, best)) {
                        best = v;
                        best_k = k;
                    }
                }
                chunk_best[static_cast<std::size_t>(c)] = best;
                chunk_index[static_cast<std::size_t>(c)] = best_k;
            }
            Key best = chunk_best[0];
            std::int64_t best_k = chunk_index[0];
            for (std::int64_t c = 1; c < chunks; ++c)
                if (replaces(chunk_best[static_cast<std::size_t>(c)], best)) {
                    best = chunk_best[static_cast<std::size_t>(c)];
                    best_k = chunk_index[static_cast<std::size_t>(c)];
                }
            out[o] = best_k;
        }
        return;
    }
    constexpr std::int64_t block = 256;
    const std::int64_t blocks_per_outer = (inner + block - 1) / block;
#pragma omp parallel for schedule(static)
    for (std::int64_t task = 0; task < outer * blocks_per_outer; ++task) {
        const std::int64_t o = task / blocks_per_outer;
        const std::int64_t i0 = task % blocks_per_outer * block;
        const std::int64_t width = std::min(block, inner - i0);
        Key best[block];
        std::int64_t best_k[block];
        const Element* base = x + o * size * inner + i0;
        for (std::int64_t i = 0; i < width; ++i) {
            best[i] = compare_key(base[i]);
            best_k[i] = 0;
        }
        for (std::int64_t k = 1; k < size; ++k) {
            const Element* row = base + k * inner;
#pragma omp simd
            for (std::int64_t i = 0; i < width; ++i) {
                const Key v = compare_key(row[i]);
                const bool take = replaces(v, best[i]);
                best[i] = take ? v : best[i];
                best_k[i] = take ? k : best_k[i];
            }
        }
        std::int64_t* dst = out + o * inner + i0;
        for (std::int64_t i = 0; i < width; ++i) dst[i] = best_k[i];
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* in = hb_input(call, "input");
    hb_arg* out = hb_output(call, "indices");
    if (!in || !out || in->count != 1 || out->count != 1)
        return hb_fail(call, 1, "arg_max: expected input `input` and output `indices`");
    const hb_tensor& x = in->tensors[0];
    const hb_tensor& y = out->tensors[0];
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&y))
        return hb_fail(call, 1, "arg_max: the baseline needs contiguous tensors");
    if (y.dtype != HB_INT64) return hb_fail(call, 2, "arg_max: the output must be int64");
    std::int64_t dim = hb_attr_int(call, "dim", 0);
    const std::int64_t rank = std::max<std::int64_t>(1, x.rank);
    if (dim < 0) dim += rank;
    if (dim < 0 || dim >= rank) return hb_fail(call, 2, "arg_max: dim is out of range");
    std::int64_t outer = 1, size = 1, inner = 1;
    for (std::int64_t d = 0; d < x.rank; ++d) {
        if (d < dim) outer *= x.shape[d];
        else if (d == dim) size = x.shape[d];
        else inner *= x.shape[d];
    }
    if (size == 0) return hb_fail(call, 2, "arg_max: the reduced dimension is empty");
    if (hb_numel(&y) != outer * inner) return hb_fail(call, 2, "arg_max: the output has the wrong size");
    auto* dst = static_cast<std::int64_t*>(y.data);
    return guarded(call, [&] {
        switch (x.dtype) {
            case HB_FLOAT32: arg_max_lines(static_cast<const float*>(x.data), dst, outer, size, inner); return 0;
            case HB_FLOAT16: arg_max_lines(static_cast<const Half*>(x.data), dst, outer, size, inner); return 0;
            case HB_BFLOAT16: arg_max_lines(static_cast<const BFloat16*>(x.data), dst, outer, size, inner); return 0;
            case HB_INT32: arg_max_lines(static_cast<const std::int32_t*>(x.data), dst, outer, size, inner); return 0;
            case HB_INT64: arg_max_lines(static_cast<const std::int64_t*>(x.data), dst, outer, size, inner); return 0;
            default: return hb_fail(call, 2, "arg_max: unsupported dtype (float16, bfloat16, float32, int32, int64)");
        }
    });
}
