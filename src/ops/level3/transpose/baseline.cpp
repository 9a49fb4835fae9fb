// Baseline for transpose: oneDNN's reorder (ops/reorder_baseline.hpp), the primitive a
// framework's oneDNN backend calls for a layout change. The source is x described in y's
// dimension order with x's strides permuted, the destination a plain row-major y; the reorder
// walks both with its own blocking. Created once per case (in hapbench_workspace_bytes) and
// reused, as a framework caches it.
#include <cstdint>
#include <string>
#include <vector>

#include "ops/reorder_baseline.hpp"

namespace {

using namespace hb::baseline;

std::string describe(const hb_call* call, StridedCopy& copy, const hb_tensor*& x, const hb_tensor*& y) {
    const hb_arg* x_arg = hb_input(call, "x");
    hb_arg* y_arg = hb_output(call, "y");
    const hb_attr* perm = hb_attr_find(call, "perm");
    if (!x_arg || !y_arg || x_arg->count != 1 || y_arg->count != 1) return "transpose: expected input x and output y";
    if (!perm || perm->type != HB_ATTR_INT_LIST) return "transpose: attribute perm (int list) is missing";
    x = &x_arg->tensors[0];
    y = &y_arg->tensors[0];
    if (!hb_is_contiguous(x) || !hb_is_contiguous(y)) return "transpose: the baseline needs contiguous tensors";
    dnnl::memory::data_type type;
    int lanes = 1;
    if (x->dtype != y->dtype || !reorder_type(x->dtype, type, lanes)) return "transpose: unsupported dtype";
    const int rank = x->rank;
    if (perm->count != rank || y->rank != rank) return "transpose: perm must have one entry per dimension of x";
    std::int64_t x_strides[HB_MAX_RANK];
    std::int64_t stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
        x_strides[d] = stride;
        stride *= x->shape[d];
    }
    bool seen[HB_MAX_RANK] = {};
    for (int t = 0; t < rank; ++t) {
        const std::int64_t axis = perm->ints[t] < 0 ? perm->ints[t] + rank : perm->ints[t];
        if (axis < 0 || axis >= rank || seen[axis]) return "transpose: perm is not a permutation";
        seen[axis] = true;
        if (y->shape[t] != x->shape[axis]) return "transpose: y's shape does not match x permuted";
        copy.dims.push_back(y->shape[t]);
        copy.source_strides.push_back(x_strides[axis]);
    }
    copy.dtype = x->dtype;
    return {};
}

}  // namespace

extern "C" HB_EXPORT std::uint64_t hapbench_workspace_bytes(const hb_call* call) {
    StridedCopy copy;
    const hb_tensor *x = nullptr, *y = nullptr;
    if (!describe(call, copy, x, y).empty() || hb_numel(x) == 0) return 0;  // the kernel reports errors
    try {
        reorder_plan(copy);
    } catch (const std::exception&) {
    }
    return 0;
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    StridedCopy copy;
    const hb_tensor *x = nullptr, *y = nullptr;
    if (const std::string error = describe(call, copy, x, y); !error.empty()) return hb_fail(call, 2, error.c_str());
    if (hb_numel(x) == 0) return 0;
    return guarded(call, [&] {
        run_reorder(copy, x->data, y->data);
        return 0;
    });
}
