// nms(boxes, scores, iou_threshold): torchvision.ops.nms. Boxes [n, 4] are (x1, y1, x2, y2),
// scores [n], both float32. Boxes are visited in descending score order; a visited box that is
// not suppressed is kept (appended to the output), and it suppresses every box j with
// NOT (IoU <= iou_threshold): IoU above the threshold, or NaN. In fp64 (the reference
// golden's precision, which a kernel must reproduce: fp32 can flip a decision at the
// threshold), evaluated in this order with no contraction:
//   area_i = (x2_i - x1_i) * (y2_i - y1_i)
//   inter  = max(0, min(x2_i, x2_j) - max(x1_i, x1_j)) * max(0, min(y2_i, y2_j) - max(y1_i, y1_j))
//   IoU    = inter / (((area_i + area_j) - inter) + 1e-6)
// where min and max propagate NaN (a NaN coordinate makes the IoU NaN, so a kept box
// suppresses every NaN box and a kept NaN box everything after it). Equal scores rank by
// position (the inputs never have them, see fix_inputs); a NaN score ranks first (torch's
// descending sort). keep_indices (int64) lists the kept boxes in visiting order; its length
// is data-dependent: capacity n along dim 0, the kernel reports the count through
// *written_length, and only that prefix is judged (verify/written_length.hpp).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {


// Visiting order: descending score, NaN first, equal scores by position.
std::vector<std::int64_t> visiting_order(const std::vector<double>& scores) {
    std::vector<std::int64_t> order(scores.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
        const double x = scores[static_cast<std::size_t>(a)], y = scores[static_cast<std::size_t>(b)];
        if (std::isnan(y)) return false;
        return std::isnan(x) || x > y;
    });
    return order;
}

// Whether kept box k (coordinates in the kept lists) suppresses box j: NOT (IoU <= threshold).
// A NaN coordinate on either side makes the IoU NaN (min/max propagate it), so it suppresses;
// otherwise plain min/max give the same values (up to the sign of a zero intersection, which
// no comparison sees), and the clamps at 0 keep a NaN that inf - inf produces.
struct KeptBoxes {
    std::vector<double> x1, y1, x2, y2, area;
    std::vector<char> has_nan;
};

bool suppresses(const KeptBoxes& kept, std::size_t k, const double* b, double area, bool nan, double threshold) {
    if (nan || kept.has_nan[k]) return true;
    const double w_raw = std::min(kept.x2[k], b[2]) - std::max(kept.x1[k], b[0]);
    const double h_raw = std::min(kept.y2[k], b[3]) - std::max(kept.y1[k], b[1]);
    const double w = w_raw < 0 ? 0.0 : w_raw, h = h_raw < 0 ? 0.0 : h_raw;
    const double inter = w * h;
    const double iou = inter / (((kept.area[k] + area) - inter) + 1e-6);
    return !(iou <= threshold);
}

// The kept boxes, in visiting order. Greedy NMS keeps a box exactly when no box kept before
// it suppresses it, so each box is tested against the kept list (contiguous, stopping at the
// first suppressor) rather than suppressing the later boxes one by one: the same decisions
// in n * kept tests at most.
std::vector<std::int64_t> kept_boxes(const std::vector<double>& boxes, const std::vector<double>& scores, double threshold) {
    const std::size_t n = scores.size();
    const std::vector<std::int64_t> order = visiting_order(scores);
    KeptBoxes kept;
    std::vector<std::int64_t> keep;
    for (std::size_t a = 0; a < n; ++a) {
        const auto i = static_cast<std::size_t>(order[a]);
        const double* b = &boxes[4 * i];
        const double area = (b[2] - b[0]) * (b[3] - b[1]);
        const bool nan = std::isnan(b[0]) || std::isnan(b[1]) || std::isnan(b[2]) || std::isnan(b[3]);
        bool suppressed = false;
        for (std::size_t k = 0; k < keep.size() && !suppressed; ++k) suppressed = suppresses(kept, k, b, area, nan, threshold);
        if (suppressed) continue;
        keep.push_back(static_cast<std::int64_t>(i));
        kept.x1.push_back(b[0]);
        kept.y1.push_back(b[1]);
        kept.x2.push_back(b[2]);
        kept.y2.push_back(b[3]);
        kept.area.push_back(area);
        kept.has_nan.push_back(nan);
    }
    return keep;
}

double threshold_of(const Problem& p) {
    const double t = p.attr_float("iou_threshold");
    if (!std::isfinite(t)) throw Error(p.context() + "iou_threshold must be finite, got " + std::to_string(t));
    return t;
}

}  // namespace

class NmsOp final : public Operator {
  public:
    std::string name() const override { return "nms"; }
    int level() const override { return 3; }
    std::string baseline_description() const override {
        return "C++ as torchvision's CPU nms runs, one thread: boxes sorted by score, then each kept box tests the "
               "later unsuppressed boxes in fp64 (the operator's precision): oneDNN has no NMS primitive, and "
               "threading the tests of each kept box costs a barrier per kept box, measured slower than one thread";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const auto& boxes = p.input("boxes").tensors.at(0);
        const auto& scores = p.input("scores").tensors.at(0);
        if (boxes.shape.size() != 2 || boxes.shape[1] != 4)
            throw Error(p.context() + "boxes must be [n, 4] (x1, y1, x2, y2), got shape " + shape_to_string(boxes.shape));
        const std::int64_t n = boxes.shape[0];
        if (scores.shape != Shape{n})
            throw Error(p.context() + "scores must be [" + std::to_string(n) + "] (one per box), got shape " + shape_to_string(scores.shape));
        if (n < 1) throw Error(p.context() + "nms needs at least one box");
        threshold_of(p);
        ArgSpec keep{"keep_indices", false, true, {TensorSpec{DType::i64, {n}}}};
        keep.variable_length = true;
        return {keep};
    }

    void golden(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const override {
        const auto keep = kept_boxes(in[0].one().v, in[1].one().v, threshold_of(p));
        auto& y = out[0].one();
        for (std::size_t k = 0; k < keep.size(); ++k) y.v[k] = static_cast<double>(keep[k]);
        y.written_length = static_cast<std::int64_t>(keep.size());
    }

    // The operator is defined in fp64 (a kernel's decisions must match it): the
    // same-precision reference is the golden itself.
    void same_precision(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const override {
        golden(p, in, out);
    }

    // Bytes: boxes and scores read once; at least one index written (the first box is always
    // kept; how many more is data-dependent, so the bound charges one). Vector work, also a
    // lower bound: ranking the scores (one comparison per box; a radix sort needs no more), the
    // areas (2 subtractions and a multiply per box), and one IoU test per box after the first
    // (every later box is compared with at least one kept box): 4 min/max, 2 subtractions, 2
    // clamps at 0, a multiply, 3 additions, a division and the comparison. Counted in fp32,
    // whose rates bound fp64's from above on every target. Formula-literal count under the
    // cann-bench cost table: 13 + 4 (the division) operations per IoU test, 3 per area.
    WorkModel work(const Problem& p) const override {
        const auto& boxes = p.input("boxes").tensors.at(0);
        const auto& scores = p.input("scores").tensors.at(0);
        const double n = static_cast<double>(scores.numel());
        const double tests = std::max(0.0, n - 1);
        WorkModel w;
        w.bytes_read = static_cast<double>(boxes.bytes() + scores.bytes());
        w.bytes_written = static_cast<double>(dtype_size(DType::i64));
        w.add_vector(OpClass::cmp, DType::f32, n + 5 * tests);  // ranking; 4 min/max + the test
        w.add_vector(OpClass::add, DType::f32, 2 * n + 7 * tests);  // area subtractions; IoU adds, subs, clamps
        w.add_vector(OpClass::mul, DType::f32, n + tests);
        w.add_vector(OpClass::div, DType::f32, tests);
        w.add_vector_io(DType::f32, 5 * n);
        // cann-bench (docs/hap.md): per box its area (2 subtractions, a multiply) and the score
        // ranking (a compare); per IoU test (the n - 1 every later box needs at least) 6 min/max
        // and clamps, 2 subtractions, a multiply, 3 additions, the division and the compare.
        add_formula_terms(w, DType::f32, FormulaMath::in_fp32, n, {{OpClass::add, 2}, {OpClass::mul, 1}, {OpClass::cmp, 1}});
        add_formula_terms(w, DType::f32, FormulaMath::in_fp32, tests,
                          {{OpClass::cmp, 7}, {OpClass::add, 5}, {OpClass::mul, 1}, {OpClass::div, 1}});
        w.parallel_items = std::max(1.0, n);
        w.innermost = 4;
        return w;
    }

    // Every kept box is tested against every later box, so the work grows as n times the kept
    // count, up to n^2 / 2 (all-zero boxes keep everything): the regimes are scaled to
    // n = min/5 .. 4 min/5 boxes (cpu: 2000 to 8000; the reference's cases have 511 to 4096),
    // which keeps the suite's time budget (at 12000 boxes one call of the torchvision loop
    // took 1.5 s).
    Profile case_profile(const Profile& profile) const override {
        Profile scaled = profile;
        scaled.name = profile.name + " (scaled for nms)";
        scaled.max_elements = profile.min_elements * 4;
        scaled.small_below = profile.min_elements * 8 / 5;
        scaled.medium_below = profile.min_elements * 5 / 2;
        return scaled;
    }

    // [n, 4] boxes can never be aligned (16 bytes per row).
    bool can_align() const override { return false; }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        const std::int64_t n = std::max<std::int64_t>(1, d.target_elements / 5);
        static const std::vector<double> ladder = {0.05, 0.1, 0.2, 0.3, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9};
        double threshold = sampler.cycle(ladder);
        if (d.index >= static_cast<int>(ladder.size()))  // the second pass: off-ladder values
            threshold = std::round(sampler.rng().uniform(0.05, 0.9) * 1000) / 1000;
        // All-zero boxes have IoU exactly 0 with each other: at threshold 0 every pair sits on
        // the tie (IoU == threshold keeps), which a kernel suppressing at >= gets wrong.
        if (d.range_group == RangeGroup::zero) threshold = 0.0;
        out.inputs.at(0).shapes = {{n, 4}};
        out.inputs.at(1).shapes = {{n}};
        out.attrs = {{"iou_threshold", AttrValue::of_float(threshold)}};
    }

    // The reference's input contract: (1) each box's x pair and y pair sorted (x1 <= x2,
    // y1 <= y2; a NaN in a pair makes both NaN); (2) when two scores are equal (or any is NaN,
    // which has no rank), all scores are replaced by a seeded random permutation of
    // {1/n, 2/n, ..., 1}, so the visiting order is strict.
    void fix_inputs(const Problem&, std::vector<Arg>& inputs, Rng& rng) const override {
        Tensor& boxes = inputs.at(0).tensors.at(0);
        Tensor& scores = inputs.at(1).tensors.at(0);
        auto* b = static_cast<float*>(boxes.data());
        const std::int64_t n = scores.numel();
        for (std::int64_t i = 0; i < n; ++i)
            for (int c = 0; c < 2; ++c) {
                float& lo = b[4 * i + c];
                float& hi = b[4 * i + c + 2];
                if (std::isnan(lo) || std::isnan(hi)) {
                    lo = hi = NAN;
                } else if (hi < lo) {
                    std::swap(lo, hi);
                }
            }
        auto* s = static_cast<float*>(scores.data());
        std::vector<float> sorted(s, s + n);
        bool rerank = std::any_of(sorted.begin(), sorted.end(), [](float v) { return std::isnan(v); });
        if (!rerank) {
            std::sort(sorted.begin(), sorted.end());
            rerank = std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
        }
        if (!rerank) return;
        std::vector<std::int64_t> perm(static_cast<std::size_t>(n));
        std::iota(perm.begin(), perm.end(), 1);
        for (std::size_t i = perm.size(); i > 1; --i)
            std::swap(perm[i - 1], perm[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(i) - 1))]);
        for (std::int64_t i = 0; i < n; ++i)
            s[i] = static_cast<float>(static_cast<double>(perm[static_cast<std::size_t>(i)]) / static_cast<double>(n));
    }
};

HB_REGISTER_OPERATOR(NmsOp)

}  // namespace hb
