// Reading results files back (report/results_reader): write -> read -> write gives the same
// JSON, every field the writer writes is read, and a malformed or truncated file is refused
// with an error naming the file and the field.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/error.hpp"
#include "report/reporter.hpp"
#include "report/results_reader.hpp"

namespace hb {
namespace {

std::string data_file(const std::string& name) { return std::string(HB_TEST_DATA_DIR) + "/results/" + name; }

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string written(const RunResult& run) {
    std::ostringstream out;
    make_reporter("json")->write(run, out);
    return out.str();
}

// A run with every optional part filled: a hidden split, a failing precision verdict with
// the fallback and an index gather, attributes of every type, a non-finite score.
RunResult full_run() {
    RunResult run;
    run.hapbench_version = "0.1.0";
    run.started_at = "2026-12-01T10:00:00Z";
    run.target = "cpu";
    run.submission = "subs/a";
    run.tasks_dir = "suite";
    run.profile = "cpu";
    run.split = "hidden";
    run.split_id = "9f2c";
    run.eval_seed = 18446744073709551615ull;
    run.suite_hash = "abc";
    run.threads = 2;
    run.cpus = {0, 1};
    run.sandbox.landlock_abi = 4;
    run.sandbox.landlock_note = "note";
    run.no_perf = false;
    run.two_trial = true;
    run.live_baseline = true;
    run.op_timeout_s = 300;
    run.build_timeout_s = 600;
    run.timing_plan.warmup = 2;
    run.timing_plan.stopping.min_calls = 7;
    run.timing_plan.stopping.max_time_s = 0.25;
    run.timing_plan.verified_calls = 4;
    run.timing_plan.null_calls = 16;
    run.compiler_version = "g++ 12";
    run.compiler_command = "g++ -O3";
    HardwareModel hw;
    hw.name = "ascend-like";
    hw.kind = HardwareKind::ascend;
    hw.provenance = {PeakOrigin::published, "2026-01-01", "", "", "whitepaper"};
    hw.floor_us = 1;
    hw.cores = 24;
    hw.source_path = "hardware/x.yaml";
    ExecutionUnit cube;
    cube.name = "cube";
    cube.group = "Cube";
    cube.scope = UnitScope::core;
    cube.flops_per_s[DType::f16] = {3.1e14, ""};
    ExecutionUnit mte;
    mte.name = "mte2";
    mte.group = "MTE";
    mte.bytes_per_s = Figure{1.6e12, ""};
    hw.units = {cube, mte};
    run.hardware = hw;
    run.t_hw_convention = "cann-bench";
    run.libraries = {{"onednn", "2.6.3"}};
    run.caches = {true, false, "/c", "why", 1, 2, 5, 3, 4};
    run.phases = {1, 2, 3, 4, 5, 6, 21, 0.5, 0.25, 1.5, 2.5, 3.5};

    OperatorResult op;
    op.op = "arg_max";
    op.level = 2;
    op.state = "evaluated";
    op.baseline = "threaded C++";
    op.build = {"g++ arg_max.cpp", "warning: x", 0.75, true};
    CaseResult c;
    c.op = "arg_max";
    c.level = 2;
    c.case_id = 7;
    c.status = CaseStatus::precision_fail;
    c.message = "output y: 3 indices select the wrong value";
    c.signature = "x:float16[1021, 4097]";
    c.input_elements = 1021 * 4097;
    c.attrs["dim"] = AttrValue::of_int(-1);
    c.attrs["keepdim"] = AttrValue::of_bool(false);
    c.attrs["scale"] = AttrValue::of_float(0.125);
    c.attrs["mode"] = AttrValue::of_string("tanh");
    AttrValue ints;
    ints.type = AttrType::int_list;
    ints.ints = {1, 2, 3};
    c.attrs["axes"] = ints;
    AttrValue floats;
    floats.type = AttrType::float_list;
    floats.floats = {0.5, std::numeric_limits<double>::infinity()};
    c.attrs["bounds"] = floats;
    c.attrs["bias"] = AttrValue();
    c.value_range = "[-inf, inf]";
    c.golden_source = "computed";
    GateResult gate;
    gate.reason = "output y: bad";
    OutputVerdict v;
    v.label = "y";
    v.dtype = DType::f16;
    v.mode = CompareMode::relative;
    v.reason = "bad";
    v.thresholds = thresholds_for(DType::f16, {{DType::f16, 0.01}});
    v.elements = 100;
    v.compared = 90;
    v.mean_rel_err = 0.5;
    v.max_rel_err = std::numeric_limits<double>::infinity();
    v.max_rel_err_index = 3;
    v.max_rel_err_got = std::numeric_limits<double>::quiet_NaN();
    v.max_rel_err_expected = -2.5;
    v.nan_mismatches = 2;
    v.first_nan_mismatch_index = 9;
    v.fallback_ran = true;
    v.candidate_errors = {1, 2, 3};
    v.same_precision_errors = {0, 1, 0};
    v.same_precision_nan = 5;
    v.region_passed = {true, true, false};
    gate.outputs.push_back(v);
    OutputVerdict idx;
    idx.label = "indices";
    idx.dtype = DType::i64;
    idx.mode = CompareMode::index_gather;
    idx.passed = true;
    idx.thresholds = thresholds_for(DType::i64);
    IndexGatherVerdict g;
    g.form = "amax";
    g.dim = 1;
    g.checked = 1021;
    g.first_mismatch_position = 4;
    g.first_mismatch_got = -std::numeric_limits<double>::infinity();
    idx.index_gather = g;
    gate.outputs.push_back(idx);
    c.gate = gate;
    c.verified_timed_calls = 3;
    c.nondeterministic_elements = 11;
    c.candidate.samples_us = {1.5, 2.5};
    c.candidate.stats = summarize(c.candidate.samples_us);
    c.candidate.source = "measured";
    c.candidate.stop_reason = "max_calls";
    c.candidate.unstable = true;
    c.candidate.overhead_us = 3.25;
    c.candidate.overhead_high_us = 4.5;
    c.candidate.clamped_calls = 2;
    c.candidate.unsettled_calls = 1;
    c.baseline_status = "measured";
    c.t_cand_us = 2;
    c.t_base_us = 4;
    c.t_hw_us = 1;
    c.t_hw_bound_us = 1.5;
    c.bottleneck = "MTE";
    c.bottleneck_unit = "mte2";
    c.unit_us = {{"mte2", 1}, {"cube", 0.25}};
    c.score_i = std::numeric_limits<double>::quiet_NaN();
    c.speedup = 2;
    c.audit = {"look at this"};
    op.cases.push_back(c);
    op.score = {1, 0, 0, 20, 0, 0, 20};
    op.geomean_speedup = 2;
    run.operators.push_back(op);
    OperatorResult missing;
    missing.op = "cummin";
    missing.level = 2;
    missing.state = "not_implemented";
    missing.message = "hapbench does not implement cummin yet";
    run.operators.push_back(missing);
    run.level_scores = {{2, 20}};
    run.total_score = 20;
    return run;
}

TEST(ResultsReader, ShippedFilesReadBackToTheSameJson) {
    for (const char* name : {"run_a.json", "run_b.json"}) {
        const std::string path = data_file(name);
        const RunResult run = read_results_file(path);
        const std::string once = written(run);
        // Every field of the file was read: the rewrite holds the same values.
        EXPECT_EQ(nlohmann::json::parse(once), nlohmann::json::parse(read_text(path))) << name;
        EXPECT_EQ(written(read_results_text(once, "rewritten")), once) << name;
    }
}

TEST(ResultsReader, AFileFromBeforeTheFixedSlotsStillReads) {
    // Until 2026-12-03 the plan gave `slot_pool_bytes` (a setting since removed), not
    // `input_slots`, and no load/correctness/timed_calls phases.
    std::string text = read_text(data_file("run_a.json"));
    const std::string now = "    \"input_slots\": 2,\n";
    ASSERT_NE(text.find(now), std::string::npos);
    text.replace(text.find(now), now.size(), "    \"slot_pool_bytes\": 536870912,\n");
    const RunResult run = read_results_text(text, "old run_a.json");
    EXPECT_EQ(run.timing_plan.warmup, 1);
    EXPECT_EQ(run.phases.load_s, 0);
    EXPECT_EQ(written(run), written(read_results_file(data_file("run_a.json"))));
}

TEST(ResultsReader, EveryFieldOfARunBuiltInCodeSurvives) {
    const RunResult original = full_run();
    const std::string once = written(original);
    const RunResult back = read_results_text(once, "memory");
    EXPECT_EQ(written(back), once);
    EXPECT_EQ(back.caches.goldens_not_stored, 5);
    EXPECT_EQ(back.phases.load_s, 1.5);
    EXPECT_EQ(back.phases.correctness_s, 2.5);
    EXPECT_EQ(back.phases.timed_calls_s, 3.5);
    // Typed values, not just the same text.
    ASSERT_EQ(back.operators.size(), 2u);
    const CaseResult& c = back.operators[0].cases.at(0);
    EXPECT_EQ(c.status, CaseStatus::precision_fail);
    EXPECT_EQ(c.attrs.at("dim").type, AttrType::i);
    EXPECT_EQ(c.attrs.at("keepdim").type, AttrType::b);
    EXPECT_EQ(c.attrs.at("scale").type, AttrType::f);
    EXPECT_EQ(c.attrs.at("mode").type, AttrType::s);
    EXPECT_EQ(c.attrs.at("axes").ints, (std::vector<std::int64_t>{1, 2, 3}));
    EXPECT_TRUE(std::isinf(c.attrs.at("bounds").floats.at(1)));
    EXPECT_EQ(c.attrs.at("bias").type, AttrType::none);
    ASSERT_TRUE(c.gate.has_value());
    EXPECT_TRUE(std::isinf(c.gate->outputs[0].max_rel_err));
    EXPECT_TRUE(std::isnan(c.gate->outputs[0].max_rel_err_got));
    EXPECT_EQ(c.gate->outputs[0].first_mismatch_index, -1);
    EXPECT_EQ(c.gate->outputs[0].same_precision_errors.cancellation, 1);
    EXPECT_TRUE(c.gate->outputs[0].thresholds.tau_overridden);
    ASSERT_TRUE(c.gate->outputs[1].index_gather.has_value());
    EXPECT_EQ(c.gate->outputs[1].index_gather->first_mismatch_position, 4);
    EXPECT_TRUE(std::isnan(c.score_i));  // written as null
    EXPECT_EQ(back.eval_seed, 18446744073709551615ull);
    ASSERT_TRUE(back.hardware.has_value());
    EXPECT_EQ(back.hardware->kind, HardwareKind::ascend);
    EXPECT_EQ(back.hardware->units.at(0).flops_per_s.at(DType::f16).value, 3.1e14);
    EXPECT_EQ(back.operators[1].state, "not_implemented");
    EXPECT_TRUE(back.operators[1].cases.empty());
}

TEST(ResultsReader, NoPerfRunWithoutHardwareReadsBackWithout) {
    RunResult run = full_run();
    run.hardware.reset();
    run.no_perf = true;
    const std::string once = written(run);
    const RunResult back = read_results_text(once, "memory");
    EXPECT_FALSE(back.hardware.has_value());
    EXPECT_EQ(written(back), once);
}

TEST(ResultsReader, AttributeTextsComeBackTyped) {
    EXPECT_EQ(attr_from_text("3").type, AttrType::i);
    EXPECT_EQ(attr_from_text("-1.5").type, AttrType::f);
    EXPECT_EQ(attr_from_text("2.0").f, 2.0);
    EXPECT_TRUE(std::isnan(attr_from_text(".nan").f));
    EXPECT_EQ(attr_from_text("true").type, AttrType::b);
    EXPECT_EQ(attr_from_text("null").type, AttrType::none);
    EXPECT_EQ(attr_from_text("[]").type, AttrType::int_list);
    EXPECT_EQ(attr_from_text("[0.5, -.inf]").type, AttrType::float_list);
    // Texts no number of ours writes stay strings: they must write back unchanged.
    EXPECT_EQ(attr_from_text("1.50").type, AttrType::s);
    EXPECT_EQ(attr_from_text("[1,2]").type, AttrType::s);
    EXPECT_EQ(attr_from_text("tanh").s, "tanh");
    EXPECT_EQ(attr_from_text("").type, AttrType::s);
}

// The error a results text gives, or "" when it reads.
std::string error_of(const std::string& text) {
    try {
        read_results_text(text, "bad.json");
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ExitCode::bad_input);
        return e.what();
    }
    return "";
}

std::string edited(const std::function<void(nlohmann::json&)>& edit) {
    auto j = nlohmann::json::parse(read_text(data_file("run_a.json")));
    edit(j);
    return j.dump(2);
}

TEST(ResultsReader, TruncatedOrEmptyFilesAreRefused) {
    const std::string text = read_text(data_file("run_a.json"));
    for (std::size_t cut : {std::size_t{1}, text.size() / 3, text.size() - 3}) {
        const std::string error = error_of(text.substr(0, cut));
        EXPECT_NE(error.find("bad.json: not valid JSON (a truncated or partly written file?)"), std::string::npos) << error;
        EXPECT_NE(error.find("line "), std::string::npos) << error;
    }
    EXPECT_NE(error_of("").find("bad.json: the file is empty"), std::string::npos);
    EXPECT_NE(error_of("[1, 2]").find("expected a results object"), std::string::npos);
    EXPECT_NE(error_of("{\"operators\": []}").find("no schema_version"), std::string::npos);
    try {
        read_results_file(data_file("no_such_file.json"));
        FAIL() << "a missing file was read";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("cannot read results file"), std::string::npos) << e.what();
    }
}

TEST(ResultsReader, MalformedFieldsAreNamed) {
    struct Bad {
        std::function<void(nlohmann::json&)> edit;
        std::string expected;
    };
    const std::vector<Bad> bad = {
        {[](auto& j) { j["schema_version"] = 1; }, "bad.json: schema_version: 1 is not readable by this hapbench"},
        {[](auto& j) { j["cases"][3]["t_cand_us"] = "fast"; },
         "bad.json: cases[3].t_cand_us: expected a number or null, found the string \"fast\""},
        {[](auto& j) { j["operators"][0].erase("op_score"); }, "bad.json: operators[0].op_score: missing"},
        {[](auto& j) { j["cases"][0]["status"] = "GREAT"; }, "bad.json: cases[0].status: unknown status \"GREAT\""},
        {[](auto& j) { j["cases"][1]["passed"] = false; }, "bad.json: cases[1].passed: says false but status PASS is correct"},
        {[](auto& j) { j["cases"][0]["case_id"] = 1.5; }, "bad.json: cases[0].case_id: expected an integer, found the number 1.5"},
        {[](auto& j) { j["cases"][0]["operator"] = "softmax"; },
         "bad.json: cases[0].operator: 'softmax' has no entry in operators[]"},
        {[](auto& j) { j["cases"][1]["case_id"] = j["cases"][0]["case_id"]; }, "is listed twice"},
        {[](auto& j) { j["cases"].erase(j["cases"].begin()); },
         "bad.json: operators[0].cases: gelu counts 5 cases, but cases[] holds 4 of it"},
        {[](auto& j) { j["cases"][0]["precision"]["outputs"][0]["thresholds"]["tau"] = "small"; },
         "bad.json: cases[0].precision.outputs[0].thresholds.tau: expected a number or null"},
        {[](auto& j) { j["cases"][0]["precision"]["outputs"][0]["max_rel_err"] = "huge"; },
         "cases[0].precision.outputs[0].max_rel_err: expected a number, \"nan\", \"inf\" or \"-inf\""},
        {[](auto& j) { j["environment"]["hardware"]["kind"] = "fpga"; },
         "bad.json: environment.hardware.kind: unknown hardware kind \"fpga\""},
        {[](auto& j) { j["level_scores"]["one"] = 3; }, "bad.json: level_scores.one: the key is not a level number"},
        {[](auto& j) { j["suite"]["eval_seed"] = -1; }, "bad.json: suite.eval_seed: expected a non-negative integer"},
        {[](auto& j) { j["cases"] = nlohmann::json::object(); }, "bad.json: cases: expected an array, found an object"},
    };
    for (const auto& b : bad) {
        const std::string error = error_of(edited(b.edit));
        EXPECT_NE(error.find(b.expected), std::string::npos) << "expected: " << b.expected << "\ngot: " << error;
    }
    EXPECT_EQ(error_of(edited([](auto&) {})), "");  // the unedited file reads
}

}  // namespace
}  // namespace hb
