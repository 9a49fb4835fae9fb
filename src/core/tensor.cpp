#include "core/tensor.hpp"

namespace hb {

std::vector<double> to_f64(const Tensor& t) {
    std::vector<double> out(static_cast<std::size_t>(t.numel()));
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = t.get(i);
    return out;
}

void round_values_to_dtype(std::vector<double>& values, DType t) {
    for (auto& v : values) v = round_to_dtype(v, t);
}

}  // namespace hb
