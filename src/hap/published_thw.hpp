// T_HW values a reference benchmark published for one hardware model, read from its task
// directory (`metadata-<hardware>-*.json` beside the levelN/ folders, as the CANN Bench task
// data ships them), to compare hapbench's bounds with (docs/hap.md, "Published values above
// hapbench's bound"). Read at run time from the user's task directory; never copied.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "hap/hardware_model.hpp"

namespace hb {

struct PublishedThw {
    std::string source_path;  // the metadata file(s) read, comma-separated
    std::map<std::pair<std::string, std::int64_t>, double> t_hw_us;  // (operator, case id)

    // nullptr when nothing was published for the case.
    const double* find(const std::string& op, std::int64_t case_id) const;
};

// The values published in `tasks_dir` for `model`: every metadata*.json file there whose
// `_metadata.hardware` names the model (its name, or its name without a vendor prefix:
// "910b2" for ascend910b2). Empty when there are none. A file that names the model but is
// malformed is an hb::Error naming the file and the entry.
PublishedThw load_published_thw(const std::string& tasks_dir, const HardwareModel& model);

}  // namespace hb
