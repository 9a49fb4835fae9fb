// Where a case's buffers live in the shared memory between hapbench and a worker, the same
// numbers on both sides. Two regions: the input region holds `slots` copies of the inputs
// (each timed call reads a slot the harness has just filled with fresh values), mapped
// read-only in the worker; the output region holds the outputs and the workspace, mapped
// read-write. Every tensor ends exactly at a guard page (the first byte past it faults in
// the worker, and the harness checks the page's canary after each call), so its data starts
// `pages * page - bytes` into its span.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace hb::cpu {

struct TensorPlace {
    TensorSpec spec;
    std::size_t offset = 0;  // of the data, from the start of its region (or slot)
};

struct ArgPlace {
    std::string name;
    bool is_list = false;
    bool present = true;
    bool variable_length = false;
    std::vector<TensorPlace> tensors;
};

struct CallLayout {
    std::size_t page_bytes = 4096;
    std::vector<ArgPlace> inputs;   // offsets within one slot
    std::vector<ArgPlace> outputs;  // offsets within the output region
    std::size_t slot_bytes = 0;     // one slot of inputs, guard pages included
    int slots = 1;
    std::size_t workspace_offset = 0;
    std::uint64_t workspace_bytes = 0;
    std::size_t output_region_bytes = 0;
    // Guard pages, as offsets of their first byte: within a slot, within the output region.
    std::vector<std::size_t> input_guards;
    std::vector<std::size_t> output_guards;

    std::size_t input_region_bytes() const { return slot_bytes * static_cast<std::size_t>(slots); }
    std::size_t input_bytes() const;  // data bytes of one slot
    std::size_t output_bytes() const;  // data bytes of the outputs
};

// Lays the case out: `slots` input slots, outputs, then a workspace of `workspace_bytes`.
CallLayout make_call_layout(const std::vector<ArgSpec>& inputs, const std::vector<ArgSpec>& outputs, int slots,
                            std::uint64_t workspace_bytes, std::size_t page_bytes);

nlohmann::json to_json(const CallLayout& layout);
CallLayout call_layout_from_json(const nlohmann::json& j);

}  // namespace hb::cpu
