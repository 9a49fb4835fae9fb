// A strided copy by oneDNN's reorder, for the data-movement baselines (transpose,
// strided_slice): y is a plain row-major tensor of `dims`, read from a source whose element
// strides in y's dimension order are `source_strides` (any non-negative values: a permuted or
// sliced view of x). The reorder primitive is what a framework's oneDNN backend calls for a
// layout change; it is created once per geometry and reused. oneDNN has no int16 or int64
// data type: those move as 2 x u8 and 2 x s32 lanes of the same bytes (an extra innermost
// dimension of 2), which copies every bit unchanged. Header-only, like baseline_support.hpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "ops/baseline_support.hpp"

#pragma GCC visibility push(hidden)

namespace hb::baseline {

struct StridedCopy {
    std::vector<std::int64_t> dims;            // y's shape
    std::vector<std::int64_t> source_strides;  // in elements, one per dim of y
    hb_dtype dtype = HB_FLOAT32;
    bool operator<(const StridedCopy& o) const {
        return std::tie(dims, source_strides, dtype) < std::tie(o.dims, o.source_strides, o.dtype);
    }
};

// The oneDNN type and lanes per element of a dtype the reorder can move; false otherwise.
inline bool reorder_type(hb_dtype t, dnnl::memory::data_type& type, int& lanes) {
    using dt = dnnl::memory::data_type;
    lanes = 1;
    switch (t) {
        case HB_FLOAT32: type = dt::f32; return true;
        case HB_FLOAT16: type = dt::f16; return true;
        case HB_BFLOAT16: type = dt::bf16; return true;
        case HB_INT8: type = dt::s8; return true;
        case HB_UINT8: type = dt::u8; return true;
        case HB_INT32: type = dt::s32; return true;
        case HB_INT16: type = dt::u8; lanes = 2; return true;
        case HB_INT64: type = dt::s32; lanes = 2; return true;
        default: return false;
    }
}

// Whether a oneDNN memory descriptor can hold the view: its dims of size > 1, ordered by
// stride, must nest without overlap (stride >= next stride * next dim), the check oneDNN
// makes when it builds a descriptor from strides. A slice with a step along an inner dim and
// a short outer step (dims [6, 4], strides [7, 2]) fails it and needs a loop.
inline bool reorder_can_describe(const StridedCopy& copy) {
    std::vector<std::size_t> dims;
    for (std::size_t d = 0; d < copy.dims.size(); ++d)
        if (copy.dims[d] > 1) dims.push_back(d);
    std::sort(dims.begin(), dims.end(), [&](std::size_t a, std::size_t b) {
        return copy.source_strides[a] != copy.source_strides[b] ? copy.source_strides[a] > copy.source_strides[b] : a < b;
    });
    for (std::size_t k = 0; k + 1 < dims.size(); ++k)
        if (copy.source_strides[dims[k]] < copy.source_strides[dims[k + 1]] * copy.dims[dims[k + 1]]) return false;
    return true;
}

struct ReorderPlan {
    dnnl::memory::desc source, destination;
    dnnl::reorder primitive;
};

inline const ReorderPlan& reorder_plan(const StridedCopy& copy) {
    static PlanCache<StridedCopy, ReorderPlan> cache;
    return cache.get(copy, [&] {
        dnnl::memory::data_type type;
        int lanes = 1;
        if (!reorder_type(copy.dtype, type, lanes)) throw std::runtime_error("reorder: unsupported dtype");
        // Size-1 dims change neither layout: they are left out of both descriptors.
        dnnl::memory::dims dims, strides;
        for (std::size_t d = 0; d < copy.dims.size(); ++d)
            if (copy.dims[d] != 1) {
                dims.push_back(copy.dims[d]);
                strides.push_back(copy.source_strides[d]);
            }
        if (dims.empty()) {  // one element
            dims.push_back(1);
            strides.push_back(1);
        }
        if (lanes > 1) {
            for (auto& s : strides) s *= lanes;
            dims.push_back(lanes);
            strides.push_back(1);
        }
        dnnl::memory::dims plain(dims.size());
        std::int64_t s = 1;
        for (std::size_t d = dims.size(); d-- > 0;) {
            plain[d] = s;
            s *= dims[d];
        }
        ReorderPlan plan;
        plan.source = dnnl::memory::desc(dims, type, strides);
        plan.destination = dnnl::memory::desc(dims, type, plain);
        plan.primitive = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), plan.source, cpu_engine(), plan.destination));
        return plan;
    });
}

// Copies `source` (the view `copy` describes) into the plain `destination`.
inline void run_reorder(const StridedCopy& copy, const void* source, void* destination) {
    const ReorderPlan& plan = reorder_plan(copy);
    dnnl::stream& stream = cpu_stream();
    dnnl::memory from(plan.source, cpu_engine(), const_cast<void*>(source));
    dnnl::memory to(plan.destination, cpu_engine(), destination);
    plan.primitive.execute(stream, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
    stream.wait();
}

}  // namespace hb::baseline

#pragma GCC visibility pop
