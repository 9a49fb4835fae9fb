#include "core/tensor.hpp"

#include <cstring>

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

std::vector<Arg> borrow_args(const std::vector<ArgView>& views, const std::vector<std::int64_t>& written_lengths) {
    std::vector<Arg> args;
    for (const auto& v : views) {
        Arg a{v.name, v.is_list, v.present, {}};
        a.variable_length = v.variable_length;
        if (v.variable_length && args.size() < written_lengths.size()) a.written_length = written_lengths[args.size()];
        for (const auto& t : v.tensors) {
            Tensor tensor;
            tensor.spec = t.spec;
            tensor.buffer = Buffer::borrow(t.data, t.bytes());
            a.tensors.push_back(std::move(tensor));
        }
        args.push_back(std::move(a));
    }
    return args;
}

std::vector<Arg> copy_args(const std::vector<ArgView>& views, const std::vector<std::int64_t>& written_lengths) {
    std::vector<Arg> args;
    for (const auto& v : views) {
        Arg a{v.name, v.is_list, v.present, {}};
        a.variable_length = v.variable_length;
        if (v.variable_length && args.size() < written_lengths.size()) a.written_length = written_lengths[args.size()];
        for (const auto& t : v.tensors) {
            Tensor& tensor = a.tensors.emplace_back(t.spec);
            if (t.bytes()) std::memcpy(tensor.data(), t.data, t.bytes());
        }
        args.push_back(std::move(a));
    }
    return args;
}

}  // namespace hb
