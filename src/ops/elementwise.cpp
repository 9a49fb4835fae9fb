#include "ops/elementwise.hpp"

namespace hb {

std::vector<ArgSpec> same_shape_output(const Problem& p, const std::string& output_name) {
    ArgSpec out;
    out.name = output_name;
    out.tensors.push_back(p.inputs.at(0).tensors.at(0));
    return {out};
}

void sample_single_tensor(CaseSampler& sampler, CaseSpec& out, int min_rank, int max_rank) {
    const auto& d = sampler.draw();
    const int rank = sampler.pick_rank(min_rank, max_rank);
    out.inputs.at(0).shapes = {sampler.shape(d.target_elements, rank, d.dtype, d.aligned)};
}

WorkModel elementwise_work(const Problem& p, std::initializer_list<std::pair<OpClass, double>> ops_per_element) {
    const auto& x = p.inputs.at(0).tensors.at(0);
    const double n = static_cast<double>(x.numel());
    WorkModel w;
    w.bytes_read = static_cast<double>(x.bytes());
    for (const auto& out : p.outputs)
        for (const auto& t : out.tensors) w.bytes_written += static_cast<double>(t.bytes());
    // fp16/bf16 elementwise math runs in fp32 on the CPU (and in the vector unit's fp32 on
    // accelerators for transcendentals); the hardware model decides the cost per dtype.
    for (const auto& [cls, per_element] : ops_per_element) w.add_vector(cls, x.dtype, per_element * n);
    w.add_vector_io(x.dtype, n);
    for (const auto& out : p.outputs)
        for (const auto& t : out.tensors) w.add_vector_io(t.dtype, static_cast<double>(t.numel()));
    w.parallel_items = n;
    w.innermost = x.shape.empty() ? 1 : x.shape.back();
    return w;
}

WorkModel elementwise_work_in(const Problem& p, std::initializer_list<std::pair<OpClass, double>> ops_per_element,
                              DType compute) {
    const auto& x = p.inputs.at(0).tensors.at(0);
    if (compute == x.dtype) return elementwise_work(p, ops_per_element);
    const double n = static_cast<double>(x.numel());
    WorkModel w = elementwise_work(p, {});
    w.vector_io.clear();  // the casts below are the conversions
    for (const auto& [cls, per_element] : ops_per_element) w.add_vector(cls, compute, per_element * n);
    double stored = 0;
    for (const auto& out : p.outputs)
        for (const auto& t : out.tensors) stored += static_cast<double>(t.numel());
    w.add_vector(OpClass::cast, compute, n + stored);
    return w;
}

}  // namespace hb
