#include "targets/cpu/call_layout.hpp"

#include "core/error.hpp"

namespace hb::cpu {

namespace {

std::size_t pages_for(std::size_t bytes, std::size_t page) { return bytes == 0 ? 1 : (bytes + page - 1) / page; }

// Places each tensor of `args` from `cursor` on: its pages, then its guard page.
std::vector<ArgPlace> place(const std::vector<ArgSpec>& args, std::size_t page, std::size_t& cursor,
                            std::vector<std::size_t>& guards) {
    std::vector<ArgPlace> placed;
    for (const auto& a : args) {
        ArgPlace p{a.name, a.is_list, a.present, a.variable_length, {}};
        for (const auto& t : a.tensors) {
            const std::size_t span = pages_for(t.bytes(), page) * page;
            p.tensors.push_back({t, cursor + span - t.bytes()});
            cursor += span;
            guards.push_back(cursor);
            cursor += page;
        }
        placed.push_back(std::move(p));
    }
    return placed;
}

std::size_t data_bytes(const std::vector<ArgPlace>& args) {
    std::size_t n = 0;
    for (const auto& a : args)
        for (const auto& t : a.tensors) n += t.spec.bytes();
    return n;
}

nlohmann::json args_to_json(const std::vector<ArgPlace>& args) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& a : args) {
        nlohmann::json tensors = nlohmann::json::array();
        for (const auto& t : a.tensors)
            tensors.push_back({{"dtype", static_cast<int>(t.spec.dtype)}, {"shape", t.spec.shape}, {"offset", t.offset}});
        out.push_back({{"name", a.name}, {"is_list", a.is_list}, {"present", a.present},
                       {"variable_length", a.variable_length}, {"tensors", tensors}});
    }
    return out;
}

std::vector<ArgPlace> args_from_json(const nlohmann::json& j) {
    std::vector<ArgPlace> out;
    for (const auto& a : j) {
        ArgPlace p{a.at("name"), a.at("is_list"), a.at("present"), a.at("variable_length"), {}};
        for (const auto& t : a.at("tensors"))
            p.tensors.push_back({TensorSpec{static_cast<DType>(t.at("dtype").get<int>()), t.at("shape").get<Shape>()},
                                 t.at("offset").get<std::size_t>()});
        out.push_back(std::move(p));
    }
    return out;
}

}  // namespace

std::size_t CallLayout::input_bytes() const { return data_bytes(inputs); }
std::size_t CallLayout::output_bytes() const { return data_bytes(outputs); }

CallLayout make_call_layout(const std::vector<ArgSpec>& inputs, const std::vector<ArgSpec>& outputs, int slots,
                            std::uint64_t workspace_bytes, std::size_t page_bytes) {
    if (slots < 1) throw Error("a case needs at least one input slot", ExitCode::internal);
    CallLayout layout;
    layout.page_bytes = page_bytes;
    layout.slots = slots;
    std::size_t cursor = 0;
    layout.inputs = place(inputs, page_bytes, cursor, layout.input_guards);
    layout.slot_bytes = cursor;
    cursor = 0;
    layout.outputs = place(outputs, page_bytes, cursor, layout.output_guards);
    const std::size_t span = pages_for(workspace_bytes, page_bytes) * page_bytes;
    layout.workspace_offset = cursor + span - workspace_bytes;
    layout.workspace_bytes = workspace_bytes;
    cursor += span;
    layout.output_guards.push_back(cursor);
    cursor += page_bytes;
    layout.output_region_bytes = cursor;
    return layout;
}

nlohmann::json to_json(const CallLayout& layout) {
    return {{"page_bytes", layout.page_bytes},          {"inputs", args_to_json(layout.inputs)},
            {"outputs", args_to_json(layout.outputs)},  {"slot_bytes", layout.slot_bytes},
            {"slots", layout.slots},                     {"workspace_offset", layout.workspace_offset},
            {"workspace_bytes", layout.workspace_bytes}, {"output_region_bytes", layout.output_region_bytes},
            {"input_guards", layout.input_guards},       {"output_guards", layout.output_guards}};
}

CallLayout call_layout_from_json(const nlohmann::json& j) {
    CallLayout layout;
    layout.page_bytes = j.at("page_bytes");
    layout.inputs = args_from_json(j.at("inputs"));
    layout.outputs = args_from_json(j.at("outputs"));
    layout.slot_bytes = j.at("slot_bytes");
    layout.slots = j.at("slots");
    layout.workspace_offset = j.at("workspace_offset");
    layout.workspace_bytes = j.at("workspace_bytes");
    layout.output_region_bytes = j.at("output_region_bytes");
    layout.input_guards = j.at("input_guards").get<std::vector<std::size_t>>();
    layout.output_guards = j.at("output_guards").get<std::vector<std::size_t>>();
    return layout;
}

}  // namespace hb::cpu
