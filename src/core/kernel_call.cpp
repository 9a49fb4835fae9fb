#include "core/kernel_call.hpp"

#include "core/error.hpp"

namespace hb {

namespace {
std::vector<ArgSpec> specs_of(const std::vector<Arg>& args) {
    std::vector<ArgSpec> specs;
    for (const auto& a : args) {
        ArgSpec s{a.name, a.is_list, a.present, {}};
        s.variable_length = a.variable_length;
        for (const auto& t : a.tensors) s.tensors.push_back(t.spec);
        specs.push_back(std::move(s));
    }
    return specs;
}
}  // namespace

void KernelCall::describe(const TensorSpec& spec, hb_tensor& out) {
    out = hb_tensor{};
    out.dtype = static_cast<hb_dtype>(spec.dtype);
    if (spec.shape.size() > HB_MAX_RANK)
        throw Error("tensor of rank " + std::to_string(spec.shape.size()) + " exceeds HB_MAX_RANK");
    out.rank = static_cast<std::int32_t>(spec.shape.size());
    const Shape strides = contiguous_strides(spec.shape);
    for (std::size_t d = 0; d < spec.shape.size(); ++d) {
        out.shape[d] = spec.shape[d];
        out.strides[d] = strides[d];
    }
}

void KernelCall::bind(const std::vector<ArgSpec>& args, std::vector<hb_arg>& out,
                      std::deque<std::vector<hb_tensor>>& storage) {
    storage.clear();
    out.resize(args.size());
    for (std::size_t a = 0; a < args.size(); ++a) {
        auto& tensors = storage.emplace_back(args[a].tensors.size());
        for (std::size_t k = 0; k < args[a].tensors.size(); ++k) describe(args[a].tensors[k], tensors[k]);
        const char* name = strings_.emplace_back(args[a].name).c_str();
        out[a] = hb_arg{name, args[a].present ? 1 : 0, args[a].is_list ? 1 : 0,
                        static_cast<std::int32_t>(args[a].tensors.size()),
                        tensors.empty() ? nullptr : tensors.data(), nullptr};
    }
}

KernelCall::KernelCall(const std::string& op_name, std::vector<Arg>& inputs, std::vector<Arg>& outputs,
                       const AttrMap& attrs, int num_threads)
    : KernelCall(op_name, specs_of(inputs), specs_of(outputs), attrs, num_threads) {
    for (std::size_t a = 0; a < inputs.size(); ++a)
        for (std::size_t k = 0; k < inputs[a].tensors.size(); ++k) bind_input(a, k, inputs[a].tensors[k].data());
    for (std::size_t a = 0; a < outputs.size(); ++a)
        for (std::size_t k = 0; k < outputs[a].tensors.size(); ++k) bind_output(a, k, outputs[a].tensors[k].data());
}

KernelCall::KernelCall(const std::string& op_name, const std::vector<ArgSpec>& inputs, const std::vector<ArgSpec>& outputs,
                       const AttrMap& attrs, int num_threads)
    : op_name_(op_name) {
    bind(inputs, input_args_, input_tensors_);
    bind(outputs, output_args_, output_tensors_);
    for (const auto& o : outputs) output_variable_length_.push_back(o.variable_length);
    own_lengths_.assign(output_args_.size(), kWrittenLengthUnset);
    bind_written_lengths(own_lengths_.data());
    for (const auto& [name, value] : attrs) {
        hb_attr a{};
        a.name = strings_.emplace_back(name).c_str();
        switch (value.type) {
            case AttrType::none: a.type = HB_ATTR_NONE; break;
            case AttrType::f: a.type = HB_ATTR_FLOAT; a.f = value.f; break;
            case AttrType::i: a.type = HB_ATTR_INT; a.i = value.i; a.f = static_cast<double>(value.i); break;
            case AttrType::b: a.type = HB_ATTR_BOOL; a.i = value.b ? 1 : 0; break;
            case AttrType::s: a.type = HB_ATTR_STRING; a.s = strings_.emplace_back(value.s).c_str(); break;
            case AttrType::int_list:
                a.type = HB_ATTR_INT_LIST;
                a.count = static_cast<std::int32_t>(value.ints.size());
                a.ints = int_lists_.emplace_back(value.ints).data();
                break;
            case AttrType::float_list:
                a.type = HB_ATTR_FLOAT_LIST;
                a.count = static_cast<std::int32_t>(value.floats.size());
                a.floats = float_lists_.emplace_back(value.floats).data();
                break;
        }
        attrs_.push_back(a);
    }
    call_.abi_version = HB_ABI_VERSION;
    call_.op_name = op_name_.c_str();
    call_.num_inputs = static_cast<std::int32_t>(input_args_.size());
    call_.inputs = input_args_.data();
    call_.num_outputs = static_cast<std::int32_t>(output_args_.size());
    call_.outputs = output_args_.data();
    call_.num_attrs = static_cast<std::int32_t>(attrs_.size());
    call_.attrs = attrs_.data();
    call_.num_threads = num_threads;
    call_.error_message = message_.data();
    call_.error_message_capacity = message_.size();
}

void KernelCall::bind_written_lengths(std::int64_t* lengths) {
    lengths_ = lengths;
    for (std::size_t a = 0; a < output_args_.size(); ++a)
        output_args_[a].written_length = output_variable_length_[a] ? &lengths[a] : nullptr;
}

void KernelCall::reset_written_lengths() {
    for (std::size_t a = 0; a < output_args_.size(); ++a)
        if (output_variable_length_[a]) lengths_[a] = kWrittenLengthUnset;
}

void KernelCall::set_workspace(void* data, std::uint64_t bytes) {
    call_.workspace = data;
    call_.workspace_bytes = bytes;
}

const hb_call& KernelCall::shape_only_call() {
    shape_only_ = call_;
    shape_only_tensors_.clear();
    auto strip = [&](const std::vector<hb_arg>& src, std::vector<hb_arg>& dst, const std::deque<std::vector<hb_tensor>>& tensors) {
        dst = src;
        for (std::size_t a = 0; a < src.size(); ++a) {
            auto& copy = shape_only_tensors_.emplace_back(tensors[a]);
            for (auto& t : copy) t.data = nullptr;
            dst[a].tensors = copy.empty() ? nullptr : copy.data();
        }
    };
    strip(input_args_, shape_only_inputs_, input_tensors_);
    strip(output_args_, shape_only_outputs_, output_tensors_);
    shape_only_.inputs = shape_only_inputs_.data();
    shape_only_.outputs = shape_only_outputs_.data();
    shape_only_.workspace = nullptr;
    shape_only_.workspace_bytes = 0;
    return shape_only_;
}

}  // namespace hb
