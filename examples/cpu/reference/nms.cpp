// Reference nms (torchvision.ops.nms): boxes visited in descending score order; a box not yet
// suppressed is kept and suppresses every later box whose IoU with it is not <= iou_threshold
// (above it, or NaN). IoU in fp64, in the operator's order:
//   inter / (((area_i + area_j) - inter) + 1e-6)
// with NaN-propagating min/max, and with floating-point contraction off: hapbench compiles
// kernels with -O3 -march=native, where GCC would fuse `... - w * h` into an FMA and round
// differently from the definition, flipping decisions at the threshold. keep_indices has the
// capacity n; the kernel writes the kept count to *written_length. Plain on purpose: one
// thread, torchvision's loop (each kept box tests every later unsuppressed box) over the boxes
// copied into score order, so the loop walks its arrays contiguously.
#pragma GCC optimize("fp-contract=off")

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "hapbench/kernel.h"

namespace {

double nan_min(double a, double b) { return a != a || b != b ? NAN : (a < b ? a : b); }
double nan_max(double a, double b) { return a != a || b != b ? NAN : (a > b ? a : b); }

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* boxes_arg = hb_input(call, "boxes");
    const hb_arg* scores_arg = hb_input(call, "scores");
    hb_arg* keep_arg = hb_output(call, "keep_indices");
    if (!boxes_arg || !scores_arg || !keep_arg || !keep_arg->written_length)
        return hb_fail(call, 1, "nms: expected inputs `boxes`, `scores` and output `keep_indices` (with a written length)");
    const hb_tensor& boxes = boxes_arg->tensors[0];
    const hb_tensor& scores = scores_arg->tensors[0];
    const hb_tensor& keep = keep_arg->tensors[0];
    if (boxes.dtype != HB_FLOAT32 || scores.dtype != HB_FLOAT32 || keep.dtype != HB_INT64 || boxes.rank != 2 ||
        boxes.shape[1] != 4 || scores.rank != 1 || scores.shape[0] != boxes.shape[0] || keep.shape[0] < boxes.shape[0])
        return hb_fail(call, 2, "nms: boxes float32 [n, 4], scores float32 [n], keep_indices int64 with capacity n");
    if (!hb_is_contiguous(&boxes) || !hb_is_contiguous(&scores)) return hb_fail(call, 3, "nms: only contiguous tensors");
    const double threshold = hb_attr_float(call, "iou_threshold", 0.5);
    const int64_t n = boxes.shape[0];
    const auto* b = static_cast<const float*>(boxes.data);
    const auto* s = static_cast<const float*>(scores.data);

    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
        if (s[y] != s[y]) return false;
        return s[x] != s[x] || s[x] > s[y];
    });
    // The boxes laid out in visiting order, one array per coordinate, in fp64.
    std::vector<double> x1(static_cast<size_t>(n)), y1(static_cast<size_t>(n)), x2(static_cast<size_t>(n)),
        y2(static_cast<size_t>(n)), area(static_cast<size_t>(n));
    for (int64_t a = 0; a < n; ++a) {
        const float* box = b + 4 * order[a];
        x1[a] = box[0], y1[a] = box[1], x2[a] = box[2], y2[a] = box[3];
        area[a] = (x2[a] - x1[a]) * (y2[a] - y1[a]);
    }
    std::vector<char> suppressed(static_cast<size_t>(n), 0);
    auto* out = static_cast<int64_t*>(keep.data);
    int64_t kept = 0;
    for (int64_t a = 0; a < n; ++a) {
        if (suppressed[a]) continue;
        out[kept++] = order[a];
        for (int64_t c = a + 1; c < n; ++c) {
            if (suppressed[c]) continue;
            const double w = nan_max(0.0, nan_min(x2[a], x2[c]) - nan_max(x1[a], x1[c]));
            const double h = nan_max(0.0, nan_min(y2[a], y2[c]) - nan_max(y1[a], y1[c]));
            const double inter = w * h;
            const double iou = inter / (((area[a] + area[c]) - inter) + 1e-6);
            if (!(iou <= threshold)) suppressed[c] = 1;
        }
    }
    *keep_arg->written_length = kept;
    return 0;
}
