#include "core/build_info.hpp"

namespace hb {

const std::string& hapbench_version() {
    static const std::string v = HAPBENCH_VERSION;
    return v;
}

const std::string& source_dir() {
    static const std::string v = HAPBENCH_SOURCE_DIR;
    return v;
}

const std::string& dnnl_version() {
    static const std::string v = HAPBENCH_DNNL_VERSION;
    return v;
}

}  // namespace hb
