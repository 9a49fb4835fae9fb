// adaptive_avg_pool_3d(x [N, C, D, H, W], output_size [Od, Oh, Ow]): torch's
// adaptive_avg_pool3d; y [N, C, Od, Oh, Ow] in x's dtype.
//   Along an axis of input length L and output length O, output i averages the input range
//   [floor(i L / O), ceil((i + 1) L / O)); windows of neighbouring outputs may overlap (L not a
//   multiple of O) and have length 1 or 2 when O > L (up-sampling).
//   y[n, c, i, j, k] = (sum of x over the three ranges' product) / (the box's volume)
// NaN and infinities propagate through the sum (+inf and -inf in one box give NaN). fp64
// golden; the same-precision reference sums in fp32 and divides once, as PyTorch's CPU kernel.
#include <algorithm>
#include <array>
#include <cmath>

#include "core/error.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

struct PoolGeometry {
    std::int64_t n = 1, c = 1;
    std::array<std::int64_t, 3> in{1, 1, 1}, out{1, 1, 1};
};

std::int64_t window_start(std::int64_t i, std::int64_t in, std::int64_t out) { return i * in / out; }
std::int64_t window_end(std::int64_t i, std::int64_t in, std::int64_t out) { return ((i + 1) * in + out - 1) / out; }

PoolGeometry pool_geometry(const Problem& p) {
    const TensorSpec& x = p.input("x").tensors.at(0);
    if (x.shape.size() != 5)
        throw Error(p.context() + "x has shape " + shape_to_string(x.shape) + "; it must be 5-D [N, C, D, H, W]");
    for (std::int64_t s : x.shape)
        if (s < 1) throw Error(p.context() + "x has shape " + shape_to_string(x.shape) + "; no dimension may be empty");
    const AttrValue& size = p.attr("output_size");
    if (size.type != AttrType::int_list || size.ints.size() != 3)
        throw Error(p.context() + "output_size is " + size.to_string() + "; it must be a list of three integers [Od, Oh, Ow]");
    PoolGeometry g;
    g.n = x.shape[0];
    g.c = x.shape[1];
    for (std::size_t a = 0; a < 3; ++a) {
        g.in[a] = x.shape[2 + a];
        g.out[a] = size.ints[a];
        if (g.out[a] < 1)
            throw Error(p.context() + "output_size is " + size.to_string() + "; every size must be at least 1");
    }
    return g;
}

AttrValue int_list(std::vector<std::int64_t> v) {
    AttrValue a;
    a.type = AttrType::int_list;
    a.ints = std::move(v);
    return a;
}

// Additions along one line of an axis: each window summed on its own (the windows' total
// length), or a running sum and one difference per window when windows overlap (in + out).
double line_additions(std::int64_t in, std::int64_t out) {
    double windows = 0;
    for (std::int64_t i = 0; i < out; ++i) windows += static_cast<double>(window_end(i, in, out) - window_start(i, in, out));
    return std::min(windows, static_cast<double>(in + out));
}

// Additions of a separable kernel that reduces one axis at a time, in the cheapest of the six
// axis orders.
double separable_additions(const std::array<std::int64_t, 3>& in, const std::array<std::int64_t, 3>& out) {
    std::array<int, 3> order{0, 1, 2};
    double best = -1;
    do {
        std::array<double, 3> size{static_cast<double>(in[0]), static_cast<double>(in[1]), static_cast<double>(in[2])};
        double adds = 0;
        for (int a : order) {
            double lines = 1;
            for (int b = 0; b < 3; ++b)
                if (b != a) lines *= size[static_cast<std::size_t>(b)];
            adds += lines * line_additions(in[static_cast<std::size_t>(a)], out[static_cast<std::size_t>(a)]);
            size[static_cast<std::size_t>(a)] = static_cast<double>(out[static_cast<std::size_t>(a)]);
        }
        if (best < 0 || adds < best) best = adds;
    } while (std::next_permutation(order.begin(), order.end()));
    return best;
}

// How an output size relates to its input, per axis: the kind decides how output_size is drawn.
enum class Ratio { divisible, overlapping, global, upsampling, same };

}  // namespace

class AdaptiveAvgPool3dOp final : public OperatorWithCompute<AdaptiveAvgPool3dOp> {
  public:
    std::string name() const override { return "adaptive_avg_pool_3d"; }
    int level() const override { return 3; }
    std::string baseline_description() const override {
        return "oneDNN pooling_forward (pooling_avg_exclude_padding, the NCDHW layout as given) when every input "
               "size is a multiple of its output size, so that the adaptive windows are one fixed kernel and stride, "
               "as PyTorch's oneDNN path maps it. Otherwise (overlapping windows, up-sampling), and for dtypes oneDNN "
               "rejects or runs only in its reference kernel (float16 in oneDNN 2.6), plain C++ with OpenMP over "
               "(plane, output depth) pairs summing rows in fp32, PyTorch's own CPU approach: oneDNN has no adaptive "
               "pooling";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const PoolGeometry g = pool_geometry(p);
        ArgSpec y;
        y.name = "y";
        y.tensors.push_back(TensorSpec{p.input("x").tensors.at(0).dtype, Shape{g.n, g.c, g.out[0], g.out[1], g.out[2]}});
        return {y};
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const PoolGeometry g = pool_geometry(p);
        const auto& x = in[0].one().v;
        auto& y = out[0].one().v;
        const std::int64_t planes = g.n * g.c;
        const std::int64_t in_volume = g.in[0] * g.in[1] * g.in[2];
        const std::int64_t out_volume = g.out[0] * g.out[1] * g.out[2];
#pragma omp parallel for schedule(static) if (planes * in_volume >= 65536)
        for (std::int64_t plane = 0; plane < planes; ++plane) {
            const T* xp = x.data() + plane * in_volume;
            T* yp = y.data() + plane * out_volume;
            for (std::int64_t i = 0; i < g.out[0]; ++i) {
                const std::int64_t d0 = window_start(i, g.in[0], g.out[0]), d1 = window_end(i, g.in[0], g.out[0]);
                for (std::int64_t j = 0; j < g.out[1]; ++j) {
                    const std::int64_t h0 = window_start(j, g.in[1], g.out[1]), h1 = window_end(j, g.in[1], g.out[1]);
                    for (std::int64_t k = 0; k < g.out[2]; ++k) {
                        const std::int64_t w0 = window_start(k, g.in[2], g.out[2]), w1 = window_end(k, g.in[2], g.out[2]);
                        T sum = 0;
                        for (std::int64_t d = d0; d < d1; ++d)
                            for (std::int64_t h = h0; h < h1; ++h) {
                                const T* row = xp + (d * g.in[1] + h) * g.in[2];
                                for (std::int64_t w = w0; w < w1; ++w) sum += row[w];
                            }
                        yp[(i * g.out[1] + j) * g.out[2] + k] = sum / static_cast<T>((d1 - d0) * (h1 - h0) * (w1 - w0));
                    }
                }
            }
        }
    }

    // Formula-literal count (cann-bench convention, issue 15) per output element: the box's
    // volume V minus one additions and one division (4), V + 3.
    WorkModel work(const Problem& p) const override {
        const PoolGeometry g = pool_geometry(p);
        const TensorSpec& x = p.input("x").tensors.at(0);
        const TensorSpec& y = p.outputs.at(0).tensors.at(0);
        const DType dtype = x.dtype;
        WorkModel w;
        // Every input element lies in some window: all of x is read.
        w.bytes_read = static_cast<double>(x.bytes());
        w.bytes_written = static_cast<double>(y.bytes());
        // A separable kernel reduces one axis at a time, then scales each output by 1 / volume
        // (one multiply).
        const double planes = static_cast<double>(g.n * g.c);
        w.add_vector(OpClass::add, dtype, planes * separable_additions(g.in, g.out));
        w.add_vector(OpClass::mul, dtype, static_cast<double>(y.numel()));
        w.add_vector_io(dtype, static_cast<double>(x.numel() + y.numel()));
        // cann-bench (docs/hap.md): per output, its window's volume V less one additions and a
        // division; the windows' volumes summed over a plane are the products of the axes'
        // summed window lengths.
        double volume_per_plane = 1;
        for (std::size_t a = 0; a < 3; ++a) {
            double lengths = 0;
            for (std::int64_t i = 0; i < g.out[a]; ++i)
                lengths += static_cast<double>(window_end(i, g.in[a], g.out[a]) - window_start(i, g.in[a], g.out[a]));
            volume_per_plane *= lengths;
        }
        const double outputs = static_cast<double>(y.numel());
        add_formula(w, dtype, FormulaMath::in_fp32, outputs,
                    {{OpClass::add, outputs > 0 ? (planes * volume_per_plane - outputs) / outputs : 0}, {OpClass::div, 1}});
        // Rows of x: a kernel may split even a global pool's sum over cores (partial sums).
        w.parallel_items = planes * static_cast<double>(g.in[0] * g.in[1]);
        w.innermost = g.in[2];
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        Rng& rng = sampler.rng();
        // Output kinds cycled over the cases: divisible windows (oneDNN's pooling path),
        // overlapping windows, global pooling, up-sampling (O > L) and identity on some axes.
        static const std::vector<std::array<Ratio, 3>> kinds = {
            {Ratio::divisible, Ratio::divisible, Ratio::divisible},       {Ratio::overlapping, Ratio::overlapping, Ratio::overlapping},
            {Ratio::global, Ratio::global, Ratio::global},                {Ratio::divisible, Ratio::overlapping, Ratio::divisible},
            {Ratio::upsampling, Ratio::upsampling, Ratio::upsampling},    {Ratio::overlapping, Ratio::divisible, Ratio::overlapping},
            {Ratio::same, Ratio::overlapping, Ratio::overlapping},        {Ratio::divisible, Ratio::divisible, Ratio::global},
            {Ratio::overlapping, Ratio::upsampling, Ratio::divisible},    {Ratio::global, Ratio::overlapping, Ratio::same},
        };
        const std::array<Ratio, 3> kind = sampler.cycle(kinds);
        // Large cases nearer the regime's lower end: a memory-bound operator (and its fp64
        // golden) on 3e7 elements takes long enough to dominate the suite's time.
        double total = static_cast<double>(d.target_elements);
        if (total > 3.2e6) total = 3.1e6 * std::pow(total / 3.1e6, 0.2);
        const std::int64_t n = sampler.pick(std::vector<std::int64_t>{1, 1, 2, 3, 4, 8});
        std::int64_t c = sampler.pick(std::vector<std::int64_t>{3, 7, 16, 32, 64, 127, 257});
        while (c > 1 && static_cast<double>(n * c) * 64 > total) c = std::max<std::int64_t>(1, c / 2);
        const double volume = std::max(8.0, total / static_cast<double>(n * c));
        // D smaller than H and W (4 to 64), H and W near each other; aligned: W a multiple of
        // 512 bytes (128 float32 or 256 float16/bfloat16 elements).
        const std::int64_t align = 512 / static_cast<std::int64_t>(dtype_size(d.dtype));
        std::int64_t depth = std::clamp<std::int64_t>(std::llround(std::cbrt(volume) * rng.uniform(0.3, 0.9)), 2, 64);
        std::int64_t h, w;
        if (d.aligned) {
            w = std::max<std::int64_t>(1, std::llround(std::sqrt(volume / static_cast<double>(depth)) / static_cast<double>(align))) * align;
            h = std::max<std::int64_t>(2, std::llround(volume / static_cast<double>(depth * w)));
            if (static_cast<double>(depth * h * w) > 2 * volume) depth = std::max<std::int64_t>(1, depth / 2);
        } else {
            const double plane = volume / static_cast<double>(depth);
            h = std::max<std::int64_t>(2, std::llround(std::sqrt(plane * rng.uniform(0.6, 1.6))));
            w = std::max<std::int64_t>(3, std::llround(plane / static_cast<double>(h)));
            if (w % 2 == 0) w += 1;
        }
        const std::array<std::int64_t, 3> in{depth, h, w};
        std::array<std::int64_t, 3> o{};
        for (std::size_t a = 0; a < 3; ++a) {
            const std::int64_t l = in[a];
            switch (kind[a]) {
                case Ratio::divisible: {
                    // The largest divisor of l up to l / 2 (or l itself for a prime l, a window of 1).
                    std::vector<std::int64_t> divisors;
                    for (std::int64_t k = 2; k <= l; ++k)
                        if (l % k == 0) divisors.push_back(l / k);
                    o[a] = divisors.empty() ? l : sampler.pick(divisors);
                    break;
                }
                case Ratio::overlapping: {
                    // An output size that does not divide l (overlapping or uneven windows).
                    std::int64_t v = std::max<std::int64_t>(1, std::llround(static_cast<double>(l) / rng.uniform(1.5, 6.0)));
                    for (int tries = 0; tries < 8 && l % v == 0 && v + 1 < l; ++tries) ++v;
                    o[a] = v;
                    break;
                }
                case Ratio::global: o[a] = 1; break;
                // O > L: windows of one or two elements; the output grows by an eighth to a
                // half per axis (a doubling on all three would make the output eight times x).
                case Ratio::upsampling: o[a] = l + std::max<std::int64_t>(1, std::llround(static_cast<double>(l) * rng.uniform(0.125, 0.5))); break;
                case Ratio::same: o[a] = l; break;
            }
        }
        out.inputs.at(0).shapes = {Shape{n, c, depth, h, w}};
        out.attrs = {{"output_size", int_list({o[0], o[1], o[2]})}};
    }

    // float32/bfloat16: +-1e30, so that window sums of up to 1e8 elements stay finite in fp32,
    // the precision kernels accumulate in; float16 keeps its own limit (its sums fit fp32).
    ValueRange boundary_range(DType dtype) const override {
        return dtype == DType::f16 ? ValueRange{-65504, 65504} : ValueRange{-1e30, 1e30};
    }
};

HB_REGISTER_OPERATOR(AdaptiveAvgPool3dOp)

}  // namespace hb
