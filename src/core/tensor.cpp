#include "core/tensor.hpp"

namespace hb {

std::vector<double> to_f64(const Tensor& t) {
    std::vector<double> out(static_cast<std::size_t>(t.numel()));
#ifdef _OPENMP  // the worker links this file without OpenMP
#pragma omp parallel for schedule(static) if (out.size() >= 65536)
#endif
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = t.get(i);
    return out;
}

void round_values_to_dtype(std::vector<double>& values, DType t) {
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (values.size() >= 65536)
#endif
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = round_to_dtype(values[i], t);
}

}  // namespace hb
