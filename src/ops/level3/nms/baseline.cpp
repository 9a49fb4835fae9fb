// Baseline for nms: plain C++, torchvision's CPU kernel (oneDNN has no NMS primitive): the
// boxes sorted by descending score, their areas in fp64, then for each box in that order
// that is still unsuppressed, keep it and test every later unsuppressed box, on one thread as
// torchvision does. Each decision depends on the earlier ones, so threads could share only
// the tests of one kept box, at a barrier per kept box: that measured slower than one thread
// (9801 boxes, load about 8 on 2 CPUs: 2.3 s per call against 1.5 s). The test is the operator's (fp64, NaN-propagating
// min/max, NOT (IoU <= threshold) suppresses, so a NaN IoU suppresses where torchvision's
// `IoU > threshold` would keep), evaluated in its order with contraction off (this object is
// built with -march=native, where GCC would otherwise fuse `... - w * h` into an FMA).
#pragma GCC optimize("fp-contract=off")

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "ops/baseline_support.hpp"

using std::int64_t;

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
    std::vector<double> area(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
        area[i] = (double(b[4 * i + 2]) - double(b[4 * i])) * (double(b[4 * i + 3]) - double(b[4 * i + 1]));
    std::vector<char> suppressed(static_cast<size_t>(n), 0);
    auto* out = static_cast<int64_t*>(keep.data);
    int64_t kept = 0;
    for (int64_t a = 0; a < n; ++a) {
        const int64_t i = order[a];
        if (suppressed[i]) continue;
        out[kept++] = i;
        const double x1 = b[4 * i], y1 = b[4 * i + 1], x2 = b[4 * i + 2], y2 = b[4 * i + 3];
        for (int64_t c = a + 1; c < n; ++c) {
            const int64_t j = order[c];
            if (suppressed[j]) continue;
            const double w = nan_max(0.0, nan_min(x2, double(b[4 * j + 2])) - nan_max(x1, double(b[4 * j])));
            const double h = nan_max(0.0, nan_min(y2, double(b[4 * j + 3])) - nan_max(y1, double(b[4 * j + 1])));
            const double inter = w * h;
            const double iou = inter / (((area[i] + area[j]) - inter) + 1e-6);
            if (!(iou <= threshold)) suppressed[j] = 1;
        }
    }
    *keep_arg->written_length = kept;
    return 0;
}
