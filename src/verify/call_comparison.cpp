#include "verify/call_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/dtype.hpp"

namespace hb {

namespace {
// Elements compared byte for byte at once before the element-by-element look.
constexpr std::int64_t kBlock = 4096;

// The difference between two values of one output element from two calls on identical
// inputs, on the scale the precision gate uses: relative to max(1, |a|, |b|) for floats,
// absolute for integers; infinite when only one is NaN or infinite.
double call_difference(double a, double b, bool floating) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : INFINITY;
    if (a == b) return 0;
    if (std::isinf(a) || std::isinf(b)) return INFINITY;
    const double d = std::fabs(a - b);
    return floating ? d / std::max({1.0, std::fabs(a), std::fabs(b)}) : d;
}

// Elements of the leading `rows` entries of dim 0 (all of them for a fixed-length output).
std::int64_t compared_elements(const TensorSpec& spec, std::int64_t rows) {
    if (rows < 0 || spec.shape.empty()) return spec.numel();
    const std::int64_t per_row = spec.shape[0] > 0 ? spec.numel() / spec.shape[0] : 0;
    return std::clamp<std::int64_t>(rows, 0, spec.shape[0]) * per_row;
}

}  // namespace

void poison_outputs(std::vector<Arg>& outputs, unsigned char byte) {
    for (auto& a : outputs)
        for (auto& t : a.tensors) std::memset(t.data(), byte, t.bytes());
}

std::vector<TensorComparison> compare_correctness_calls(const std::vector<Arg>& first, const std::vector<Arg>& second,
                                                        const std::vector<std::int64_t>& lengths_first,
                                                        const std::vector<std::int64_t>& lengths_second) {
    std::vector<TensorComparison> result;
    for (std::size_t a = 0; a < first.size(); ++a) {
        const std::int64_t rows1 = a < lengths_first.size() ? lengths_first[a] : -1;
        const std::int64_t rows2 = a < lengths_second.size() ? lengths_second[a] : -1;
        for (std::size_t k = 0; k < first[a].tensors.size(); ++k) {
            const auto& t = first[a].tensors[k];
            TensorComparison c{first[a].name, static_cast<int>(k)};
            const auto* x0 = static_cast<const unsigned char*>(t.data());
            const auto* y0 = static_cast<const unsigned char*>(second[a].tensors[k].data());
            const std::size_t esize = dtype_size(t.spec.dtype);
            const bool floating = is_floating(t.spec.dtype);
            const std::int64_t n1 = compared_elements(t.spec, rows1), n2 = compared_elements(t.spec, rows2);
            if (n1 != n2) {
                c.differing = std::abs(n1 - n2);
                c.max_difference = INFINITY;
            }
            const std::int64_t n = std::min(n1, n2);
            for (std::int64_t i = 0; i < n; ++i) {
                // Whole blocks that are byte for byte the same (nearly always all of them) at once.
                if (i % kBlock == 0) {
                    const std::int64_t block = std::min(kBlock, n - i);
                    const auto offset = static_cast<std::size_t>(i) * esize;
                    if (std::memcmp(x0 + offset, y0 + offset, static_cast<std::size_t>(block) * esize) == 0) {
                        i += block - 1;
                        continue;
                    }
                }
                const auto* x = x0 + i * static_cast<std::int64_t>(esize);
                const auto* y = y0 + i * static_cast<std::int64_t>(esize);
                if (std::memcmp(x, y, esize) == 0) continue;
                bool all_ff = true, all_00 = true;
                for (std::size_t b = 0; b < esize; ++b) {
                    all_ff = all_ff && x[b] == 0xff;
                    all_00 = all_00 && y[b] == 0x00;
                }
                if (all_ff && all_00) {
                    if (c.first_unwritten < 0) c.first_unwritten = i;
                    ++c.unwritten;
                } else {
                    ++c.differing;
                    const auto at = static_cast<std::size_t>(i);
                    c.max_difference = std::max(c.max_difference, call_difference(load_element(x0, at, t.spec.dtype),
                                                                                  load_element(y0, at, t.spec.dtype), floating));
                }
            }
            result.push_back(c);
        }
    }
    return result;
}

}  // namespace hb
