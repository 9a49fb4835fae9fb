// Argument values for reference computations: fp64 for the golden, fp32 for the
// same-precision reference. One operator writes its math once as a template over T.
#pragma once

#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace hb {

template <typename T>
struct TensorValues {
    TensorSpec spec;
    std::vector<T> v;
    // Outputs of data-dependent length (ArgSpec::variable_length): how many leading dim-0
    // entries of the capacity `spec.shape` hold the result, set by the golden; -1 otherwise.
    std::int64_t written_length = -1;
};

template <typename T>
struct ArgValuesT {
    std::string name;
    bool present = true;
    std::vector<TensorValues<T>> tensors;
    const TensorValues<T>& one() const { return tensors.at(0); }
    TensorValues<T>& one() { return tensors.at(0); }
};

template <typename T>
using ValueArgs = std::vector<ArgValuesT<T>>;

// fp64 arguments from tensors (exact), and conversions between precisions.
ValueArgs<double> values_from_args(const std::vector<Arg>& args);
template <typename To, typename From>
ValueArgs<To> convert_values(const ValueArgs<From>& in) {
    ValueArgs<To> out(in.size());
    for (std::size_t a = 0; a < in.size(); ++a) {
        out[a].name = in[a].name;
        out[a].present = in[a].present;
        for (const auto& t : in[a].tensors) {
            TensorValues<To> c;
            c.spec = t.spec;
            c.v.assign(t.v.begin(), t.v.end());
            c.written_length = t.written_length;
            out[a].tensors.push_back(std::move(c));
        }
    }
    return out;
}
// Empty outputs shaped like the specs, values zero.
template <typename T>
ValueArgs<T> values_for_specs(const std::vector<ArgSpec>& specs) {
    ValueArgs<T> out(specs.size());
    for (std::size_t a = 0; a < specs.size(); ++a) {
        out[a].name = specs[a].name;
        out[a].present = specs[a].present;
        for (const auto& s : specs[a].tensors)
            out[a].tensors.push_back(TensorValues<T>{s, std::vector<T>(static_cast<std::size_t>(s.numel()))});
    }
    return out;
}

}  // namespace hb
