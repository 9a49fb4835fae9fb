// Builds the hb_call a kernel receives from argument specs and attributes, and keeps every
// array it points into alive. Data pointers are bound separately (the worker points them
// into its shared-memory mappings, the unit tests into tensors they own); until they are
// bound they are null, which is the form hapbench_workspace_bytes receives.
#pragma once

#include <deque>
#include <limits>
#include <string>
#include <vector>

#include "core/attr.hpp"
#include "core/tensor.hpp"
#include "hapbench/kernel.h"

namespace hb {

// What the harness stores in an output's *written_length before every call (outputs of
// data-dependent length): a kernel that never sets it is told apart from one that writes -1.
constexpr std::int64_t kWrittenLengthUnset = std::numeric_limits<std::int64_t>::min();

class KernelCall {
  public:
    KernelCall(const std::string& op_name, const std::vector<ArgSpec>& inputs, const std::vector<ArgSpec>& outputs,
               const AttrMap& attrs, int num_threads);
    // Specs taken from, and data bound to, tensors the caller owns.
    KernelCall(const std::string& op_name, std::vector<Arg>& inputs, std::vector<Arg>& outputs, const AttrMap& attrs,
               int num_threads);
    KernelCall(const KernelCall&) = delete;
    KernelCall& operator=(const KernelCall&) = delete;

    void bind_input(std::size_t arg, std::size_t tensor, void* data) { input_tensors_[arg][tensor].data = data; }
    void bind_output(std::size_t arg, std::size_t tensor, void* data) { output_tensors_[arg][tensor].data = data; }
    // Outputs of data-dependent length report through lengths[arg] (one slot per output argument).
    void bind_written_lengths(std::int64_t* lengths);
    // Sets every bound length slot to kWrittenLengthUnset (before a call).
    void reset_written_lengths();
    void set_workspace(void* data, std::uint64_t bytes);
    // The call with null data pointers, for hapbench_workspace_bytes.
    const hb_call& shape_only_call();

    const hb_call& call() const { return call_; }
    std::string error_message() const { return std::string(message_.data()); }
    // What output argument `output_arg` reported, when it has data-dependent length; -1 otherwise.
    std::int64_t written_length(std::size_t output_arg) const {
        return output_variable_length_.at(output_arg) ? lengths_[output_arg] : -1;
    }

  private:
    static void describe(const TensorSpec& spec, hb_tensor& out);
    void bind(const std::vector<ArgSpec>& args, std::vector<hb_arg>& out, std::deque<std::vector<hb_tensor>>& storage);

    std::string op_name_;
    std::deque<std::string> strings_;
    std::deque<std::vector<hb_tensor>> input_tensors_, output_tensors_;
    std::vector<hb_arg> input_args_, output_args_;
    std::vector<bool> output_variable_length_;
    std::deque<std::vector<std::int64_t>> int_lists_;
    std::deque<std::vector<double>> float_lists_;
    std::vector<hb_attr> attrs_;
    std::vector<std::int64_t> own_lengths_;
    std::int64_t* lengths_ = nullptr;
    std::vector<char> message_ = std::vector<char>(4096, '\0');
    hb_call call_{};
    hb_call shape_only_{};
    std::deque<std::vector<hb_tensor>> shape_only_tensors_;
    std::vector<hb_arg> shape_only_inputs_, shape_only_outputs_;
};

}  // namespace hb
