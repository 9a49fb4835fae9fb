// A contiguous tensor seen around one axis as [outer, size, inner]: element (o, k, i) sits at
// (o * size + k) * inner + i, and row-major strides for tensors of different shapes. The
// reductions, normalizations, scans and index operators along a dim (softmax, arg_max, cummin,
// gather, scatter) walk their tensors this way.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/dtype.hpp"
#include "core/dtype_blocks.hpp"
#include "core/shape.hpp"

namespace hb {

struct AxisView {
    std::int64_t outer = 1, size = 1, inner = 1;
    std::int64_t at(std::int64_t o, std::int64_t k, std::int64_t i) const { return (o * size + k) * inner + i; }
    std::int64_t lines() const { return outer * inner; }  // 1-D slices along the axis
};

inline AxisView axis_view(const Shape& shape, int axis) {
    AxisView v;
    for (int d = 0; d < axis; ++d) v.outer *= shape[static_cast<std::size_t>(d)];
    v.size = shape.empty() ? 1 : shape[static_cast<std::size_t>(axis)];
    for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < shape.size(); ++d) v.inner *= shape[d];
    return v;
}

// Row-major strides in elements (gather and scatter walk tensors of different shapes).
inline std::vector<std::int64_t> row_major_strides(const Shape& shape) {
    std::vector<std::int64_t> strides(shape.size(), 1);
    for (std::size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
    return strides;
}

// Copies element `from` over element `to` of a raw buffer of dtype `t`, bit for bit (an
// fp64 round trip would lose int64 values beyond 2^53).
inline void copy_element(void* data, DType t, std::int64_t from, std::int64_t to) {
    const std::size_t size = dtype_size(t);
    auto* bytes = static_cast<unsigned char*>(data);
    std::memmove(bytes + static_cast<std::size_t>(to) * size, bytes + static_cast<std::size_t>(from) * size, size);
}

// Scans lines 0, 3, 6, ... along the axis of a tensor of dtype `t` at `data` (the input hooks
// of arg_max and cummin mark every third line): state j of the result is line 3j's, from
// start(value of its element 0), then step(state, value of element k, k) for k = 1, 2, ... in
// order; values are widened to fp64 (exact for every dtype but int64 beyond 2^53) a block at a
// time. Lines advance together, row by row, 1024 at a time, on every thread: one line at a time,
// element by element, read a cache line per element whenever the axis is not the last and was
// most of those operators' input preparation on timed calls (11.6 ms a call on arg_max's
// public cases, 2-vCPU AMD EPYC).
template <typename State, typename Start, typename Step>
std::vector<State> scan_every_third_line(const void* data, DType t, const AxisView& v, Start start, Step step) {
    constexpr std::int64_t chunk = 1024;
    const auto* bytes = static_cast<const unsigned char*>(data);
    const std::size_t size = dtype_size(t);
    auto at = [&](std::int64_t index) { return bytes + static_cast<std::size_t>(index) * size; };
    const std::int64_t lines = v.lines();
    std::vector<State> states(static_cast<std::size_t>((lines + 2) / 3));
    if (v.inner == 1) {  // each line is contiguous: widened a chunk at a time along it
#pragma omp parallel if (lines >= 64)
        {
            std::vector<double> values(static_cast<std::size_t>(chunk));
#pragma omp for schedule(static)
            for (std::int64_t line = 0; line < lines; line += 3) {
                State& state = states[static_cast<std::size_t>(line / 3)];
                for (std::int64_t k0 = 0; k0 < v.size; k0 += chunk) {
                    const std::int64_t n = std::min(chunk, v.size - k0);
                    widen_block(at(line * v.size + k0), static_cast<std::size_t>(n), t, values.data());
                    for (std::int64_t k = k0; k < k0 + n; ++k) {
                        if (k == 0) state = start(values[0]);
                        else step(state, values[static_cast<std::size_t>(k - k0)], k);
                    }
                }
            }
        }
        return states;
    }
    // A block is an outer index's lines i0, i0 + 3, ... (i0 puts the first at a multiple of 3),
    // cut into pieces of `chunk` lines.
    const auto first_of = [&](std::int64_t o) { return (3 - (o * v.inner) % 3) % 3; };
    const std::int64_t most = (v.inner + 2) / 3;
    const std::int64_t pieces = (most + chunk - 1) / chunk;
#pragma omp parallel if (lines >= 4096)
    {
        std::vector<double> row(static_cast<std::size_t>(3 * chunk));
#pragma omp for schedule(static)
        for (std::int64_t item = 0; item < v.outer * pieces; ++item) {
            const std::int64_t o = item / pieces, piece = item % pieces;
            const std::int64_t i0 = first_of(o);
            const std::int64_t count = i0 < v.inner ? (v.inner - i0 + 2) / 3 : 0;
            const std::int64_t j0 = piece * chunk, j1 = std::min(count, j0 + chunk);
            if (j0 >= j1) continue;
            State* block = states.data() + (o * v.inner + i0) / 3;
            const std::int64_t first = i0 + 3 * j0, span = 3 * (j1 - j0 - 1) + 1;  // elements of a row read
            for (std::int64_t k = 0; k < v.size; ++k) {
                widen_block(at(v.at(o, k, first)), static_cast<std::size_t>(span), t, row.data());
                for (std::int64_t j = j0; j < j1; ++j) {
                    const double value = row[static_cast<std::size_t>(3 * (j - j0))];
                    if (k == 0) block[j] = start(value);
                    else step(block[j], value, k);
                }
            }
        }
    }
    return states;
}

}  // namespace hb
