// Hardware model files: what loads, what is refused with a message naming file, line and
// field, the round trip through to_yaml, and a quick calibration's shape.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "hap/calibrate.hpp"
#include "hap/hardware_model.hpp"

namespace hb {
namespace {

constexpr const char* valid_yaml = R"(name: tiny
kind: cpu
provenance:
  origin: published
  date: 2026-01-01
  method: hand-written for tests
floor_us: 0
cores: 2
units:
  - name: dram
    group: Memory
    per: chip
    serves: [bytes_read, bytes_written]
    bytes_per_s: {value: 2.5e10, source: datasheet}
    source: main memory
  - name: vector
    group: Vector
    per: core
    serves: [vector]
    flops_per_s:
      float32: {value: 1.0e11, source: measured}
    runs_as: {float16: float32}
    runs_as_source: no half arithmetic
    vector_flops_per_element:
      add: {value: 1, source: one lane}
    shares_with: [matrix]
    source: FMA pipes
  - name: matrix
    group: Matrix
    per: core
    serves: [matrix]
    flops_per_s:
      float32: {value: 1.0e11, source: measured}
    flops_per_mac: {value: 2, source: one FMA}
    source: FMA pipes
)";

// Writes `text` to a fresh file under the test temp dir and returns its path.
std::string write_temp(const std::string& name, const std::string& text) {
    const auto dir = std::filesystem::temp_directory_path() / "hb_test_hardware_model";
    std::filesystem::create_directories(dir);
    const auto path = (dir / name).string();
    std::ofstream(path) << text;
    return path;
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
}

// Loads `text` from a file and returns the error message (empty if it loaded).
std::string load_error(const std::string& name, const std::string& text) {
    const std::string path = write_temp(name, text);
    try {
        load_hardware_model(path);
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ExitCode::bad_input);
        return e.what();
    }
    return {};
}

TEST(HardwareModel, LoadsAValidFile) {
    const std::string path = write_temp("valid.yaml", valid_yaml);
    const HardwareModel m = load_hardware_model(path);
    EXPECT_EQ(m.name, "tiny");
    EXPECT_EQ(m.kind, HardwareKind::cpu);
    EXPECT_EQ(m.provenance.origin, PeakOrigin::published);
    EXPECT_EQ(m.cores, 2);
    ASSERT_EQ(m.units.size(), 3u);
    EXPECT_EQ(m.units[0].bytes_per_s->value, 2.5e10);
    EXPECT_EQ(m.units[1].scope, UnitScope::core);
    ASSERT_NE(m.units[1].rate_for(DType::f16), nullptr);
    EXPECT_EQ(m.units[1].rate_for(DType::f16)->value, 1.0e11);
    EXPECT_EQ(m.units[1].rate_for(DType::f64), nullptr);
    EXPECT_EQ(m.source_path, path);
}

TEST(HardwareModel, MissingFieldNamesFileLineAndField) {
    const std::string msg = load_error("missing.yaml", replace(valid_yaml, "    group: Vector\n", ""));
    EXPECT_NE(msg.find("missing.yaml:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("units[1].group"), std::string::npos) << msg;
    const std::string top = load_error("missing_cores.yaml", replace(valid_yaml, "cores: 2\n", ""));
    EXPECT_NE(top.find("'cores'"), std::string::npos) << top;
}

TEST(HardwareModel, UnknownUnitReferenceIsRefused) {
    const std::string msg =
        load_error("unknown_ref.yaml", replace(valid_yaml, "shares_with: [matrix]", "shares_with: [matrx]"));
    EXPECT_NE(msg.find("unknown_ref.yaml:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'matrx'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("units[1].shares_with"), std::string::npos) << msg;
}

TEST(HardwareModel, NegativePeakIsRefusedWithItsLine) {
    const std::string msg =
        load_error("negative.yaml", replace(valid_yaml, "value: 2.5e10", "value: -2.5e10"));
    EXPECT_NE(msg.find("negative.yaml:14"), std::string::npos) << msg;
    EXPECT_NE(msg.find("units[0].bytes_per_s"), std::string::npos) << msg;
    EXPECT_NE(msg.find("positive"), std::string::npos) << msg;
}

TEST(HardwareModel, OtherMistakesAreRefused) {
    // A figure without its source, a misspelt field, a unit serving work it has no rate
    // for, an unknown op class, invalid YAML.
    EXPECT_NE(load_error("nosource.yaml", replace(valid_yaml, "{value: 2.5e10, source: datasheet}", "{value: 2.5e10}"))
                  .find("bytes_per_s.source"),
              std::string::npos);
    EXPECT_NE(load_error("typo.yaml", replace(valid_yaml, "floor_us: 0", "flor_us: 0")).find("unknown field 'flor_us'"),
              std::string::npos);
    EXPECT_NE(load_error("norate.yaml", replace(valid_yaml, "    bytes_per_s: {value: 2.5e10, source: datasheet}\n", ""))
                  .find("no bytes_per_s"),
              std::string::npos);
    EXPECT_NE(load_error("opclass.yaml", replace(valid_yaml, "add: {value: 1", "addd: {value: 1")).find("'addd'"),
              std::string::npos);
    EXPECT_NE(load_error("syntax.yaml", replace(valid_yaml, "cores: 2", "cores: [2")).find("invalid YAML"),
              std::string::npos);
    EXPECT_NE(load_error("kind.yaml", replace(valid_yaml, "kind: cpu", "kind: tpu")).find("cpu | nvidia | ascend"),
              std::string::npos);
}

TEST(HardwareModel, AcceleratorFieldMistakesNameFileAndField) {
    // An unknown exchange mode, a byte rate for a kind that is not bytes, a buffer figure
    // without its source.
    const std::string exch =
        load_error("exchange.yaml", replace(valid_yaml, "cores: 2\n", "cores: 2\ncube_vector_exchange: via_l2\n"));
    EXPECT_NE(exch.find("exchange.yaml"), std::string::npos) << exch;
    EXPECT_NE(exch.find("cube_vector_exchange"), std::string::npos) << exch;
    EXPECT_NE(exch.find("on_chip | global_memory"), std::string::npos) << exch;
    const std::string kind = load_error(
        "bytekind.yaml", replace(valid_yaml, "    bytes_per_s: {value: 2.5e10, source: datasheet}\n",
                                 "    bytes_per_s: {value: 2.5e10, source: datasheet}\n"
                                 "    bytes_per_s_for: {vector: {value: 1, source: x}}\n"));
    EXPECT_NE(kind.find("bytekind.yaml:"), std::string::npos) << kind;
    EXPECT_NE(kind.find("units[0].bytes_per_s_for"), std::string::npos) << kind;
    const std::string buf =
        load_error("buffer.yaml", replace(valid_yaml, "cores: 2\n", "cores: 2\nbuffers: {l0a: {value: 65536}}\n"));
    EXPECT_NE(buf.find("buffer.yaml:"), std::string::npos) << buf;
    EXPECT_NE(buf.find("buffers.l0a"), std::string::npos) << buf;
}

TEST(HardwareModel, ShippedAcceleratorModelsLoadAndRoundTrip) {
    for (const std::string name : {"ascend910b1", "ascend910b2", "ascend910b3", "ascend910b4", "h100-sxm", "h200"}) {
        SCOPED_TRACE(name);
        const HardwareModel m = load_hardware_model(name);
        EXPECT_DOUBLE_EQ(m.floor_us, 1.0);
        const std::string text = to_yaml(m);
        EXPECT_EQ(to_yaml(parse_hardware_model(text, "round trip of " + name)), text);
    }
    const HardwareModel a = load_hardware_model("ascend910b2");
    EXPECT_EQ(a.cores, 24);
    EXPECT_EQ(a.cube_vector_exchange, "global_memory");
    for (const char* unit : {"cube", "vector", "mte1", "mte2", "mte3", "fixpipe"}) EXPECT_NE(a.find_unit(unit), nullptr) << unit;
    const HardwareModel h = load_hardware_model("h200");
    for (const char* unit : {"tensor_core", "fp32_pipe", "sfu", "hbm", "l2"}) EXPECT_NE(h.find_unit(unit), nullptr) << unit;
}

TEST(HardwareModel, BareNameResolvesInTheHardwareDirectory) {
    const HardwareModel m = load_hardware_model("cpu-example");
    EXPECT_EQ(m.kind, HardwareKind::cpu);
    EXPECT_EQ(m.provenance.origin, PeakOrigin::calibrated);
    EXPECT_NE(m.find_unit("dram"), nullptr);
}

TEST(HardwareModel, UnknownNameListsTheKnownModels) {
    try {
        load_hardware_model("no-such-machine");
        FAIL() << "expected an error";
    } catch (const Error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("no-such-machine"), std::string::npos) << msg;
        EXPECT_NE(msg.find("cpu-example"), std::string::npos) << msg;
    }
}

TEST(HardwareModel, ToYamlRoundTrips) {
    for (const std::string& source : {write_temp("round.yaml", valid_yaml),
                                      std::string(HB_SOURCE_DIR) + "/hardware/cpu-example.yaml"}) {
        const HardwareModel original = load_hardware_model(source);
        const std::string text = to_yaml(original);
        const HardwareModel again = parse_hardware_model(text, "round trip of " + source);
        EXPECT_EQ(to_yaml(again), text);
        ASSERT_EQ(again.units.size(), original.units.size());
        for (std::size_t i = 0; i < original.units.size(); ++i) {
            const auto& a = original.units[i];
            const auto& b = again.units[i];
            EXPECT_EQ(a.name, b.name);
            EXPECT_EQ(a.shares_with, b.shares_with);
            EXPECT_EQ(a.serves, b.serves);
            EXPECT_EQ(a.flops_per_s.size(), b.flops_per_s.size());
            for (const auto& [t, f] : a.flops_per_s) {
                EXPECT_EQ(f.value, b.flops_per_s.at(t).value) << "exact after a round trip";
                EXPECT_EQ(f.source, b.flops_per_s.at(t).source);
            }
            if (a.bytes_per_s) {
                EXPECT_EQ(a.bytes_per_s->value, b.bytes_per_s->value);
            }
            EXPECT_EQ(a.vector_flops_per_element.size(), b.vector_flops_per_element.size());
        }
        EXPECT_EQ(again.provenance.method, original.provenance.method);
    }
}

TEST(CalibrateCpu, QuickModeGivesPositiveFinitePeaksMarkedCalibrated) {
    CalibrateOptions options;
    options.quick = true;
    options.dram_buffer_bytes = std::size_t(64) << 20;
    const HardwareModel m = calibrate_cpu(options);
    EXPECT_EQ(m.provenance.origin, PeakOrigin::calibrated);
    EXPECT_FALSE(m.provenance.cpu_model.empty());
    EXPECT_GE(m.cores, 1);
    ASSERT_NE(m.find_unit("dram"), nullptr);
    ASSERT_NE(m.find_unit("vector"), nullptr);
    for (const auto& u : m.units) {
        if (u.bytes_per_s) {
            EXPECT_TRUE(std::isfinite(u.bytes_per_s->value) && u.bytes_per_s->value > 0) << u.name;
            EXPECT_NE(u.bytes_per_s->source.find("calibrated"), std::string::npos) << u.name;
        }
        for (const auto& [t, f] : u.flops_per_s) EXPECT_TRUE(std::isfinite(f.value) && f.value > 0) << u.name;
    }
    // What calibrate writes, the loader reads.
    EXPECT_EQ(to_yaml(parse_hardware_model(to_yaml(m), "calibrated")), to_yaml(m));
}

}  // namespace
}  // namespace hb
