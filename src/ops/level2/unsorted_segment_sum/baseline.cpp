// Baseline for unsorted_segment_sum: y[s, :] = sum of data[j, :] over rows with
// segment_ids[j] == s, zeros for empty segments. Plain C++ with OpenMP: oneDNN has no
// scatter-add or segment reduction. Three schedules, the ones a framework's CPU index_add
// uses, picked by the shape:
//   long rows (>= 512 elements): each thread owns a slice of the trailing dims and walks
//     every row, so no two threads touch the same output element and data is read once;
//   short rows, small y: each thread sums a block of rows into private partial outputs
//     in the workspace, then the partials are added up in parallel over y;
//   short rows, large y (the partials would not fit the cache budget): each thread owns a
//     range of segments and scans all ids, adding only its rows.
// fp16/bf16 accumulate in fp32 and round once; int32/int64 accumulate in their own width
// with two's-complement wrap-around (unsigned arithmetic, so the wrap is defined).
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;

constexpr std::int64_t kLongRow = 512;
// Private partials stay within this many bytes per thread (a framework bounds its scratch
// the same way; beyond it the segment-range schedule reads the ids once per thread instead).
constexpr std::int64_t kPartialBytesPerThread = 8 << 20;

// Accumulator of an element type: fp32 for the float types, the unsigned integer of the
// same width for integers.
template <typename Element>
struct Acc {
    using type = float;
    static float load(Element v) { return to_f32(v); }
    static Element store(float v) { return from_f32<Element>(v); }
};
template <>
struct Acc<std::int32_t> {
    using type = std::uint32_t;
    static std::uint32_t load(std::int32_t v) { return static_cast<std::uint32_t>(v); }
    static std::int32_t store(std::uint32_t v) { return static_cast<std::int32_t>(v); }
};
template <>
struct Acc<std::int64_t> {
    using type = std::uint64_t;
    static std::uint64_t load(std::int64_t v) { return static_cast<std::uint64_t>(v); }
    static std::int64_t store(std::uint64_t v) { return static_cast<std::int64_t>(v); }
};

struct Shape2 {
    std::int64_t rows = 0, len = 1, segments = 0;
};

enum class Schedule { columns, partials, segment_ranges };

Schedule schedule_for(const Shape2& s, std::size_t acc_bytes) {
    if (s.len >= kLongRow) return Schedule::columns;
    if (s.segments * s.len * static_cast<std::int64_t>(acc_bytes) <= kPartialBytesPerThread) return Schedule::partials;
    return Schedule::segment_ranges;
}

// fp32 accumulators for y when the element type is narrower than its accumulator.
template <typename Element>
constexpr bool needs_acc_buffer() {
    return sizeof(typename Acc<Element>::type) != sizeof(Element);
}

template <typename Element>
std::uint64_t workspace_for(const Shape2& s, int threads) {
    using A = typename Acc<Element>::type;
    const std::uint64_t y_elems = static_cast<std::uint64_t>(s.segments * s.len);
    switch (schedule_for(s, sizeof(A))) {
        case Schedule::partials: return static_cast<std::uint64_t>(threads) * y_elems * sizeof(A);
        default: return needs_acc_buffer<Element>() ? y_elems * sizeof(A) : 0;
    }
}

template <typename Element, typename Id>
void segment_sum(const Element* data, const Id* ids, Element* y, const Shape2& s, void* workspace, int threads) {
    using A = typename Acc<Element>::type;
    const std::int64_t y_elems = s.segments * s.len;
    auto valid = [&](std::int64_t id) { return id >= 0 && id < s.segments; };
    const Schedule schedule = schedule_for(s, sizeof(A));
    if (schedule == Schedule::partials) {
        auto* partial = static_cast<A*>(workspace);
#pragma omp parallel num_threads(threads)
        {
            const int t = omp_get_thread_num(), nt = omp_get_num_threads();
            A* mine = partial + static_cast<std::int64_t>(t) * y_elems;
            std::memset(static_cast<void*>(mine), 0, static_cast<std::size_t>(y_elems) * sizeof(A));
            const std::int64_t r0 = s.rows * t / nt, r1 = s.rows * (t + 1) / nt;
            for (std::int64_t j = r0; j < r1; ++j) {
                const std::int64_t id = static_cast<std::int64_t>(ids[j]);
                if (!valid(id)) continue;
                const Element* src = data + j * s.len;
                A* dst = mine + id * s.len;
#pragma omp simd
                for (std::int64_t k = 0; k < s.len; ++k) dst[k] += Acc<Element>::load(src[k]);
            }
#pragma omp barrier
#pragma omp for schedule(static)
            for (std::int64_t i = 0; i < y_elems; ++i) {
                A sum = partial[i];
                for (int u = 1; u < nt; ++u) sum += partial[static_cast<std::int64_t>(u) * y_elems + i];
                y[i] = Acc<Element>::store(sum);
            }
        }
        return;
    }
    // Accumulate in y itself when the accumulator has the element's width.
    A* acc = needs_acc_buffer<Element>() ? static_cast<A*>(workspace) : reinterpret_cast<A*>(y);
    if (schedule == Schedule::columns) {
#pragma omp parallel num_threads(threads)
        {
            const int t = omp_get_thread_num(), nt = omp_get_num_threads();
            // Column slices rounded to 16 elements, so threads do not share cache lines.
            const std::int64_t blocks = (s.len + 15) / 16;
            const std::int64_t k0 = std::min(s.len, blocks * t / nt * 16);
            const std::int64_t k1 = std::min(s.len, blocks * (t + 1) / nt * 16);
            for (std::int64_t seg = 0; seg < s.segments; ++seg)
                std::fill(acc + seg * s.len + k0, acc + seg * s.len + k1, A(0));
            for (std::int64_t j = 0; j < s.rows; ++j) {
                const std::int64_t id = static_cast<std::int64_t>(ids[j]);
                if (!valid(id)) continue;
                const Element* src = data + j * s.len;
                A* dst = acc + id * s.len;
#pragma omp simd
                for (std::int64_t k = k0; k < k1; ++k) dst[k] += Acc<Element>::load(src[k]);
            }
            if constexpr (needs_acc_buffer<Element>())
                for (std::int64_t seg = 0; seg < s.segments; ++seg)
                    for (std::int64_t k = k0; k < k1; ++k)
                        y[seg * s.len + k] = Acc<Element>::store(acc[seg * s.len + k]);
        }
        return;
    }
    // Segment ranges: thread t owns segments [s0, s1) and adds the rows that name them.
#pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        const std::int64_t s0 = s.segments * t / nt, s1 = s.segments * (t + 1) / nt;
        std::fill(acc + s0 * s.len, acc + s1 * s.len, A(0));
        for (std::int64_t j = 0; j < s.rows; ++j) {
            const std::int64_t id = static_cast<std::int64_t>(ids[j]);
            if (id < s0 || id >= s1) continue;
            const Element* src = data + j * s.len;
            A* dst = acc + id * s.len;
            for (std::int64_t k = 0; k < s.len; ++k) dst[k] += Acc<Element>::load(src[k]);
        }
        if constexpr (needs_acc_buffer<Element>())
            for (std::int64_t i = s0 * s.len; i < s1 * s.len; ++i) y[i] = Acc<Element>::store(acc[i]);
    }
}

// Calls body(Element{}) for the data dtype; false for an unsupported one.
template <typename Body>
bool with_element(hb_dtype t, Body&& body) {
    switch (t) {
        case HB_INT32: body(std::int32_t{}); return true;
        case HB_INT64: body(std::int64_t{}); return true;
        default: return with_float_element(t, body);
    }
}

// Empty on success, else a message for hb_fail.
std::string views(const hb_call* call, const hb_tensor*& data, const hb_tensor*& ids, const hb_tensor*& y,
                  Shape2& s) {
    const hb_arg* data_arg = hb_input(call, "data");
    const hb_arg* ids_arg = hb_input(call, "segment_ids");
    const hb_arg* y_arg = hb_output(call, "y");
    if (!data_arg || !ids_arg || !y_arg || data_arg->count != 1 || ids_arg->count != 1 || y_arg->count != 1)
        return "expected inputs data, segment_ids and output y";
    data = &data_arg->tensors[0];
    ids = &ids_arg->tensors[0];
    y = &y_arg->tensors[0];
    if (!hb_is_contiguous(data) || !hb_is_contiguous(ids) || !hb_is_contiguous(y))
        return "only contiguous tensors are supported";
    if (data->rank < 1 || ids->rank != 1 || ids->shape[0] != data->shape[0])
        return "segment_ids must be 1-D with one id per row of data";
    if (ids->dtype != HB_INT32 && ids->dtype != HB_INT64) return "segment_ids must be int32 or int64";
    if (y->dtype != data->dtype || y->rank != data->rank) return "y must have data's dtype and rank";
    s.rows = data->shape[0];
    s.len = 1;
    for (int d = 1; d < data->rank; ++d) {
        if (y->shape[d] != data->shape[d]) return "y must have data's trailing dims";
        s.len *= data->shape[d];
    }
    s.segments = y->shape[0];
    if (s.segments != hb_attr_int(call, "num_segments", -1)) return "y's first dim must be num_segments";
    return {};
}

}  // namespace

extern "C" HB_EXPORT std::uint64_t hapbench_workspace_bytes(const hb_call* call) {
    const hb_tensor *data = nullptr, *ids = nullptr, *y = nullptr;
    Shape2 s;
    if (!views(call, data, ids, y, s).empty()) return 0;  // the kernel reports errors
    std::uint64_t bytes = 0;
    with_element(data->dtype, [&](auto element) { bytes = workspace_for<decltype(element)>(s, omp_get_max_threads()); });
    return bytes;
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_tensor *data = nullptr, *ids = nullptr, *y = nullptr;
    Shape2 s;
    if (const std::string error = views(call, data, ids, y, s); !error.empty())
        return hb_fail(call, 2, ("unsorted_segment_sum: " + error).c_str());
    const int threads = omp_get_max_threads();
    int status = 0;
    const bool known = with_element(data->dtype, [&](auto element) {
        using Element = decltype(element);
        if (call->workspace_bytes < workspace_for<Element>(s, threads)) {
            status = hb_fail(call, 4, "unsorted_segment_sum: the workspace is smaller than hapbench_workspace_bytes asked");
            return;
        }
        const auto* d = static_cast<const Element*>(data->data);
        auto* out = static_cast<Element*>(y->data);
        if (ids->dtype == HB_INT32)
            segment_sum(d, static_cast<const std::int32_t*>(ids->data), out, s, call->workspace, threads);
        else
            segment_sum(d, static_cast<const std::int64_t*>(ids->data), out, s, call->workspace, threads);
    });
    if (!known) return hb_fail(call, 2, "unsorted_segment_sum: unsupported data dtype");
    return status;
}
