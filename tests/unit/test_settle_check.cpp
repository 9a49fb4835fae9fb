// targets/cpu/settle_check: the output sample taken when a call returns sees a later change,
// of one byte of a large output in the thorough (every byte) form, and of the ends in the
// quick form; unchanged outputs stay unchanged.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "targets/cpu/settle_check.hpp"

namespace hb::cpu {
namespace {

struct Outputs {
    std::vector<float> y = std::vector<float>(3'000'001, 1.5f);
    std::vector<ArgView> views() {
        TensorView t{TensorSpec{DType::f32, Shape{static_cast<std::int64_t>(y.size())}}, reinterpret_cast<char*>(y.data())};
        return {ArgView{"y", false, true, false, {t}}};
    }
};

TEST(OutputSample, EveryByteSeesOneChangedByteOfALargeOutput) {
    std::mt19937_64 rng(11);
    Outputs out;
    for (std::size_t at : {std::size_t{0}, std::size_t{1'234'567}, out.y.size() - 1}) {
        const OutputSample sample(out.views(), rng, true);
        EXPECT_TRUE(sample.unchanged());
        const float was = out.y[at];
        reinterpret_cast<unsigned char*>(&out.y[at])[1] ^= 1;
        EXPECT_FALSE(sample.unchanged()) << "element " << at;
        out.y[at] = was;
        EXPECT_TRUE(sample.unchanged());
    }
}

TEST(OutputSample, TheQuickFormSeesTheEnds) {
    std::mt19937_64 rng(12);
    Outputs out;
    auto* bytes = reinterpret_cast<unsigned char*>(out.y.data());
    for (std::size_t at : {std::size_t{0}, out.y.size() * sizeof(float) - 1}) {
        const OutputSample sample(out.views(), rng, false);
        EXPECT_TRUE(sample.unchanged());
        bytes[at] ^= 0x80;
        EXPECT_FALSE(sample.unchanged()) << "byte " << at;
        bytes[at] ^= 0x80;
    }
}

}  // namespace
}  // namespace hb::cpu
