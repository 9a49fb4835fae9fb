#include "ops/resolve.hpp"

#include "core/error.hpp"

namespace hb {

Problem resolve_problem(const Proto& proto, const Operator& op, const CaseSpec& spec) {
    Problem p;
    p.proto = &proto;
    p.spec = spec;
    for (const auto& def : proto.attrs) {
        auto it = spec.attrs.find(def.name);
        if (it != spec.attrs.end()) {
            p.attrs[def.name] = it->second;
        } else if (def.default_value) {
            p.attrs[def.name] = *def.default_value;
        } else if (def.required) {
            throw Error(spec.where() + ": required attribute '" + def.name + "' is missing");
        } else {
            p.attrs[def.name] = AttrValue{};
        }
    }
    for (std::size_t i = 0; i < proto.inputs.size(); ++i) {
        const auto& def = proto.inputs[i];
        const auto& in = spec.inputs.at(i);
        ArgSpec a;
        a.name = def.name;
        a.is_list = def.is_list;
        a.present = in.present;
        if (in.present)
            for (const auto& s : in.shapes) a.tensors.push_back(TensorSpec{in.dtype, s});
        p.inputs.push_back(std::move(a));
    }
    try {
        p.outputs = op.infer_outputs(p);
    } catch (const Error& e) {
        throw Error(spec.where() + ": " + e.what());
    }
    if (p.outputs.size() != proto.outputs.size())
        throw Error(spec.where() + ": the operator produced " + std::to_string(p.outputs.size()) +
                    " outputs but proto.yaml declares " + std::to_string(proto.outputs.size()), ExitCode::internal);
    return p;
}

}  // namespace hb
