#include "suite/inputs.hpp"

#include <algorithm>
#include <cmath>

#include "core/float_narrow.hpp"
#include "core/rng.hpp"
#include "hapbench/half.h"
#include "ops/operator.hpp"
#include "ops/problem.hpp"

namespace hb {

namespace {

// Elements per independently seeded piece of a tensor: pieces fill in parallel, and the
// values depend only on the seed, never on the thread count.
constexpr std::size_t piece_elements = 1 << 16;

// Draws element values [begin, end) of a float tensor of n elements, in fp64, into `out`.
void draw_float_values(std::size_t begin, std::size_t end, std::size_t n, double lo, double hi, double fmax, Rng& rng,
                       double* out) {
    if (std::isnan(lo) || std::isnan(hi)) {
        for (std::size_t i = begin; i < end; ++i) {
            const double u = rng.uniform(-1.0, 1.0);
            out[i - begin] = rng.uniform01() < 0.5 ? NAN : u;
        }
        return;
    }
    if (std::isinf(lo) || std::isinf(hi)) {
        const std::size_t chunk = n / 20;
        const std::size_t low_end = std::isinf(lo) && lo < 0 ? std::min(n, std::max<std::size_t>(1, chunk)) : 0;
        const std::size_t high_begin = std::isinf(hi) && hi > 0 ? n - chunk : n;
        for (std::size_t i = begin; i < end; ++i) {
            const double u = rng.uniform(-1.0, 1.0);
            out[i - begin] = i < low_end ? -INFINITY : i >= high_begin ? INFINITY : u;
        }
        return;
    }
    if (lo == hi) {
        const double c = std::clamp(lo, -fmax, fmax);
        for (std::size_t i = begin; i < end; ++i) out[i - begin] = c;
        return;
    }
    const double span = hi - lo;
    for (std::size_t i = begin; i < end; ++i) out[i - begin] = std::clamp(lo + span * rng.uniform01(), -fmax, fmax);
}

template <typename I>
void draw_integers(std::size_t begin, std::size_t end, std::int64_t a, std::int64_t b, Rng& rng, void* data) {
    auto* p = static_cast<I*>(data);
    for (std::size_t i = begin; i < end; ++i) p[i] = static_cast<I>(rng.uniform_int_fast(a, b));
}

void fill_piece(const TensorSpec& spec, void* data, std::size_t begin, std::size_t end,
                const std::optional<ValueRange>& range, Rng& rng) {
    const auto n = static_cast<std::size_t>(spec.numel());
    const DType dtype = spec.dtype;
    if (is_floating(dtype)) {
        const double lo = range ? range->lo : 0.0, hi = range ? range->hi : 1.0;
        const double fmax = dtype_max(dtype);
        const std::size_t size = dtype_size(dtype);
        double block[1024];
        for (std::size_t at = begin; at < end; at += 1024) {
            const std::size_t stop = std::min(end, at + 1024);
            draw_float_values(at, stop, n, lo, hi, fmax, rng, block);
            narrow_block(block, stop - at, dtype, static_cast<char*>(data) + at * size);
        }
        return;
    }
    double ilo = range ? range->lo : 0.0, ihi = range ? range->hi : 100.0;
    if (dtype == DType::boolean) { ilo = std::max(ilo, 0.0); ihi = std::min(ihi, 1.0); }
    if (std::isnan(ilo) || std::isnan(ihi)) { ilo = 0; ihi = 100; }
    // int64's maximum, 2^63 - 1, rounds up to 2^63 in a double, which no int64 holds: the
    // largest double below it is the top of the drawable range.
    const double top = dtype == DType::i64 ? std::nextafter(dtype_max(dtype), 0.0) : dtype_max(dtype);
    ilo = std::clamp(std::ceil(ilo), dtype_lowest(dtype), top);
    ihi = std::clamp(std::floor(ihi), dtype_lowest(dtype), top);
    if (ihi < ilo) ihi = ilo;
    const auto a = static_cast<std::int64_t>(ilo), b = static_cast<std::int64_t>(ihi);
    switch (dtype) {
        case DType::i8: draw_integers<std::int8_t>(begin, end, a, b, rng, data); return;
        case DType::u8:
        case DType::boolean: draw_integers<std::uint8_t>(begin, end, a, b, rng, data); return;
        case DType::i16: draw_integers<std::int16_t>(begin, end, a, b, rng, data); return;
        case DType::i32: draw_integers<std::int32_t>(begin, end, a, b, rng, data); return;
        default:
            // int64 included: drawn through a double, so that every value is exact in the fp64
            // golden (integers beyond 2^53 would otherwise be rounded there).
            for (std::size_t i = begin; i < end; ++i) store_element(data, i, dtype, static_cast<double>(rng.uniform_int_fast(a, b)));
    }
}

}  // namespace

void mark_constant_tensor(Tensor& t, const std::optional<ValueRange>& range, std::uint64_t stream_seed) {
    if (!range || range->lo != range->hi || !std::isfinite(range->lo) || !is_floating(t.spec.dtype)) return;
    const auto n = static_cast<std::size_t>(t.numel());
    if (n == 0) return;
    Rng rng(stream_seed ^ 0x6d61726b6564ull);  // "marked"
    const double fmax = dtype_max(t.spec.dtype);
    const std::size_t marks = std::max<std::size_t>(1, n / 1024);
    for (std::size_t k = 0; k < marks; ++k) {
        const auto at = static_cast<std::size_t>(rng.uniform_int_fast(0, static_cast<std::int64_t>(n) - 1));
        t.set(at, std::clamp(rng.uniform(range->lo - 1, range->lo + 1), -fmax, fmax));
    }
}

void fill_tensor(Tensor& t, const std::optional<ValueRange>& range, std::uint64_t stream_seed) {
    const auto n = static_cast<std::size_t>(t.numel());
    const std::int64_t pieces = static_cast<std::int64_t>((n + piece_elements - 1) / piece_elements);
#pragma omp parallel for schedule(static) if (pieces > 1)
    for (std::int64_t piece = 0; piece < pieces; ++piece) {
        std::uint64_t state = stream_seed ^ (static_cast<std::uint64_t>(piece) * 0xd1342543de82ef95ull);
        Rng rng(splitmix64(state));
        const std::size_t begin = static_cast<std::size_t>(piece) * piece_elements;
        fill_piece(t.spec, t.data(), begin, std::min(n, begin + piece_elements), range, rng);
    }
}

std::vector<Arg> allocate_args(const std::vector<ArgSpec>& specs, bool guard_pages) {
    std::vector<Arg> args;
    for (const auto& spec : specs) {
        Arg a;
        a.name = spec.name;
        a.is_list = spec.is_list;
        a.present = spec.present;
        a.variable_length = spec.variable_length;
        for (const auto& t : spec.tensors) a.tensors.emplace_back(t, guard_pages);
        args.push_back(std::move(a));
    }
    return args;
}

std::uint64_t base_input_seed(const Problem& problem, std::uint64_t eval_seed) {
    return case_seed(problem.case_id(), eval_seed);
}

void fill_inputs(const Problem& problem, const Operator& op, std::uint64_t seed, std::vector<Arg>& args,
                 InputDraw draw) {
    int tensor_index = 0;
    for (std::size_t a = 0; a < args.size(); ++a) {
        const auto& range = problem.spec.inputs.at(a).range;
        for (auto& t : args[a].tensors) {
            const std::uint64_t stream = input_stream_seed(seed, tensor_index++);
            fill_tensor(t, range, stream);
            if (draw == InputDraw::timed_call) mark_constant_tensor(t, range, stream);
        }
    }
    Rng hook_rng(input_stream_seed(seed, 1 << 12));
    op.fix_inputs(problem, args, hook_rng);
}

std::vector<Arg> generate_inputs(const Problem& problem, const Operator& op, std::uint64_t eval_seed,
                                 bool guard_pages) {
    std::vector<Arg> args = allocate_args(problem.inputs, guard_pages);
    fill_inputs(problem, op, base_input_seed(problem, eval_seed), args);
    return args;
}

}  // namespace hb
