// Work models of the level-2 index operators gather, gcd and cummin, one small case each
// worked by hand (docs/hap.md, "For operator authors").
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>

#include "core/error.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"

namespace hb {
namespace {

const Proto& suite_proto(const std::string& op) {
    static std::map<std::string, Proto> protos;
    auto it = protos.find(op);
    if (it == protos.end())
        it = protos.emplace(op, load_proto(std::string(HB_SOURCE_DIR) + "/suite/level2/" + op + "/proto.yaml", op, 2))
                 .first;
    return it->second;
}

WorkModel work_of(const std::string& op, const std::vector<std::tuple<DType, Shape, std::optional<ValueRange>>>& inputs,
                  AttrMap attrs = {}) {
    CaseSpec c;
    c.op = op;
    c.case_id = 1;
    c.attrs = std::move(attrs);
    for (const auto& [dtype, shape, range] : inputs) {
        CaseInput in;
        in.shapes = {shape};
        in.dtype = dtype;
        in.range = range;
        c.inputs.push_back(in);
    }
    const Operator* o = find_operator(op);
    if (!o) throw Error(op + " is not registered");
    return o->work(resolve_problem(suite_proto(op), *o, c));
}

double elements_of(const WorkModel& w, OpClass c) {
    double n = 0;
    for (const auto& v : w.vector)
        if (v.op_class == c) n += v.elements;
    return n;
}

// gather fp16 x [64, 32] along dim 0 with an int32 index [8, 32]: a 32-byte sector holds 16
// columns of one row; it is skipped only if none of its 16 x 8 draws selects that row:
// (63/64)^128. Reads: the index (8 x 32 x 4 B) and the touched part of x.
TEST(HapLevel2Index, GatherReadsTheSectorsItTouches) {
    const WorkModel w = work_of("gather", {{DType::f16, {64, 32}, std::nullopt}, {DType::i32, {8, 32}, std::nullopt}},
                                {{"dim", AttrValue::of_int(0)}});
    const double x_bytes = 64 * 32 * 2 * (1 - std::pow(63.0 / 64.0, 128));
    EXPECT_NEAR(w.bytes_read, 8 * 32 * 4 + x_bytes, 1e-6);
    EXPECT_EQ(w.bytes_written, 8 * 32 * 2);
}

// Along a contiguous last dim: fp32 rows of 1000 elements are 125 sectors; 10 draws per row
// touch 125 (1 - (124/125)^10) of them, far less than the row.
TEST(HapLevel2Index, GatherAlongTheLastDimReadsSectorsNotRows) {
    const WorkModel w = work_of("gather", {{DType::f32, {4, 1000}, std::nullopt}, {DType::i64, {4, 10}, std::nullopt}},
                                {{"dim", AttrValue::of_int(-1)}});
    const double touched = 125 * (1 - std::pow(124.0 / 125.0, 10));
    EXPECT_NEAR(w.bytes_read, 4 * 10 * 8 + 4 * touched * 32, 1e-6);
}

// gcd int32 [1000] with both inputs in [-10000, 10000]: Euclid's average 0.843 ln 10000 =
// 7.76 steps, each 3 casts + div + mul + sub + cmp + 2 selects, plus two abs per element.
TEST(HapLevel2Index, GcdChargesEuclidStepsForTheRange) {
    const ValueRange r{-10000, 10000};
    const WorkModel w = work_of("gcd", {{DType::i32, {1000}, r}, {DType::i32, {1000}, r}});
    const double steps = 12 * std::log(2.0) / (M_PI * M_PI) * std::log(10000.0);
    EXPECT_NEAR(elements_of(w, OpClass::div), 1000 * steps, 1e-6);
    EXPECT_NEAR(elements_of(w, OpClass::cast), 3000 * steps, 1e-6);
    EXPECT_NEAR(elements_of(w, OpClass::select), 2000 * steps, 1e-6);
    EXPECT_EQ(elements_of(w, OpClass::abs), 2000);
    EXPECT_EQ(w.bytes_read, 8000);
    EXPECT_EQ(w.bytes_written, 4000);
    // A second input in [-1, 1] ends every lane after one step (Lame: log_phi 1 + 1).
    const WorkModel small = work_of("gcd", {{DType::i32, {1000}, r}, {DType::i32, {1000}, ValueRange{-1, 1}}});
    EXPECT_NEAR(elements_of(small, OpClass::div), 1000, 1e-9);
    // Inputs of one value each: one step.
    const WorkModel same = work_of("gcd", {{DType::i32, {1000}, ValueRange{100, 100}}, {DType::i32, {1000}, ValueRange{100, 100}}});
    EXPECT_NEAR(elements_of(same, OpClass::div), 1000, 1e-9);
}

// cummin bf16 [4, 8]: reads 64 B, writes the values (64 B) and int64 indices (256 B); the
// values enter and leave vector compute as bf16.
TEST(HapLevel2Index, CumminWritesValuesAndInt64Indices) {
    const WorkModel w = work_of("cummin", {{DType::bf16, {4, 8}, std::nullopt}}, {{"dim", AttrValue::of_int(-1)}});
    EXPECT_EQ(w.bytes_read, 64);
    EXPECT_EQ(w.bytes_written, 64 + 256);
    ASSERT_EQ(w.vector_io.size(), 1u);
    EXPECT_EQ(w.vector_io[0].dtype, DType::bf16);
    EXPECT_EQ(w.vector_io[0].elements, 64);
}

// arg_max fp16 [6, 10] along dim 0: random data must be read whole (120 B); all-NaN data
// only along the first slice (the first NaN of each line is its answer): 10 x 2 B.
TEST(HapLevel2Index, ArgMaxOnAllNanReadsOnlyTheFirstSlice) {
    const AttrMap attrs = {{"dim", AttrValue::of_int(0)}};
    const WorkModel random = work_of("arg_max", {{DType::f16, {6, 10}, ValueRange{-1, 1}}}, attrs);
    EXPECT_EQ(random.bytes_read, 120);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const WorkModel all_nan = work_of("arg_max", {{DType::f16, {6, 10}, ValueRange{nan, nan}}}, attrs);
    EXPECT_EQ(all_nan.bytes_read, 20);
    EXPECT_EQ(all_nan.bytes_written, random.bytes_written);
}

}  // namespace
}  // namespace hb
