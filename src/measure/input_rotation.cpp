#include "measure/input_rotation.hpp"

#include <cstring>

namespace hb {

std::int64_t variant_shift(std::int64_t n, int variant) {
    if (n <= 1 || variant == 0) return 0;
    std::uint64_t state = static_cast<std::uint64_t>(variant) * 0x632be59bd9b4e019ull;
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return 1 + static_cast<std::int64_t>(z % static_cast<std::uint64_t>(n - 1));
}

std::int64_t variant_element_shift(const TensorSpec& spec, int variant) {
    const std::int64_t n = spec.numel();
    const std::int64_t record = spec.shape.size() >= 2 ? spec.shape.back() : 1;
    // A single record cannot move without coming apart: it stays (the other inputs still change).
    if (record > 1 && record <= max_record_elements) return variant_shift(n / record, variant) * record;
    return variant_shift(n, variant);
}

void fill_variant(const Arg& base, int variant, Arg& dst) {
    for (std::size_t k = 0; k < base.tensors.size(); ++k) {
        const Tensor& src = base.tensors[k];
        Tensor& out = dst.tensors[k];
        const std::size_t elem = dtype_size(src.spec.dtype);
        const auto n = src.numel();
        const auto shift = variant_element_shift(src.spec, variant);
        const auto* s = static_cast<const char*>(src.data());
        auto* d = static_cast<char*>(out.data());
        std::memcpy(d, s + shift * static_cast<std::int64_t>(elem), static_cast<std::size_t>(n - shift) * elem);
        std::memcpy(d + (n - shift) * static_cast<std::int64_t>(elem), s, static_cast<std::size_t>(shift) * elem);
    }
}

}  // namespace hb
