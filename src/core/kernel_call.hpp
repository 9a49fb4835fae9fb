// Builds the hb_call a kernel receives from the harness's arguments and attributes, and
// keeps every array it points into alive.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "hapbench/kernel.h"
#include "suite/attr.hpp"

namespace hb {

// What the harness stores in an output's *written_length before every call (outputs of
// data-dependent length): a kernel that leaves it there did not report a length.
constexpr std::int64_t kWrittenLengthUnset = std::numeric_limits<std::int64_t>::min();

class KernelCall {
  public:
    KernelCall(const std::string& op_name, std::vector<Arg>& inputs, std::vector<Arg>& outputs,
               const AttrMap& attrs, int num_threads);
    KernelCall(const KernelCall&) = delete;
    KernelCall& operator=(const KernelCall&) = delete;

    // Points the call at other tensors of the same shapes (rotated inputs).
    void rebind_inputs(std::vector<Arg>& inputs);
    void set_workspace(void* data, std::uint64_t bytes);
    // The call with null data pointers, for hapbench_workspace_bytes.
    const hb_call& shape_only_call();

    // Outputs of data-dependent length (Arg::variable_length) get a written_length slot;
    // reset it to kWrittenLengthUnset before each call and read it after.
    void reset_written_lengths();
    // The length output `index` reported in the last call; -1 for a fixed-length output.
    std::int64_t written_length(std::size_t index) const;

    const hb_call& call() const { return call_; }
    std::string error_message() const { return std::string(message_.data()); }

  private:
    static void describe(const Tensor& t, hb_tensor& out);
    void bind(std::vector<Arg>& args, std::vector<hb_arg>& out, std::deque<std::vector<hb_tensor>>& storage,
              std::vector<std::int64_t>* written_lengths = nullptr);

    std::string op_name_;
    std::deque<std::string> strings_;
    std::deque<std::vector<hb_tensor>> input_tensors_, output_tensors_;
    std::vector<hb_arg> input_args_, output_args_;
    std::deque<std::vector<std::int64_t>> int_lists_;
    std::deque<std::vector<double>> float_lists_;
    std::vector<hb_attr> attrs_;
    std::vector<std::int64_t> written_lengths_;
    std::vector<char> message_ = std::vector<char>(4096, '\0');
    hb_call call_{};
    hb_call shape_only_{};
    std::deque<std::vector<hb_tensor>> shape_only_tensors_;
    std::vector<hb_arg> shape_only_inputs_, shape_only_outputs_;
};

}  // namespace hb
