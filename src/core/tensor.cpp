#include "core/tensor.hpp"

#include <algorithm>
#include <cstring>

#include "core/dtype_blocks.hpp"

namespace hb {

namespace {
// Elements converted per block (one thread's share at a time).
constexpr std::size_t kBlock = 32768;
}  // namespace

std::vector<double> to_f64(const Tensor& t) {
    std::vector<double> out(static_cast<std::size_t>(t.numel()));
    const std::size_t blocks = (out.size() + kBlock - 1) / kBlock;
    const auto* bytes = static_cast<const unsigned char*>(t.data());
    const std::size_t esize = dtype_size(t.spec.dtype);
#ifdef _OPENMP  // the worker links this file without OpenMP
#pragma omp parallel for schedule(static) if (blocks > 1)
#endif
    for (std::size_t b = 0; b < blocks; ++b)
        widen_block(bytes + b * kBlock * esize, std::min(kBlock, out.size() - b * kBlock), t.spec.dtype, out.data() + b * kBlock);
    return out;
}

void round_values_to_dtype(std::vector<double>& values, DType t) {
    const std::size_t blocks = (values.size() + kBlock - 1) / kBlock;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (blocks > 1)
#endif
    for (std::size_t b = 0; b < blocks; ++b)
        round_block(values.data() + b * kBlock, std::min(kBlock, values.size() - b * kBlock), t, values.data() + b * kBlock);
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
            Tensor& tensor = a.tensors.emplace_back(t.spec, false, Buffer::Contents::overwritten);
            if (t.bytes()) std::memcpy(tensor.data(), t.data, t.bytes());
        }
        args.push_back(std::move(a));
    }
    return args;
}

void copy_args_into(const std::vector<ArgView>& views, const std::vector<std::int64_t>& written_lengths,
                    std::vector<Arg>& into) {
    bool same_layout = into.size() == views.size();
    for (std::size_t a = 0; same_layout && a < views.size(); ++a) {
        same_layout = into[a].tensors.size() == views[a].tensors.size();
        for (std::size_t k = 0; same_layout && k < views[a].tensors.size(); ++k)
            same_layout = into[a].tensors[k].spec.dtype == views[a].tensors[k].spec.dtype &&
                          into[a].tensors[k].spec.shape == views[a].tensors[k].spec.shape;
    }
    if (!same_layout) {
        into = copy_args(views, written_lengths);
        return;
    }
    for (std::size_t a = 0; a < views.size(); ++a) {
        into[a].written_length = views[a].variable_length && a < written_lengths.size() ? written_lengths[a] : -1;
        for (std::size_t k = 0; k < views[a].tensors.size(); ++k)
            if (views[a].tensors[k].bytes())
                std::memcpy(into[a].tensors[k].data(), views[a].tensors[k].data, views[a].tensors[k].bytes());
    }
}

}  // namespace hb
