// NumPy/PyTorch broadcasting of two inputs, for the binary operators of level 2 (maximum,
// gcd). Two parts: shape inference with a user-facing error (broadcast.cpp, harness only),
// and BroadcastPlan, a header-only walk over the output that the fp64 golden and the
// baseline shared objects share (baselines do not link the harness library, so the plan
// uses nothing but the standard library).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/shape.hpp"

namespace hb {

struct ArgSpec;  // core/tensor.hpp and ops/problem.hpp: declared only, so that the
struct Problem;  // baselines can include the plan without the harness library

// The broadcast shape of a and b: shapes are aligned at their last dimension, missing
// leading dimensions count as 1, and each pair of sizes must be equal or contain a 1.
// Throws hb::Error naming both shapes and the dimension that disagrees.
Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& context);

// The output y of a binary operator on inputs x1 and x2 of one dtype (hapbench does not
// promote mixed dtypes): that dtype, the broadcast shape. Throws hb::Error naming the
// dtypes or the shapes; `op` names the operator in the message.
ArgSpec broadcast_binary_output(const Problem& p, const std::string& op);

// The output of a broadcast binary operation as rows: every dimension but the innermost
// is folded into a row index; within a row input k advances by inner_stride[k] (0 when it
// is broadcast along the innermost dimension, else 1). Dimensions of output size 1 are
// dropped and adjacent dimensions that broadcast the same way are merged, so two inputs of
// equal shape make one row and [2,3,5,1024,256] with [1,1,1,1024,1] makes 30*1024 rows
// of 256 with the second input's inner stride 0.
class BroadcastPlan {
  public:
    BroadcastPlan(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
        const std::size_t rank = std::max(a.size(), b.size());
        std::vector<std::int64_t> out(rank), sa(rank), sb(rank);
        std::int64_t step_a = 1, step_b = 1;
        for (std::size_t i = rank; i-- > 0;) {
            const std::int64_t da = dim_from_end(a, rank - 1 - i), db = dim_from_end(b, rank - 1 - i);
            out[i] = std::max(da, db);
            if (da == 0 || db == 0) out[i] = 0;
            sa[i] = da == 1 ? 0 : step_a;
            sb[i] = db == 1 ? 0 : step_b;
            step_a *= da;
            step_b *= db;
        }
        // Keep dims of size != 1, merging an outer dim into the inner one when both inputs
        // continue their inner dim's stride pattern across it.
        for (std::size_t i = 0; i < rank; ++i) {
            if (out[i] == 1) continue;
            if (!shape_.empty() && stride_a_.back() == sa[i] * out[i] && stride_b_.back() == sb[i] * out[i]) {
                shape_.back() *= out[i];
                stride_a_.back() = sa[i];
                stride_b_.back() = sb[i];
            } else {
                shape_.push_back(out[i]);
                stride_a_.push_back(sa[i]);
                stride_b_.push_back(sb[i]);
            }
        }
        if (shape_.empty()) {  // a 0-d or all-ones output: one element
            shape_ = {1};
            stride_a_ = {0};
            stride_b_ = {0};
        }
        numel_ = 1;
        for (std::int64_t d : shape_) numel_ *= d;
    }

    std::int64_t numel() const { return numel_; }
    std::int64_t row_length() const { return shape_.back(); }
    std::int64_t rows() const { return row_length() == 0 ? 0 : numel_ / row_length(); }
    std::int64_t inner_stride_a() const { return stride_a_.back(); }
    std::int64_t inner_stride_b() const { return stride_b_.back(); }

    // Element offsets of row r's first element in a and b (the output's is r * row_length()).
    void row_offsets(std::int64_t row, std::int64_t& offset_a, std::int64_t& offset_b) const {
        offset_a = offset_b = 0;
        for (std::size_t i = shape_.size() - 1; i-- > 0;) {
            const std::int64_t index = row % shape_[i];
            row /= shape_[i];
            offset_a += index * stride_a_[i];
            offset_b += index * stride_b_[i];
        }
    }

  private:
    static std::int64_t dim_from_end(const std::vector<std::int64_t>& s, std::size_t k) {
        return k < s.size() ? s[s.size() - 1 - k] : 1;
    }
    std::vector<std::int64_t> shape_, stride_a_, stride_b_;
    std::int64_t numel_ = 0;
};

// Calls body(out_offset, offset_a, offset_b, length) over the output in pieces of at most
// `chunk` elements of one row, the pieces spread over OpenMP threads; body applies the
// operation to `length` elements, advancing a and b by the plan's inner strides.
template <typename Body>
void for_each_broadcast_piece(const BroadcastPlan& plan, Body body, std::int64_t chunk = 8192) {
    const std::int64_t row = plan.row_length();
    if (plan.numel() == 0) return;
    const std::int64_t pieces_per_row = (row + chunk - 1) / chunk;
    const std::int64_t pieces = plan.rows() * pieces_per_row;
#ifdef _OPENMP  // the harness library builds without OpenMP; the baselines with it
#pragma omp parallel for schedule(static) if (plan.numel() >= 65536)
#endif
    for (std::int64_t p = 0; p < pieces; ++p) {
        const std::int64_t r = p / pieces_per_row, begin = (p % pieces_per_row) * chunk;
        std::int64_t offset_a, offset_b;
        plan.row_offsets(r, offset_a, offset_b);
        body(r * row + begin, offset_a + begin * plan.inner_stride_a(), offset_b + begin * plan.inner_stride_b(),
             std::min(chunk, row - begin));
    }
}

}  // namespace hb
