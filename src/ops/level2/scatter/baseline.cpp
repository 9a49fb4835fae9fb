// Baseline for scatter: y = copy of data, then indices/updates applied along dim with reduce
// None/update (assign), add, multiply, amin, amax (NaN propagates), as torch scatter /
// scatter_reduce(include_self=True).
// Plain OpenMP C++ for every dtype: oneDNN has no scatter primitive. Races: every line of
// indices along dim (all coordinates but dim fixed) writes only into the matching line of y,
// so lines spread over threads without atomics, and within a line the contributions apply in
// index order (the order of the same-precision reference). float16/bfloat16 add/multiply
// accumulate in an fp32 copy of y in the workspace and round once at the end; integers wrap.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;

enum class Reduce { update, add, multiply, amin, amax, unknown };

Reduce reduce_of(const hb_call* call) {
    const hb_attr* a = hb_attr_find(call, "reduce");
    if (!a || a->type == HB_ATTR_NONE) return Reduce::update;
    if (a->type != HB_ATTR_STRING) return Reduce::unknown;
    const std::string s = a->s;
    if (s == "update") return Reduce::update;
    if (s == "add") return Reduce::add;
    if (s == "multiply") return Reduce::multiply;
    if (s == "amin") return Reduce::amin;
    if (s == "amax") return Reduce::amax;
    return Reduce::unknown;
}

// Where the lines of indices sit in data, indices and updates.
struct LineGeometry {
    int rank = 0, axis = 0;
    std::int64_t index_shape[HB_MAX_RANK];
    std::int64_t data_strides[HB_MAX_RANK], index_strides[HB_MAX_RANK], update_strides[HB_MAX_RANK];
    std::int64_t per_line = 1, lines = 0;
};

void row_major_strides(const hb_tensor& t, std::int64_t* strides) {
    std::int64_t stride = 1;
    for (int d = t.rank - 1; d >= 0; --d) {
        strides[d] = stride;
        stride *= t.shape[d];
    }
}

// Float arithmetic on loaded values; integer add/multiply wrap through unsigned arithmetic.
template <typename V>
inline V add(V a, V b) {
    if constexpr (std::is_integral_v<V>) return static_cast<V>(static_cast<std::make_unsigned_t<V>>(a) + static_cast<std::make_unsigned_t<V>>(b));
    else return a + b;
}
template <typename V>
inline V multiply(V a, V b) {
    if constexpr (std::is_integral_v<V>) return static_cast<V>(static_cast<std::make_unsigned_t<V>>(a) * static_cast<std::make_unsigned_t<V>>(b));
    else return a * b;
}
template <typename V>
inline V nan_min(V a, V b) { return a != a ? a : b != b ? b : (b < a ? b : a); }
template <typename V>
inline V nan_max(V a, V b) { return a != a ? a : b != b ? b : (b > a ? b : a); }

// Applies every line: target element type Target (loaded and stored through Load/Store), the
// updates as Element. Target == Element except for the fp32 accumulation copy.
template <typename Target, typename Element, typename Value, typename Load, typename Store>
void scatter_lines(const LineGeometry& g, Target* y, const void* indices, hb_dtype index_dtype, const Element* updates,
                   Reduce reduce, Load load, Store store) {
#pragma omp parallel for schedule(static)
    for (std::int64_t line = 0; line < g.lines; ++line) {
        std::int64_t rest = line, data_base = 0, index_base = 0, update_base = 0;
        for (int d = g.rank - 1; d >= 0; --d) {
            if (d == g.axis) continue;
            const std::int64_t coordinate = rest % g.index_shape[d];
            rest /= g.index_shape[d];
            data_base += coordinate * g.data_strides[d];
            index_base += coordinate * g.index_strides[d];
            update_base += coordinate * g.update_strides[d];
        }
        const std::int64_t index_step = g.rank ? g.index_strides[g.axis] : 1;
        const std::int64_t update_step = g.rank ? g.update_strides[g.axis] : 1;
        const std::int64_t data_step = g.rank ? g.data_strides[g.axis] : 1;
        for (std::int64_t k = 0; k < g.per_line; ++k) {
            const std::int64_t j = index_base + k * index_step;
            const std::int64_t position = index_dtype == HB_INT32 ? static_cast<const std::int32_t*>(indices)[j]
                                                                  : static_cast<const std::int64_t*>(indices)[j];
            Target& target = y[data_base + position * data_step];
            const Element& update = updates[update_base + k * update_step];
            if constexpr (!std::is_arithmetic_v<Value>) {
                target = store(load(update));  // assignment of the bits, no arithmetic type
            } else {
                switch (reduce) {
                    case Reduce::update: target = store(load(update)); break;
                    case Reduce::add: target = store(add<Value>(load(target), load(update))); break;
                    case Reduce::multiply: target = store(multiply<Value>(load(target), load(update))); break;
                    case Reduce::amin: target = store(nan_min<Value>(load(target), load(update))); break;
                    case Reduce::amax: target = store(nan_max<Value>(load(target), load(update))); break;
                    case Reduce::unknown: break;
                }
            }
        }
    }
}

inline float load_value(float v) { return v; }
inline float load_value(Half v) { return to_f32(v); }
inline float load_value(BFloat16 v) { return to_f32(v); }
inline std::int32_t load_value(std::int32_t v) { return v; }
inline std::int64_t load_value(std::int64_t v) { return v; }

bool accumulates_in_f32(hb_dtype t, Reduce reduce) {
    return (t == HB_FLOAT16 || t == HB_BFLOAT16) && (reduce == Reduce::add || reduce == Reduce::multiply);
}

template <typename Element>
void run_scatter(const LineGeometry& g, const hb_tensor& data, const hb_tensor& indices, const hb_tensor& updates,
                 const hb_tensor& y, Reduce reduce, float* workspace) {
    const std::int64_t n = hb_numel(&data);
    auto* out = static_cast<Element*>(y.data);
    const auto* upd = static_cast<const Element*>(updates.data);
    if constexpr (std::is_same_v<Element, Half> || std::is_same_v<Element, BFloat16>) {
        if (accumulates_in_f32(data.dtype, reduce)) {
            const auto* src = static_cast<const Element*>(data.data);
#pragma omp parallel for simd schedule(static)
            for (std::int64_t k = 0; k < n; ++k) workspace[k] = to_f32(src[k]);
            scatter_lines<float, Element, float>(g, workspace, indices.data, indices.dtype, upd, reduce,
                                                 [](auto v) { return load_value(v); }, [](float v) { return v; });
#pragma omp parallel for simd schedule(static)
            for (std::int64_t k = 0; k < n; ++k) out[k] = from_f32<Element>(workspace[k]);
            return;
        }
    }
    const auto* src = static_cast<const unsigned char*>(data.data);
    auto* dst = reinterpret_cast<unsigned char*>(out);
    const std::int64_t bytes = n * static_cast<std::int64_t>(sizeof(Element));
    constexpr std::int64_t chunk = 1 << 16;
#pragma omp parallel for schedule(static)
    for (std::int64_t begin = 0; begin < bytes; begin += chunk)
        std::memcpy(dst + begin, src + begin, static_cast<std::size_t>(std::min(chunk, bytes - begin)));
    using Value = decltype(load_value(Element{}));
    if (reduce == Reduce::update) {
        // Assignment copies the update's bits.
        scatter_lines<Element, Element, Element>(g, out, indices.data, indices.dtype, upd, reduce,
                                                 [](Element v) { return v; }, [](Element v) { return v; });
        return;
    }
    scatter_lines<Element, Element, Value>(g, out, indices.data, indices.dtype, upd, reduce,
                                           [](Element v) { return load_value(v); },
                                           [](Value v) {
                                               if constexpr (std::is_same_v<Element, Half> || std::is_same_v<Element, BFloat16>)
                                                   return from_f32<Element>(v);
                                               else
                                                   return static_cast<Element>(v);
                                           });
}

// Empty on success, else a message for hb_fail.
std::string geometry(const hb_call* call, LineGeometry& g, const hb_tensor*& data, const hb_tensor*& indices,
                     const hb_tensor*& updates, const hb_tensor*& y) {
    const hb_arg* data_arg = hb_input(call, "data");
    const hb_arg* indices_arg = hb_input(call, "indices");
    const hb_arg* updates_arg = hb_input(call, "updates");
    hb_arg* y_arg = hb_output(call, "y");
    if (!data_arg || !indices_arg || !updates_arg || !y_arg || data_arg->count != 1 || indices_arg->count != 1 ||
        updates_arg->count != 1 || y_arg->count != 1)
        return "scatter: expected inputs `data`, `indices`, `updates` and output `y`";
    data = &data_arg->tensors[0];
    indices = &indices_arg->tensors[0];
    updates = &updates_arg->tensors[0];
    y = &y_arg->tensors[0];
    if (!hb_is_contiguous(data) || !hb_is_contiguous(indices) || !hb_is_contiguous(updates) || !hb_is_contiguous(y))
        return "scatter: the baseline needs contiguous tensors";
    if (y->dtype != data->dtype || updates->dtype != data->dtype || hb_numel(y) != hb_numel(data))
        return "scatter: y and updates must have data's dtype, y data's shape";
    if (indices->dtype != HB_INT32 && indices->dtype != HB_INT64) return "scatter: indices must be int32 or int64";
    if (indices->rank != data->rank || updates->rank != data->rank) return "scatter: ranks differ";
    std::int64_t dim = hb_attr_int(call, "dim", 0);
    const std::int64_t rank = data->rank > 0 ? data->rank : 1;
    if (dim < 0) dim += rank;
    if (dim < 0 || dim >= rank) return "scatter: dim is out of range";
    g.rank = data->rank;
    g.axis = static_cast<int>(dim);
    for (int d = 0; d < g.rank; ++d) g.index_shape[d] = indices->shape[d];
    row_major_strides(*data, g.data_strides);
    row_major_strides(*indices, g.index_strides);
    row_major_strides(*updates, g.update_strides);
    g.per_line = g.rank ? indices->shape[g.axis] : 1;
    g.lines = g.per_line > 0 ? hb_numel(indices) / g.per_line : 0;
    return {};
}

}  // namespace

extern "C" HB_EXPORT std::uint64_t hapbench_workspace_bytes(const hb_call* call) {
    LineGeometry g;
    const hb_tensor *data, *indices, *updates, *y;
    if (!geometry(call, g, data, indices, updates, y).empty()) return 0;  // the kernel reports it
    return accumulates_in_f32(data->dtype, reduce_of(call)) ? static_cast<std::uint64_t>(hb_numel(data)) * sizeof(float) : 0;
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    LineGeometry g;
    const hb_tensor *data, *indices, *updates, *y;
    if (const std::string error = geometry(call, g, data, indices, updates, y); !error.empty())
        return hb_fail(call, 2, error.c_str());
    const Reduce reduce = reduce_of(call);
    if (reduce == Reduce::unknown) return hb_fail(call, 2, "scatter: reduce must be None, update, add, multiply, amin or amax");
    if (accumulates_in_f32(data->dtype, reduce) &&
        (!call->workspace || call->workspace_bytes < static_cast<std::uint64_t>(hb_numel(data)) * sizeof(float)))
        return hb_fail(call, 4, "scatter: the fp32 accumulation needs the workspace from hapbench_workspace_bytes");
    auto* workspace = static_cast<float*>(call->workspace);
    return guarded(call, [&] {
        switch (data->dtype) {
            case HB_FLOAT32: run_scatter<float>(g, *data, *indices, *updates, *y, reduce, workspace); return 0;
            case HB_FLOAT16: run_scatter<Half>(g, *data, *indices, *updates, *y, reduce, workspace); return 0;
            case HB_BFLOAT16: run_scatter<BFloat16>(g, *data, *indices, *updates, *y, reduce, workspace); return 0;
            case HB_INT32: run_scatter<std::int32_t>(g, *data, *indices, *updates, *y, reduce, workspace); return 0;
            case HB_INT64: run_scatter<std::int64_t>(g, *data, *indices, *updates, *y, reduce, workspace); return 0;
            default: return hb_fail(call, 2, "scatter: unsupported dtype (float16, bfloat16, float32, int32, int64)");
        }
    });
}
