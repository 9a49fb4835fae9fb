// Tensors and arguments as the harness and the worker hold them.
#pragma once

#include <string>
#include <vector>

#include "core/buffer.hpp"
#include "core/dtype.hpp"
#include "core/shape.hpp"

namespace hb {

struct TensorSpec {
    DType dtype = DType::f32;
    Shape shape;
    std::int64_t numel() const { return hb::numel(shape); }
    std::size_t bytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype); }
};

struct Tensor {
    TensorSpec spec;
    Buffer buffer;

    Tensor() = default;
    explicit Tensor(TensorSpec s, bool guard_page = false, Buffer::Contents contents = Buffer::Contents::zeroed)
        : spec(std::move(s)), buffer(spec.bytes(), guard_page, contents) {}
    void* data() const { return buffer.data(); }
    std::int64_t numel() const { return spec.numel(); }
    std::size_t bytes() const { return spec.bytes(); }
    double get(std::size_t i) const { return load_element(data(), i, spec.dtype); }
    void set(std::size_t i, double v) { store_element(data(), i, spec.dtype, v); }
};

// An input or output argument: one tensor, or a list of them (Tensor[]); an optional
// argument that is absent has present == false and no tensors.
struct ArgSpec {
    std::string name;
    bool is_list = false;
    bool present = true;
    std::vector<TensorSpec> tensors;
    // An output whose length depends on the data (unique, nms): dim 0 of each tensor is the
    // capacity the harness allocates, and the kernel reports through *written_length how
    // many leading dim-0 entries it wrote. Only that prefix is judged.
    bool variable_length = false;
};

struct Arg {
    std::string name;
    bool is_list = false;
    bool present = true;
    std::vector<Tensor> tensors;
    // As ArgSpec::variable_length; for such an output returned by a kernel, the length it
    // reported through hb_arg::written_length (-1 for fixed-length arguments).
    bool variable_length = false;
    std::int64_t written_length = -1;
};

// A tensor in memory someone else owns (the harness's mapping of a worker's buffers).
struct TensorView {
    TensorSpec spec;
    char* data = nullptr;
    std::size_t bytes() const { return spec.bytes(); }
};

struct ArgView {
    std::string name;
    bool is_list = false;
    bool present = true;
    bool variable_length = false;
    std::vector<TensorView> tensors;
};

// Arguments over the views' memory (borrowed: never freed), for code written against Arg.
std::vector<Arg> borrow_args(const std::vector<ArgView>& views, const std::vector<std::int64_t>& written_lengths = {});
// Owned copies of the views' contents; `written_lengths` (per argument, from the call that
// wrote them) are kept on the variable-length ones.
std::vector<Arg> copy_args(const std::vector<ArgView>& views, const std::vector<std::int64_t>& written_lengths = {});
// The same into `into`, reusing its memory when it already holds arguments of the views'
// layout (a kept timed call replaced by a later one), as copy_args otherwise.
void copy_args_into(const std::vector<ArgView>& views, const std::vector<std::int64_t>& written_lengths,
                    std::vector<Arg>& into);

// fp64 values of an argument, for goldens and comparison.
struct ArgValues {
    std::string name;
    bool present = true;
    std::vector<TensorSpec> specs;
    std::vector<std::vector<double>> values;
};

std::vector<double> to_f64(const Tensor& t);
// Rounds every value to the spec's dtype (the "truncated golden").
void round_values_to_dtype(std::vector<double>& values, DType t);

}  // namespace hb
