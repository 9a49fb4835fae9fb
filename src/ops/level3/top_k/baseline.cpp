// Baseline for top_k: plain threaded C++ as PyTorch's CPU topk runs (oneDNN has no top-k or
// sort primitive): every element as an unsigned key ordering values as the operator does
// (NaN above +inf), each slice gathered into a buffer (strided slices too) and partially
// sorted; slices spread over the OpenMP threads. When there are fewer slices than threads, a
// slice is cut into pieces whose top k are found in parallel and merged, so one long line
// still uses every core.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "ops/baseline_support.hpp"

using std::int64_t;
using std::uint64_t;
using std::uint16_t;
using std::int8_t;
using std::uint8_t;
using std::int32_t;
using std::size_t;

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

using Keyed = std::pair<uint64_t, int64_t>;

// Orders by rank: larger key first (largest) or smaller first; ties by position.
struct Ranked {
    bool largest;
    bool operator()(const Keyed& a, const Keyed& b) const {
        if (a.first != b.first) return largest ? a.first > b.first : a.first < b.first;
        return a.second < b.second;
    }
};

// The top k of `line` into its first k entries, sorted.
void select_top(std::vector<Keyed>& line, int64_t k, Ranked ranked) {
    std::nth_element(line.begin(), line.begin() + (k - 1), line.end(), ranked);
    std::sort(line.begin(), line.begin() + k, ranked);
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
        return hb_fail(call, 3, "top_k: the baseline needs contiguous tensors");
    int64_t dim = hb_attr_int(call, "dim", -1);
    if (dim < 0) dim += x.rank;
    if (dim < 0 || dim >= x.rank) return hb_fail(call, 2, "top_k: dim out of range");
    const int64_t k = hb_attr_int(call, "k", 1);
    const Ranked ranked{hb_attr_int(call, "largest", 1) != 0};
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < dim; ++d) outer *= x.shape[d];
    for (int d = static_cast<int>(dim) + 1; d < x.rank; ++d) inner *= x.shape[d];
    const int64_t size = x.shape[dim], slices = outer * inner;
    if (k < 1 || k > size || y.shape[dim] != k) return hb_fail(call, 2, "top_k: k must be in [1, size along dim] and match y");

    const auto* src = static_cast<const char*>(x.data);
    auto* dst = static_cast<char*>(y.data);
    auto* out_idx = static_cast<int64_t*>(idx.data);
    auto emit = [&](int64_t o, int64_t i, const std::vector<Keyed>& line) {
        for (int64_t r = 0; r < k; ++r) {
            const int64_t at = (o * k + r) * inner + i;
            std::memcpy(dst + at * bytes, src + ((o * size + line[r].second) * inner + i) * bytes, bytes);
            out_idx[at] = line[r].second;
        }
    };
    const int threads = omp_get_max_threads();
    if (slices >= threads || size < 4 * k * threads) {
#pragma omp parallel
        {
            std::vector<Keyed> line(static_cast<size_t>(size));
#pragma omp for schedule(dynamic)
            for (int64_t s = 0; s < slices; ++s) {
                const int64_t o = s / inner, i = s % inner;
                line.resize(static_cast<size_t>(size));
                for (int64_t j = 0; j < size; ++j) line[j] = {key_of(x.data, (o * size + j) * inner + i, x.dtype), j};
                select_top(line, k, ranked);
                emit(o, i, line);
            }
        }
        return 0;
    }
    // Few long slices: pieces of each slice in parallel, then the pieces' winners merged.
    std::vector<std::vector<Keyed>> pieces(static_cast<size_t>(threads));
    std::vector<Keyed> merged;
    for (int64_t s = 0; s < slices; ++s) {
        const int64_t o = s / inner, i = s % inner;
        for (auto& piece : pieces) piece.clear();  // a team smaller than asked leaves some unused
#pragma omp parallel num_threads(threads)
        {
            const int t = omp_get_thread_num(), count = omp_get_num_threads();
            const int64_t begin = size * t / count, end = size * (t + 1) / count;
            auto& piece = pieces[static_cast<size_t>(t)];
            for (int64_t j = begin; j < end; ++j) piece.push_back({key_of(x.data, (o * size + j) * inner + i, x.dtype), j});
            if (static_cast<int64_t>(piece.size()) > k) {
                select_top(piece, k, ranked);
                piece.resize(static_cast<size_t>(k));
            }
        }
        merged.clear();
        for (const auto& piece : pieces) merged.insert(merged.end(), piece.begin(), piece.end());
        select_top(merged, k, ranked);
        emit(o, i, merged);
    }
    return 0;
}
