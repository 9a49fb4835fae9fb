#include "targets/cpu/thread_placement.hpp"

#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/cpu_affinity.hpp"

namespace hb::cpu {

std::vector<pid_t> thread_ids(pid_t pid) {
    std::vector<pid_t> ids;
    DIR* dir = opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
    if (!dir) return ids;
    while (const dirent* e = readdir(dir)) {
        char* end = nullptr;
        const long id = std::strtol(e->d_name, &end, 10);
        if (end != e->d_name && *end == '\0' && id > 0) ids.push_back(static_cast<pid_t>(id));
    }
    closedir(dir);
    // By id, then the main thread moved to the front (ids wrap around: it need not be the smallest).
    std::sort(ids.begin(), ids.end());
    if (const auto main = std::find(ids.begin(), ids.end(), pid); main != ids.end()) std::rotate(ids.begin(), main, main + 1);
    return ids;
}

std::vector<int> cpus_for_thread(std::size_t k, std::size_t thread_count, const std::vector<int>& allotment) {
    if (allotment.empty()) return {};
    if (thread_count <= 1) return allotment;
    return {allotment[k % allotment.size()]};
}

bool ThreadPlacement::update(pid_t pid) {
    const std::vector<pid_t> ids = thread_ids(pid);
    if (ids.empty() || ids == placed_ || allotment_.empty()) return false;
    for (std::size_t k = 0; k < ids.size(); ++k)
        bind_to_cpus(ids[k], cpus_for_thread(k, ids.size(), allotment_));  // false: the thread exited meanwhile
    placed_ = ids;
    ++placements_;
    return true;
}

}  // namespace hb::cpu
