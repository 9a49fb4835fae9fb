#include "suite/inputs.hpp"

#include <algorithm>
#include <cmath>

#include "core/rng.hpp"
#include "hapbench/half.h"
#include "ops/operator.hpp"
#include "ops/problem.hpp"

namespace hb {

namespace {

template <typename Store>
void fill_float(std::size_t n, const std::optional<ValueRange>& range, DType dtype, Rng& rng, Store store) {
    const double lo_default = 0, hi_default = 1;
    double lo = range ? range->lo : lo_default;
    double hi = range ? range->hi : hi_default;
    const double fmax = dtype_max(dtype);
    if (std::isnan(lo) || std::isnan(hi)) {
        for (std::size_t i = 0; i < n; ++i) {
            const double u = rng.uniform(-1.0, 1.0);
            store(i, rng.uniform01() < 0.5 ? NAN : u);
        }
        return;
    }
    if (std::isinf(lo) || std::isinf(hi)) {
        for (std::size_t i = 0; i < n; ++i) store(i, rng.uniform(-1.0, 1.0));
        const std::size_t chunk = n / 20;
        if (std::isinf(lo) && lo < 0)
            for (std::size_t i = 0; i < std::max<std::size_t>(1, chunk) && i < n; ++i) store(i, -INFINITY);
        if (std::isinf(hi) && hi > 0)
            for (std::size_t i = n - chunk; i < n; ++i) store(i, INFINITY);
        return;
    }
    if (lo == hi) {
        const double c = std::clamp(lo, -fmax, fmax);
        for (std::size_t i = 0; i < n; ++i) store(i, c);
        return;
    }
    for (std::size_t i = 0; i < n; ++i) store(i, std::clamp(rng.uniform(lo, hi), -fmax, fmax));
}

}  // namespace

void fill_tensor(Tensor& t, const std::optional<ValueRange>& range, std::uint64_t stream_seed) {
    Rng rng(stream_seed);
    const auto n = static_cast<std::size_t>(t.numel());
    const DType dtype = t.spec.dtype;
    void* data = t.data();
    switch (dtype) {
        case DType::f16: {
            auto* p = static_cast<std::uint16_t*>(data);
            fill_float(n, range, dtype, rng, [p](std::size_t i, double v) { p[i] = f64_to_f16_bits(v); });
            return;
        }
        case DType::bf16: {
            auto* p = static_cast<std::uint16_t*>(data);
            fill_float(n, range, dtype, rng, [p](std::size_t i, double v) { p[i] = f64_to_bf16_bits(v); });
            return;
        }
        case DType::f32: {
            auto* p = static_cast<float*>(data);
            fill_float(n, range, dtype, rng, [p](std::size_t i, double v) { p[i] = static_cast<float>(v); });
            return;
        }
        case DType::f64: {
            auto* p = static_cast<double*>(data);
            fill_float(n, range, dtype, rng, [p](std::size_t i, double v) { p[i] = v; });
            return;
        }
        default: break;
    }
    double lo = range ? range->lo : 0.0, hi = range ? range->hi : 100.0;
    if (dtype == DType::boolean) { lo = std::max(lo, 0.0); hi = std::min(hi, 1.0); }
    if (std::isnan(lo) || std::isnan(hi)) { lo = 0; hi = 100; }
    // int64's maximum, 2^63 - 1, rounds up to 2^63 in a double, which no int64 holds: the
    // largest double below it is the top of the drawable range.
    const double top = dtype == DType::i64 ? std::nextafter(dtype_max(dtype), 0.0) : dtype_max(dtype);
    lo = std::clamp(std::ceil(lo), dtype_lowest(dtype), top);
    hi = std::clamp(std::floor(hi), dtype_lowest(dtype), top);
    if (hi < lo) hi = lo;
    const auto ilo = static_cast<std::int64_t>(lo), ihi = static_cast<std::int64_t>(hi);
    for (std::size_t i = 0; i < n; ++i) store_element(data, i, dtype, static_cast<double>(rng.uniform_int(ilo, ihi)));
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

std::vector<Arg> generate_inputs(const Problem& problem, const Operator& op, std::uint64_t eval_seed,
                                 bool guard_pages) {
    std::vector<Arg> args = allocate_args(problem.inputs, guard_pages);
    const std::uint32_t seed = case_seed(problem.case_id(), eval_seed);
    int tensor_index = 0;
    for (std::size_t a = 0; a < args.size(); ++a) {
        const auto& range = problem.spec.inputs.at(a).range;
        for (auto& t : args[a].tensors) fill_tensor(t, range, tensor_stream_seed(seed, tensor_index++, 0));
    }
    Rng hook_rng(tensor_stream_seed(seed, 1 << 12, 0));
    op.fix_inputs(problem, args, hook_rng);
    return args;
}

}  // namespace hb
