#include "suite/inputs.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/dtype_blocks.hpp"
#include "core/rng.hpp"
#include "hapbench/half.h"
#include "ops/operator.hpp"
#include "ops/problem.hpp"

namespace hb {

namespace {

// Elements per independently seeded piece of a tensor: pieces fill in parallel, and the
// values depend only on the seed, never on the thread count.
constexpr std::size_t piece_elements = 1 << 16;

// Every float input but a constant one (generator 4): eight xoshiro256** lanes seeded from
// the piece's generator, element 8k + l of a block drawn by lane l, so that the compiler runs
// the lanes side by side in vector registers (a scalar draw per element was most of a timed
// call's input preparation). Integer shifts, adds and xors only, and u = (52 random bits as a
// double in [1, 2)) - 1 exactly: the values depend on the seed alone, never on the
// instruction set.
class LaneRng {
  public:
    static constexpr std::size_t lanes = 8;
    explicit LaneRng(Rng& seeder) {
        for (std::size_t l = 0; l < lanes; ++l) {
            std::uint64_t state = seeder.next_u64();
            for (auto& word : s_) word[l] = splitmix64(state);
        }
    }
    // out[i] = lo + span * u_i, clamped to [-fmax, fmax], for i < count (a multiple of `lanes`).
    // Built for AVX-512, AVX2 and the x86-64 base (chosen when the library loads); the file is
    // built without FMA contraction (CMakeLists.txt), so every variant computes the same bits.
    __attribute__((target_clones("avx512f", "avx2", "default"))) void uniform(std::size_t count, double lo,
                                                                                double span, double fmax,
                                                                                double* out) {
        U s0 = s_[0], s1 = s_[1], s2 = s_[2], s3 = s_[3];
        const D low = D{} + lo, width = D{} + span, one = D{} + 1.0;
        for (std::size_t at = 0; at < count; at += lanes) {
            const U r = rotl((s1 << 2) + s1, 7);
            const U bits = (((r << 3) + r) >> 12) | 0x3ff0000000000000ull;
            const U t = s1 << 17;
            s2 ^= s0;
            s3 ^= s1;
            s1 ^= s2;
            s0 ^= s3;
            s2 ^= t;
            s3 = rotl(s3, 45);
            D u;
            std::memcpy(&u, &bits, sizeof u);
            const D v = low + width * (u - one);
            std::memcpy(out + at, &v, sizeof v);
        }
        s_[0] = s0, s_[1] = s1, s_[2] = s2, s_[3] = s3;
        if (std::min(lo, lo + span) < -fmax || std::max(lo, lo + span) > fmax)  // wider than the dtype: a second pass
            for (std::size_t i = 0; i < count; ++i) out[i] = std::clamp(out[i], -fmax, fmax);
    }

  private:
    // GCC vector types: eight lanes, lowered to whatever vector width the build targets.
    using U = std::uint64_t __attribute__((vector_size(64)));
    using D = double __attribute__((vector_size(64)));
    static U rotl(U x, int k) { return (x << k) | (x >> (64 - k)); }
    U s_[4];
};

// Draws element values [begin, end) of a float tensor of n elements (at most 1024), in fp64,
// into `out`. Every range but a constant one draws through the lanes.
void draw_float_values(std::size_t begin, std::size_t end, std::size_t n, double lo, double hi, double fmax,
                       LaneRng& lanes, double* out) {
    const std::size_t count = end - begin;
    const std::size_t whole = (count + LaneRng::lanes - 1) / LaneRng::lanes * LaneRng::lanes;  // extras dropped
    if (std::isnan(lo) || std::isnan(hi)) {
        alignas(64) double coin[1024];
        lanes.uniform(whole, -1.0, 2.0, fmax, out);
        lanes.uniform(whole, -1.0, 2.0, fmax, coin);
        for (std::size_t i = 0; i < count; ++i) out[i] = coin[i] < 0 ? NAN : out[i];
        return;
    }
    if (std::isinf(lo) || std::isinf(hi)) {
        const std::size_t chunk = n / 20;
        const std::size_t low_end = std::isinf(lo) && lo < 0 ? std::min(n, std::max<std::size_t>(1, chunk)) : 0;
        const std::size_t high_begin = std::isinf(hi) && hi > 0 ? n - chunk : n;
        lanes.uniform(whole, -1.0, 2.0, fmax, out);
        for (std::size_t i = begin; i < end; ++i)
            if (i < low_end) out[i - begin] = -INFINITY;
            else if (i >= high_begin) out[i - begin] = INFINITY;
        return;
    }
    if (lo == hi) {
        const double c = std::clamp(lo, -fmax, fmax);
        for (std::size_t i = 0; i < count; ++i) out[i] = c;
        return;
    }
    lanes.uniform(whole, lo, hi - lo, fmax, out);
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
        alignas(64) double block[1024];
        LaneRng lanes(rng);
        for (std::size_t at = begin; at < end; at += 1024) {
            const std::size_t stop = std::min(end, at + 1024);
            draw_float_values(at, stop, n, lo, hi, fmax, lanes, block);
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

std::vector<Arg> allocate_args(const std::vector<ArgSpec>& specs, bool guard_pages, Buffer::Contents contents) {
    std::vector<Arg> args;
    for (const auto& spec : specs) {
        Arg a;
        a.name = spec.name;
        a.is_list = spec.is_list;
        a.present = spec.present;
        a.variable_length = spec.variable_length;
        for (const auto& t : spec.tensors) a.tensors.emplace_back(t, guard_pages, contents);
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
    std::vector<Arg> args = allocate_args(problem.inputs, guard_pages, Buffer::Contents::overwritten);
    fill_inputs(problem, op, base_input_seed(problem, eval_seed), args);
    return args;
}

}  // namespace hb
