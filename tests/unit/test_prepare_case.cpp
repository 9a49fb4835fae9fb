// eval/prepare_case: a case's base inputs and golden, and what drop_references leaves: the
// same inputs generated again and the same golden read back from the cache (or computed
// again without one) when something asks for them later.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "eval/prepare_case.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"

namespace hb {
namespace {

namespace fs = std::filesystem;

// sigmoid on one float32 input of 5,000 elements (the interface written out: tests do not
// read the reference benchmark's files).
Problem sigmoid_problem() {
    Proto proto;
    proto.op = "sigmoid";
    proto.level = 1;
    proto.file = "(test) sigmoid/proto.yaml";
    InputDef x;
    x.name = "x";
    x.dtypes = {DType::f32};
    proto.inputs.push_back(x);
    OutputDef y;
    y.name = "y";
    y.dtypes = {DType::f32};
    proto.outputs.push_back(y);
    CaseSpec c;
    c.op = "sigmoid";
    c.case_id = 3;
    CaseInput ci;
    ci.shapes = {Shape{5000}};
    ci.dtype = DType::f32;
    c.inputs.push_back(ci);
    return resolve_problem(proto, *find_operator("sigmoid"), c);
}

std::vector<unsigned char> bytes_of(const Tensor& t) {
    const auto* p = static_cast<const unsigned char*>(t.data());
    return {p, p + t.bytes()};
}

void expect_same_after_drop(GoldenCache* cache) {
    PhaseTimes phases;
    const PreparedCase prepared(*find_operator("sigmoid"), sigmoid_problem(), 7, cache, phases);
    const auto inputs = bytes_of(prepared.inputs().at(0).tensors.at(0));
    const std::vector<double> golden = prepared.golden().at(0).one().v;
    ASSERT_EQ(golden.size(), 5000u);
    prepared.drop_references();
    EXPECT_EQ(bytes_of(prepared.inputs().at(0).tensors.at(0)), inputs);
    // The cache keeps a golden rounded to its output's dtype (all the gate reads of it).
    const std::vector<double>& again = prepared.golden().at(0).one().v;
    ASSERT_EQ(again.size(), golden.size());
    for (std::size_t i = 0; i < golden.size(); ++i)
        ASSERT_EQ(static_cast<float>(again[i]), static_cast<float>(golden[i])) << "element " << i;
}

TEST(PreparedCase, AfterDroppingItsReferencesItGivesTheSameInputsAndGoldenWithoutACache) {
    expect_same_after_drop(nullptr);
}

TEST(PreparedCase, AfterDroppingItsReferencesItReadsTheGoldenBackFromTheCache) {
    const fs::path dir = fs::temp_directory_path() / ("hb-prepare-case-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    GoldenCache cache(dir.string(), 1 << 26, 0);
    expect_same_after_drop(&cache);  // computed and stored, then read back
    PhaseTimes phases;
    const PreparedCase again(*find_operator("sigmoid"), sigmoid_problem(), 7, &cache, phases);
    EXPECT_EQ(again.golden_source(), "cache");
    fs::remove_all(dir);
}

}  // namespace
}  // namespace hb
