// Baseline for cummin: running minimum and its int64 index along dim, as torch.cummin on the
// CPU (x[k] replaces the minimum when it is NaN, or when the minimum is not NaN and
// x[k] <= minimum: ties move the index to the last occurrence, NaN propagates).
// Plain OpenMP C++ for every dtype: oneDNN has no scan primitive. The input is seen as
// [outer, size, inner] around dim:
//   inner == 1, many lines: each contiguous line is scanned by one thread.
//   inner == 1, fewer lines than threads: each line is cut into chunks; pass 1 reduces each
//     chunk to the state a scan of it alone ends in, these states are combined in order into
//     the carry entering each chunk, and pass 2 rescans every chunk from its carry.
//   inner > 1: blocks of the inner dimension go to threads and walk the size rows, keeping a
//     running minimum per column, so the compares vectorize across inner.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;

template <typename Key>
inline bool replaces(Key candidate, Key minimum) {
    return candidate != candidate || (!(minimum != minimum) && candidate <= minimum);
}

template <typename Element>
struct ScanState {
    Element value;  // stored as the element, so that the output copies it bit for bit
    std::int64_t index;
};

// Scans x[begin, end) of a contiguous line from `state` (index -1: nothing seen yet).
template <typename Element, bool Write>
ScanState<Element> scan_range(const Element* x, Element* values, std::int64_t* indices, std::int64_t begin,
                              std::int64_t end, ScanState<Element> state) {
    for (std::int64_t k = begin; k < end; ++k) {
        if (state.index < 0 || replaces(compare_key(x[k]), compare_key(state.value))) state = {x[k], k};
        if constexpr (Write) {
            values[k] = state.value;
            indices[k] = state.index;
        }
    }
    return state;
}

template <typename Element>
void cummin_lines(const Element* x, Element* values, std::int64_t* indices, std::int64_t outer, std::int64_t size,
                  std::int64_t inner) {
    const int threads = omp_get_max_threads();
    if (inner == 1 && outer >= threads) {
#pragma omp parallel for schedule(static)
        for (std::int64_t o = 0; o < outer; ++o)
            scan_range<Element, true>(x + o * size, values + o * size, indices + o * size, 0, size, {Element{}, -1});
        return;
    }
    if (inner == 1) {
        const std::int64_t chunks = std::max<std::int64_t>(1, std::min<std::int64_t>(threads, size / 4096));
        std::vector<ScanState<Element>> carry(static_cast<std::size_t>(chunks));
        for (std::int64_t o = 0; o < outer; ++o) {
            const Element* line = x + o * size;
            Element* line_values = values + o * size;
            std::int64_t* line_indices = indices + o * size;
#pragma omp parallel for schedule(static)
            for (std::int64_t c = 0; c < chunks; ++c)
                carry[static_cast<std::size_t>(c)] = scan_range<Element, false>(
                    line, nullptr, nullptr, size * c / chunks, size * (c + 1) / chunks, {Element{}, -1});
            // Chunk c's carry becomes the state entering chunk c + 1 (combined in order: a chunk
            // state replaces the carry by the same rule, and as its index is the last occurrence
            // of its minimum within the chunk, ties still land on the last occurrence).
            ScanState<Element> entering{Element{}, -1};
            for (std::int64_t c = 0; c < chunks; ++c) {
                const ScanState<Element> chunk = carry[static_cast<std::size_t>(c)];
                carry[static_cast<std::size_t>(c)] = entering;
                if (entering.index < 0 || replaces(compare_key(chunk.value), compare_key(entering.value))) entering = chunk;
            }
#pragma omp parallel for schedule(static)
            for (std::int64_t c = 0; c < chunks; ++c)
                scan_range<Element, true>(line, line_values, line_indices, size * c / chunks, size * (c + 1) / chunks,
                                          carry[static_cast<std::size_t>(c)]);
        }
        return;
    }
    using Key = decltype(compare_key(Element{}));
    constexpr std::int64_t block = 256;
    const std::int64_t blocks_per_outer = (inner + block - 1) / block;
#pragma omp parallel for schedule(static)
    for (std::int64_t task = 0; task < outer * blocks_per_outer; ++task) {
        const std::int64_t o = task / blocks_per_outer;
        const std::int64_t i0 = task % blocks_per_outer * block;
        const std::int64_t width = std::min(block, inner - i0);
        Key minimum[block];
        Element stored[block];
        std::int64_t index[block];
        const std::int64_t base = o * size * inner + i0;
        for (std::int64_t k = 0; k < size; ++k) {
            const std::int64_t row = base + k * inner;
            if (k == 0) {
                for (std::int64_t i = 0; i < width; ++i) {
                    minimum[i] = compare_key(x[row + i]);
                    stored[i] = x[row + i];
                    index[i] = 0;
                }
            } else {
                for (std::int64_t i = 0; i < width; ++i) {
                    const Key v = compare_key(x[row + i]);
                    if (replaces(v, minimum[i])) {
                        minimum[i] = v;
                        stored[i] = x[row + i];
                        index[i] = k;
                    }
                }
            }
            for (std::int64_t i = 0; i < width; ++i) {
                values[row + i] = stored[i];
                indices[row + i] = index[i];
            }
        }
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* in = hb_input(call, "input");
    hb_arg* values_arg = hb_output(call, "values");
    hb_arg* indices_arg = hb_output(call, "indices");
    if (!in || !values_arg || !indices_arg || in->count != 1 || values_arg->count != 1 || indices_arg->count != 1)
        return hb_fail(call, 1, "cummin: expected input `input` and outputs `values`, `indices`");
    const hb_tensor& x = in->tensors[0];
    const hb_tensor& values = values_arg->tensors[0];
    const hb_tensor& indices = indices_arg->tensors[0];
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&values) || !hb_is_contiguous(&indices))
        return hb_fail(call, 1, "cummin: the baseline needs contiguous tensors");
    if (values.dtype != x.dtype || indices.dtype != HB_INT64 || hb_numel(&values) != hb_numel(&x) ||
        hb_numel(&indices) != hb_numel(&x))
        return hb_fail(call, 2, "cummin: values must have the input's dtype and size, indices int64 of its size");
    std::int64_t dim = hb_attr_int(call, "dim", 0);
    const std::int64_t rank = std::max<std::int64_t>(1, x.rank);
    if (dim < 0) dim += rank;
    if (dim < 0 || dim >= rank) return hb_fail(call, 2, "cummin: dim is out of range");
    std::int64_t outer = 1, size = 1, inner = 1;
    for (std::int64_t d = 0; d < x.rank; ++d) {
        if (d < dim) outer *= x.shape[d];
        else if (d == dim) size = x.shape[d];
        else inner *= x.shape[d];
    }
    if (size == 0 || outer * inner == 0) return 0;
    auto* idx = static_cast<std::int64_t*>(indices.data);
    return guarded(call, [&] {
        switch (x.dtype) {
            case HB_FLOAT32:
                cummin_lines(static_cast<const float*>(x.data), static_cast<float*>(values.data), idx, outer, size, inner);
                return 0;
            case HB_FLOAT16:
                cummin_lines(static_cast<const Half*>(x.data), static_cast<Half*>(values.data), idx, outer, size, inner);
                return 0;
            case HB_BFLOAT16:
                cummin_lines(static_cast<const BFloat16*>(x.data), static_cast<BFloat16*>(values.data), idx, outer, size,
                             inner);
                return 0;
            case HB_INT32:
                cummin_lines(static_cast<const std::int32_t*>(x.data), static_cast<std::int32_t*>(values.data), idx, outer,
                             size, inner);
                return 0;
            default: return hb_fail(call, 2, "cummin: unsupported dtype (float16, bfloat16, float32, int32)");
        }
    });
}
