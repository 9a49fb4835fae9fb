#include "report/results_reader.hpp"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "report/json_field.hpp"
#include "report/precision_reader.hpp"

namespace hb {

namespace {

// The whole of `text` as an integer or a double; false when anything is left over.
bool whole_int(const std::string& text, std::int64_t& out) {
    if (text.empty()) return false;
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno != 0 || *end != '\0') return false;
    out = v;
    return true;
}

bool whole_double(const std::string& text, double& out) {
    if (text == ".nan") out = std::numeric_limits<double>::quiet_NaN();
    else if (text == ".inf") out = std::numeric_limits<double>::infinity();
    else if (text == "-.inf") out = -std::numeric_limits<double>::infinity();
    else {
        if (text.empty()) return false;
        char* end = nullptr;
        out = std::strtod(text.c_str(), &end);
        if (*end != '\0') return false;
    }
    return true;
}

AttrValue list_from_text(const std::string& text) {
    const std::string inner = text.substr(1, text.size() - 2);
    std::vector<std::string> items;
    for (std::size_t at = 0; !inner.empty();) {
        const auto comma = inner.find(", ", at);
        items.push_back(inner.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
        if (comma == std::string::npos) break;
        at = comma + 2;
    }
    AttrValue ints;
    ints.type = AttrType::int_list;
    bool all_ints = true;
    for (const auto& item : items) {
        std::int64_t v = 0;
        if (!whole_int(item, v)) {
            all_ints = false;
            break;
        }
        ints.ints.push_back(v);
    }
    if (all_ints) return ints;
    AttrValue floats;
    floats.type = AttrType::float_list;
    for (const auto& item : items) {
        double v = 0;
        if (!whole_double(item, v)) return AttrValue::of_string(text);
        floats.floats.push_back(v);
    }
    return floats;
}

HardwareKind read_hardware_kind(const JsonField& f) {
    const std::string name = f.text();
    for (HardwareKind k : {HardwareKind::cpu, HardwareKind::nvidia, HardwareKind::ascend})
        if (hardware_kind_name(k) == name) return k;
    f.fail("unknown hardware kind \"" + name + "\" (known: cpu, nvidia, ascend)");
}

PeakOrigin read_peak_origin(const JsonField& f) {
    const std::string name = f.text();
    for (PeakOrigin o : {PeakOrigin::published, PeakOrigin::calibrated})
        if (peak_origin_name(o) == name) return o;
    f.fail("unknown peak origin \"" + name + "\" (known: published, calibrated)");
}

UnitScope read_unit_scope(const JsonField& f) {
    const std::string name = f.text();
    for (UnitScope s : {UnitScope::chip, UnitScope::core})
        if (unit_scope_name(s) == name) return s;
    f.fail("unknown unit scope \"" + name + "\" (known: chip, core)");
}

// The summary of hardware_model_summary(): what a report needs of the model, not the whole
// model (op costs, buffers and sources stay in the model's own file).
std::optional<HardwareModel> read_hardware(const JsonField& j) {
    if (!j.has("kind")) return std::nullopt;  // {"name": "none", "origin": "not used: --no-perf"}
    HardwareModel m;
    m.name = j["name"].text();
    m.kind = read_hardware_kind(j["kind"]);
    m.provenance.origin = read_peak_origin(j["origin"]);
    m.provenance.date = j["date"].text();
    m.provenance.host = j["host"].text();
    m.provenance.cpu_model = j["cpu_model"].text();
    m.provenance.method = j["method"].text();
    m.source_path = j["source_path"].text();
    m.cores = static_cast<int>(j["cores"].integer());
    m.floor_us = j["floor_us"].real();
    for (const auto& u : j["units"].elements()) {
        ExecutionUnit unit;
        unit.name = u["name"].text();
        unit.group = u["group"].text();
        unit.scope = read_unit_scope(u["scope"]);
        if (u.has("bytes_per_s")) unit.bytes_per_s = Figure{u["bytes_per_s"].real(), ""};
        if (u.has("flops_per_s"))
            for (const auto& [name, rate] : u["flops_per_s"].members()) {
                DType dtype{};
                if (!try_parse_dtype(name, dtype)) rate.fail("unknown dtype \"" + name + "\"");
                unit.flops_per_s[dtype] = Figure{rate.real(), ""};
            }
        m.units.push_back(std::move(unit));
    }
    return m;
}

TimingResult read_timing(const JsonField& j) {
    TimingResult t;
    t.source = j["source"].text_or_empty();
    for (const auto& s : j["samples_us"].elements()) t.samples_us.push_back(s.real());
    t.stats.count = static_cast<int>(j["count"].integer());
    t.stats.median = j["median_us"].real();
    t.stats.min = j["min_us"].real();
    t.stats.max = j["max_us"].real();
    t.stats.mean = j["mean_us"].real();
    t.stats.stddev = j["stddev_us"].real();
    t.stats.relative_iqr = j["relative_iqr"].real();
    t.overhead_us = j["overhead_us"].real();
    t.overhead_high_us = j["overhead_high_us"].real();
    t.clamped_calls = static_cast<int>(j["clamped_calls"].integer());
    t.unsettled_calls = static_cast<int>(j["unsettled_calls"].integer());
    t.warmup_calls = static_cast<int>(j["warmup_calls"].integer());
    t.stop_reason = j["stop_reason"].text();
    t.relative_error = j["median_relative_error"].real();
    t.unstable = j["timing_unstable"].flag();
    return t;
}

CaseStatus read_status(const JsonField& f) {
    const std::string name = f.text();
    const auto status = status_from_name(name);
    if (!status) f.fail("unknown status \"" + name + "\" (docs/results.md lists the statuses)");
    return *status;
}

CaseResult read_case(const JsonField& j) {
    CaseResult c;
    c.op = j["operator"].text();
    c.level = static_cast<int>(j["level"].integer());
    c.case_id = j["case_id"].integer();
    c.status = read_status(j["status"]);
    if (j["passed"].flag() != c.passed())
        j["passed"].fail(fmt::format("says {} but status {} {} correct", j["passed"].flag(), status_name(c.status),
                                     c.passed() ? "is" : "is not"));
    c.message = j["message"].text();
    c.signature = j["signature"].text();
    c.input_elements = j["input_elements"].integer();
    for (const auto& [name, value] : j["attrs"].members()) c.attrs[name] = attr_from_text(value.text());
    c.value_range = j["value_range"].text();
    c.t_cand_us = j["t_cand_us"].real_or(0);
    c.t_base_us = j["t_base_us"].real();
    c.t_base_measured_us = j["t_base_measured_us"].real_or(0);
    c.t_hw_us = j["t_hw_us"].real();
    c.t_hw_bound_us = j["t_hw_bound_us"].real();
    c.bottleneck = j["bottleneck"].text();
    c.bottleneck_unit = j["bottleneck_unit"].text();
    for (const auto& [unit, us] : j["unit_us"].members()) c.unit_us[unit] = us.real();
    c.score_i = j["score"].real();
    c.speedup = j["speedup"].real_or(0);
    if (!j["precision"].is_null()) c.gate = read_gate_result(j["precision"]);
    c.golden_source = j["golden_source"].text_or_empty();
    c.verified_timed_calls = static_cast<int>(j["verified_timed_calls"].integer());
    c.nondeterministic_elements = j["nondeterministic_elements"].integer();
    c.candidate = read_timing(j["candidate_timing"]);
    c.baseline = read_timing(j["baseline_timing"]);
    c.baseline_status = j["baseline_status"].text();
    for (const auto& a : j["audit"].elements()) c.audit.push_back(a.text());
    return c;
}

OperatorResult read_operator(const JsonField& j) {
    OperatorResult op;
    op.op = j["operator"].text();
    op.level = static_cast<int>(j["level"].integer());
    op.state = j["state"].text();
    op.message = j["message"].text();
    op.score.op_score = j["op_score"].real();
    op.score.cases = static_cast<int>(j["cases"].integer());
    op.score.passed = static_cast<int>(j["passed"].integer());
    op.score.structural_failures = static_cast<int>(j["structural_failures"].integer());
    op.score.compile_term = j["compile_term"].real();
    op.score.correctness_term = j["correctness_term"].real();
    op.score.performance_term = j["performance_term"].real();
    op.geomean_speedup = j["geomean_speedup"].real_or(0);
    op.baseline = j["baseline"].text();
    const JsonField build = j["build"];
    op.build.ok = build["ok"].flag();
    op.build.command = build["command"].text();
    op.build.seconds = build["seconds"].real();
    op.build.log = build["log"].text();
    return op;
}

void read_environment(const JsonField& env, RunResult& run) {
    run.threads = static_cast<int>(env["threads"].integer());
    for (const auto& cpu : env["cpus"].elements()) run.cpus.push_back(static_cast<int>(cpu.integer()));
    // Absent from results written before it was recorded.
    if (env.has("harness_threads")) run.harness_threads_passive = env["harness_threads"].text() == "passive";
    const JsonField sandbox = env["sandbox"];
    run.sandbox.enabled = sandbox["enabled"].flag();
    run.sandbox.landlock_abi = static_cast<int>(sandbox["landlock_abi"].integer());
    run.sandbox.landlock_note = sandbox["landlock_note"].text();
    run.compiler_version = env["compiler"]["version"].text();
    run.compiler_command = env["compiler"]["command"].text();
    run.hardware = read_hardware(env["hardware"]);
    for (const auto& [name, version] : env["libraries"].members()) run.libraries[name] = version.text();
}

void read_timing_plan(const JsonField& j, TimingPlan& plan) {
    plan.warmup = static_cast<int>(j["warmup"].integer());
    const JsonField rule = j["stopping_rule"];
    plan.stopping.min_calls = static_cast<int>(rule["min_calls"].integer());
    plan.stopping.max_calls = static_cast<int>(rule["max_calls"].integer());
    plan.stopping.min_time_s = rule["min_time_s"].real();
    plan.stopping.max_time_s = rule["max_time_s"].real();
    plan.stopping.relative_precision = rule["relative_precision"].real();
    plan.verified_calls = static_cast<int>(j["verified_timed_calls"].integer());
    // `input_slots` is fixed (measure/timing_plan.hpp); files from before 2026-12-03 give
    // `slot_pool_bytes` instead, a setting that no longer exists. Neither is read.
    plan.null_calls = static_cast<int>(j["null_calls"].integer());
}

// Cases are listed once for the whole run; each belongs to the operator it names.
void attach_cases(const JsonField& cases, RunResult& run) {
    std::map<std::string, std::size_t> op_index;
    for (std::size_t k = 0; k < run.operators.size(); ++k)
        if (!op_index.emplace(run.operators[k].op, k).second)
            throw Error(fmt::format("{}: operators: '{}' is listed twice", cases.origin(), run.operators[k].op));
    std::set<std::pair<std::string, std::int64_t>> seen;
    for (const auto& field : cases.elements()) {
        CaseResult c = read_case(field);
        const auto it = op_index.find(c.op);
        if (it == op_index.end())
            field["operator"].fail("'" + c.op + "' has no entry in operators[]");
        if (!seen.emplace(c.op, c.case_id).second)
            field["case_id"].fail(fmt::format("case {} of {} is listed twice", c.case_id, c.op));
        OperatorResult& op = run.operators[it->second];
        if (c.level != op.level)
            field["level"].fail(fmt::format("{}, but operators[] puts {} at level {}", c.level, c.op, op.level));
        op.cases.push_back(std::move(c));
    }
    for (std::size_t k = 0; k < run.operators.size(); ++k) {
        const OperatorResult& op = run.operators[k];
        if (static_cast<std::size_t>(op.score.cases) != op.cases.size())
            throw Error(fmt::format("{}: operators[{}].cases: {} counts {} cases, but cases[] holds {} of it",
                                    cases.origin(), k, op.op, op.score.cases, op.cases.size()));
    }
}

}  // namespace

AttrValue attr_from_text(const std::string& text) {
    std::vector<AttrValue> readings;
    if (text == "null") readings.emplace_back();
    if (text == "true" || text == "false") readings.push_back(AttrValue::of_bool(text == "true"));
    std::int64_t i = 0;
    if (whole_int(text, i)) readings.push_back(AttrValue::of_int(i));
    double d = 0;
    if (whole_double(text, d)) readings.push_back(AttrValue::of_float(d));
    if (text.size() >= 2 && text.front() == '[' && text.back() == ']') readings.push_back(list_from_text(text));
    // Keep a reading only when it writes back as the same text (1.50 is no float of ours).
    for (const auto& r : readings)
        if (r.to_string() == text) return r;
    return AttrValue::of_string(text);
}

RunResult read_results(const nlohmann::json& doc, const std::string& origin) {
    const JsonField root(doc, "", origin);
    if (!doc.is_object()) root.fail("expected a results object (written by hapbench eval --out)");
    if (!root.has("schema_version"))
        root.fail("no schema_version: not a results file written by hapbench eval --out");
    const std::int64_t version = root["schema_version"].integer();
    if (version != results_schema_version)
        root["schema_version"].fail(fmt::format("{} is not readable by this hapbench, which reads schema {}: "
                                                "evaluate again with this version",
                                                version, results_schema_version));
    RunResult run;
    run.hapbench_version = root["hapbench_version"].text();
    run.started_at = root["started_at"].text();
    run.target = root["target"].text();
    run.submission = root["submission"].text();
    const JsonField suite = root["suite"];
    run.tasks_dir = suite["tasks_dir"].text();
    run.profile = suite["profile"].text();
    run.split = suite["split"].text();
    run.split_id = suite["split_id"].text_or_empty();
    run.eval_seed = suite["eval_seed"].unsigned_integer();
    run.suite_hash = suite["hash"].text();
    read_environment(root["environment"], run);
    const JsonField options = root["options"];
    run.no_perf = options["no_perf"].flag();
    run.two_trial = options["two_trial"].flag();
    run.live_baseline = options["live_baseline"].flag();
    run.op_timeout_s = options["op_timeout_s"].real();
    run.build_timeout_s = options["build_timeout_s"].real();
    run.t_hw_convention = root["t_hw_convention"].text();
    read_timing_plan(root["timing_plan"], run.timing_plan);
    const JsonField caches = root["caches"];
    run.caches.dir = caches["dir"].text();
    run.caches.goldens = caches["goldens"].flag();
    run.caches.baselines = caches["baselines"].flag();
    run.caches.note = caches["note"].text();
    run.caches.goldens_from_cache = static_cast<int>(caches["goldens_from_cache"].integer());
    run.caches.goldens_computed = static_cast<int>(caches["goldens_computed"].integer());
    if (caches.has("goldens_not_stored"))  // absent in files written before it was added
        run.caches.goldens_not_stored = static_cast<int>(caches["goldens_not_stored"].integer());
    run.caches.baselines_from_cache = static_cast<int>(caches["baselines_from_cache"].integer());
    run.caches.baselines_measured = static_cast<int>(caches["baselines_measured"].integer());
    const JsonField phases = root["phases_s"];
    run.phases.build_s = phases["build"].real();
    run.phases.inputs_s = phases["inputs"].real();
    run.phases.golden_s = phases["golden"].real();
    run.phases.candidate_s = phases["candidate"].real();
    run.phases.baseline_s = phases["baseline"].real();
    run.phases.verify_s = phases["verify"].real();
    run.phases.sandbox_s = phases["sandbox"].real();
    run.phases.prepare_calls_s = phases["prepare_calls"].real();
    // Absent in files written before the split was added.
    if (phases.has("load")) run.phases.load_s = phases["load"].real();
    if (phases.has("correctness")) run.phases.correctness_s = phases["correctness"].real();
    if (phases.has("timed_calls")) run.phases.timed_calls_s = phases["timed_calls"].real();
    run.phases.total_s = phases["total"].real();
    run.total_score = root["total_score"].real();
    for (const auto& [level, score] : root["level_scores"].members()) {
        std::int64_t n = 0;
        if (!whole_int(level, n)) score.fail("the key is not a level number");
        run.level_scores[static_cast<int>(n)] = score.real();
    }
    for (const auto& op : root["operators"].elements()) run.operators.push_back(read_operator(op));
    attach_cases(root["cases"], run);
    return run;
}

RunResult read_results_text(const std::string& text, const std::string& origin) {
    if (text.find_first_not_of(" \t\r\n") == std::string::npos)
        throw Error(origin + ": the file is empty: not a results file (hapbench eval --out FILE writes one)");
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        // "[json.exception.parse_error.101] parse error at line 3, column 1: ..." without the tag.
        std::string what = e.what();
        if (const auto tag = what.find("] "); tag != std::string::npos) what = what.substr(tag + 2);
        throw Error(fmt::format("{}: not valid JSON (a truncated or partly written file?): {}", origin, what));
    }
    return read_results(doc, origin);
}

RunResult read_results_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("cannot read results file '" + path + "' (no such file, or not readable)");
    std::ostringstream text;
    text << in.rdbuf();
    return read_results_text(text.str(), path);
}

}  // namespace hb
