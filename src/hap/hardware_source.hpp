// Which hardware model an evaluation uses: the one named by --hardware, else this machine's
// calibrated model (measured once, then cached).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "hap/hardware_model.hpp"

namespace hb {

// `recalibrate` replaces the cached model with a new measurement.
HardwareModel resolve_hardware_model(const std::string& path_or_name, bool quiet, bool recalibrate = false);
// Name, kind, origin, provenance and every unit's peaks, for the results file.
nlohmann::json hardware_model_summary(const HardwareModel& model);

}  // namespace hb
