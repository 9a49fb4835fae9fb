#include "hap/hardware_source.hpp"

#include <filesystem>
#include <iostream>

#include "hap/calibrate.hpp"

namespace hb {

HardwareModel resolve_hardware_model(const std::string& path_or_name, bool quiet, bool recalibrate) {
    if (!path_or_name.empty()) return load_hardware_model(path_or_name);
    if (recalibrate) {
        std::error_code ignored;
        std::filesystem::remove(default_calibration_cache_path(), ignored);
    }
    CalibrateOptions options;
    if (!quiet) options.progress = [](const std::string& line) { std::cerr << "calibrate: " << line << "\n"; };
    return load_or_calibrate(options);
}

nlohmann::json hardware_model_summary(const HardwareModel& model) {
    auto units = nlohmann::json::array();
    for (const auto& u : model.units) {
        nlohmann::json unit = {{"name", u.name}, {"group", u.group}, {"scope", std::string(unit_scope_name(u.scope))}};
        if (u.bytes_per_s) unit["bytes_per_s"] = u.bytes_per_s->value;
        for (const auto& [dtype, figure] : u.flops_per_s) unit["flops_per_s"][std::string(dtype_name(dtype))] = figure.value;
        units.push_back(unit);
    }
    return {{"name", model.name},
            {"kind", std::string(hardware_kind_name(model.kind))},
            {"origin", std::string(peak_origin_name(model.provenance.origin))},
            {"date", model.provenance.date},
            {"host", model.provenance.host},
            {"cpu_model", model.provenance.cpu_model},
            {"method", model.provenance.method},
            {"source_path", model.source_path},
            {"cores", model.cores},
            {"floor_us", model.floor_us},
            {"units", units}};
}

}  // namespace hb
