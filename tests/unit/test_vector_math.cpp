// ops/vector_math: the goldens' vector exp agrees with libm's within 4 ulp over the ranges
// goldens see, and gives its special values (NaN, infinities, overflow, underflow, -0).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "ops/vector_math.hpp"

namespace hb {
namespace {

double ulps_apart(double a, double b) {
    if (a == b) return 0;
    const double ulp = std::fabs(std::nextafter(b, std::numeric_limits<double>::infinity()) - b);
    return std::fabs(a - b) / ulp;
}

TEST(VectorMath, ExpIsWithinFourUlpOfLibmAndKeepsItsSpecialValues) {
    std::vector<double> x;
    for (int i = 0; i <= 200000; ++i) x.push_back(-745.0 + 1454.0 * i / 200000.0);  // the whole finite range
    for (int i = 0; i <= 100000; ++i) x.push_back(-1.0 + 2.0 * i / 100000.0);      // near 0, where goldens live
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<double> special{std::nan(""), inf, -inf, 710.0, 1e6, -746.0, -1e6, 0.0, -0.0, 5e-324};
    x.insert(x.end(), special.begin(), special.end());
    std::vector<double> y = x;
    exp_in_place(y.data(), y.size());
    double worst = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double want = std::exp(x[i]);
        if (std::isnan(want)) {
            EXPECT_TRUE(std::isnan(y[i])) << x[i];
            continue;
        }
        if (std::isinf(want) || want == 0) {
            EXPECT_EQ(y[i], want) << x[i];
            continue;
        }
        worst = std::max(worst, ulps_apart(y[i], want));
    }
    EXPECT_LE(worst, 4.0);
    // Every length, including the ends a vector loop does by itself.
    for (std::size_t n : {0, 1, 3, 7, 9, 17}) {
        std::vector<double> v(n, 1.0);
        exp_in_place(v.data(), n);
        for (double e : v) EXPECT_NEAR(e, std::exp(1.0), 4 * 4.5e-16);
    }
}

TEST(VectorMath, TheFloatVersionIsLibmsOwn) {
    std::vector<float> v{-3.5f, 0.0f, 1.25f, 88.0f};
    exp_in_place(v.data(), v.size());
    EXPECT_EQ(v[0], std::exp(-3.5f));
    EXPECT_EQ(v[2], std::exp(1.25f));
    EXPECT_EQ(v[3], std::exp(88.0f));
}

}  // namespace
}  // namespace hb
