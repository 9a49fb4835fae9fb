#include "ops/foreach_lists.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace hb {

std::vector<Shape> sample_list_shapes(CaseSampler& sampler, std::int64_t elements, int min_rank, int max_rank) {
    const auto& d = sampler.draw();
    const std::int64_t longest_list = std::clamp<std::int64_t>(elements / 1024, 1, 8);
    const auto members = sampler.rng().uniform_int(1, longest_list);
    const int rank = sampler.pick_rank(min_rank, max_rank);
    std::vector<Shape> shapes;
    // Members differ in size (+-40% around an equal share), as real parameter lists do.
    for (std::int64_t m = 0; m < members; ++m) {
        const double share = members == 1 ? 1.0 : sampler.rng().uniform(0.6, 1.4);
        const auto member_elements = static_cast<std::int64_t>(share * static_cast<double>(elements / members));
        shapes.push_back(sampler.shape(std::max<std::int64_t>(1, member_elements), rank, d.dtype, d.aligned));
    }
    return shapes;
}

void check_matching_list(const std::string& op, const ArgSpec& first, const ArgSpec& list) {
    if (list.tensors.size() != first.tensors.size())
        throw Error(op + ": list " + list.name + " has " + std::to_string(list.tensors.size()) +
                    " tensors but " + first.name + " has " + std::to_string(first.tensors.size()));
    for (std::size_t i = 0; i < list.tensors.size(); ++i) {
        const auto& a = first.tensors[i];
        const auto& b = list.tensors[i];
        if (a.shape != b.shape)
            throw Error(op + ": " + list.name + "[" + std::to_string(i) + "] has shape " + shape_to_string(b.shape) +
                        " but " + first.name + "[" + std::to_string(i) + "] has shape " + shape_to_string(a.shape));
        if (a.dtype != b.dtype)
            throw Error(op + ": " + list.name + "[" + std::to_string(i) + "] is " + std::string(dtype_name(b.dtype)) +
                        " but " + first.name + "[" + std::to_string(i) + "] is " + std::string(dtype_name(a.dtype)));
    }
}

double list_bytes(const ArgSpec& list) {
    double bytes = 0;
    for (const auto& t : list.tensors) bytes += static_cast<double>(t.bytes());
    return bytes;
}

double list_elements(const ArgSpec& list) {
    double n = 0;
    for (const auto& t : list.tensors) n += static_cast<double>(t.numel());
    return n;
}

std::int64_t min_innermost(const ArgSpec& list) {
    std::int64_t inner = 0;
    for (const auto& t : list.tensors) {
        const std::int64_t this_inner = t.shape.empty() ? 1 : t.shape.back();
        inner = inner == 0 ? this_inner : std::min(inner, this_inner);
    }
    return std::max<std::int64_t>(inner, 1);
}

}  // namespace hb
