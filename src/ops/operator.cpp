#include "ops/operator.hpp"

namespace hb {

ValueRange Operator::boundary_range(DType dtype) const {
    switch (dtype) {
        case DType::f16: return {-65504.0, 65504.0};
        case DType::bf16:
        case DType::f32: return {-3.0e38, 3.0e38};
        default: return {dtype_lowest(dtype), dtype_max(dtype)};
    }
}

void Operator::fix_inputs(const Problem&, std::vector<Arg>&, Rng&) const {}

}  // namespace hb
