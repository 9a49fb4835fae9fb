// The shared pieces of the operators' input hooks (ops/axis_view.hpp's scan_every_third_line,
// ops/index_inputs.hpp): each gives what the element-by-element rule it replaced gives, bit
// for bit, on every shape class (axis last, first, in the middle; one outer block with many
// pieces of lines), dtype and NaN placement. A hook whose values moved would change every
// case's inputs and make cached goldens wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "ops/axis_view.hpp"
#include "ops/index_inputs.hpp"

namespace hb {
namespace {

struct Extremum {
    double value;
    std::int64_t k;
    bool nan;
};

// Line (o, i)'s first minimum, element by element, stopping at a NaN (cummin's rule).
Extremum line_minimum(const Tensor& x, const AxisView& v, std::int64_t o, std::int64_t i) {
    Extremum m{x.get(static_cast<std::size_t>(v.at(o, 0, i))), 0, false};
    m.nan = std::isnan(m.value);
    for (std::int64_t k = 1; k < v.size && !m.nan; ++k) {
        const double value = x.get(static_cast<std::size_t>(v.at(o, k, i)));
        m.nan = std::isnan(value);
        if (value < m.value) m.value = value, m.k = k;
    }
    return m;
}

Tensor random_tensor(DType dtype, const Shape& shape, std::uint64_t seed, bool with_nan) {
    Tensor x(TensorSpec{dtype, shape});
    Rng rng(seed);
    for (std::int64_t e = 0; e < x.numel(); ++e) {
        double value = is_floating(dtype) ? rng.uniform(-4, 4) : static_cast<double>(rng.uniform_int(-50, 50));
        if (with_nan && is_floating(dtype) && rng.uniform_int(0, 200) == 0) value = NAN;
        x.set(static_cast<std::size_t>(e), value);
    }
    return x;
}

TEST(ScanEveryThirdLine, GivesEachLinesMinimumAsALineByLineScanDoes) {
    const std::vector<std::pair<Shape, int>> cases = {
        {{7, 5, 11}, 0}, {{7, 5, 11}, 1}, {{7, 5, 11}, 2},  // axis first, middle, last
        {{4, 3000}, 0},                                      // one outer block per line set, 1000 lines: one piece
        {{2, 3, 3500}, 1},                                   // 3500 lines a block: pieces of 1024
        {{5000, 2}, 1},                                      // many short contiguous lines
        {{3, 2500}, 1},                                      // lines longer than a widening chunk
        {{1}, 0},
    };
    std::uint64_t seed = 1;
    for (const auto& [shape, axis] : cases)
        for (DType dtype : {DType::f16, DType::bf16, DType::f32, DType::i32, DType::i64})
            for (bool with_nan : {false, true}) {
                const Tensor x = random_tensor(dtype, shape, seed++, with_nan);
                const AxisView v = axis_view(shape, axis);
                const std::vector<Extremum> scanned = scan_every_third_line<Extremum>(
                    x.data(), dtype, v, [](double value) { return Extremum{value, 0, std::isnan(value)}; },
                    [](Extremum& m, double value, std::int64_t k) {
                        if (m.nan) return;
                        m.nan = std::isnan(value);
                        if (value < m.value) m.value = value, m.k = k;
                    });
                ASSERT_EQ(scanned.size(), static_cast<std::size_t>((v.lines() + 2) / 3));
                for (std::size_t j = 0; j < scanned.size(); ++j) {
                    const std::int64_t line = 3 * static_cast<std::int64_t>(j);
                    const Extremum expected = line_minimum(x, v, line / v.inner, line % v.inner);
                    SCOPED_TRACE(shape_to_string(shape) + " axis " + std::to_string(axis) + " " + std::string(dtype_name(dtype)) +
                                 " line " + std::to_string(line));
                    ASSERT_EQ(scanned[j].nan, expected.nan);
                    if (!expected.nan) ASSERT_EQ(scanned[j].k, expected.k);
                }
            }
}

// The element-by-element rule the typed loops replaced.
void redraw_by_element(Tensor& index, std::int64_t size, Rng& rng) {
    for (std::int64_t j = 0; j < index.numel(); ++j) {
        const double k = index.get(static_cast<std::size_t>(j));
        if (!(k >= 0 && k < static_cast<double>(size)))
            index.set(static_cast<std::size_t>(j), static_cast<double>(rng.uniform_int(0, size - 1)));
    }
}

TEST(RedrawOutOfRangeIndices, DrawsTheSameIndicesAsTheElementByElementRule) {
    // int8 with a size past its range takes the generic (saturating) path.
    for (DType dtype : {DType::i8, DType::i16, DType::i32, DType::i64})
        for (std::int64_t size : {std::int64_t{1}, std::int64_t{37}, std::int64_t{300}}) {
            const Tensor original = random_tensor(dtype, {4099}, 77, false);
            Tensor fast(original.spec), slow(original.spec);
            std::memcpy(fast.data(), original.data(), original.spec.bytes());
            std::memcpy(slow.data(), original.data(), original.spec.bytes());
            Rng a(9), b(9);
            redraw_out_of_range_indices(fast, size, a);
            redraw_by_element(slow, size, b);
            SCOPED_TRACE(std::string(dtype_name(dtype)) + " size " + std::to_string(size));
            EXPECT_EQ(std::memcmp(fast.data(), slow.data(), original.spec.bytes()), 0);
            EXPECT_EQ(a.next_u64(), b.next_u64());  // as many draws
            for (std::int64_t j = 0; j < fast.numel() && (size - 1 <= 127 || dtype != DType::i8); ++j) {
                const double k = fast.get(static_cast<std::size_t>(j));
                ASSERT_TRUE(k >= 0 && k < static_cast<double>(size)) << k;
            }
        }
}

}  // namespace
}  // namespace hb
