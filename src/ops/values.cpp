#include "ops/values.hpp"

namespace hb {

ValueArgs<double> values_from_args(const std::vector<Arg>& args) {
    ValueArgs<double> out(args.size());
    for (std::size_t a = 0; a < args.size(); ++a) {
        out[a].name = args[a].name;
        out[a].present = args[a].present;
        for (const auto& t : args[a].tensors)
            out[a].tensors.push_back({t.spec, to_f64(t), args[a].variable_length ? args[a].written_length : -1});
    }
    return out;
}

}  // namespace hb
