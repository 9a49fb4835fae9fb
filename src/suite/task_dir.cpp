#include "suite/task_dir.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/sha256.hpp"
#include "suite/cases_file.hpp"

namespace fs = std::filesystem;

namespace hb {

const TaskEntry* TaskDir::find(const std::string& op) const {
    for (const auto& t : tasks)
        if (t.op == op) return &t;
    return nullptr;
}

std::string TaskDir::op_names() const {
    std::string out;
    for (const auto& t : tasks) out += (out.empty() ? "" : ", ") + t.op;
    return out;
}

bool TaskDir::has_cases() const {
    for (const auto& t : tasks)
        if (!t.cases.empty()) return true;
    return false;
}

namespace {
std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}
}  // namespace

TaskDir load_task_dir(const std::string& root, const std::string& profile,
                      const std::vector<std::string>& only_ops) {
    if (!fs::is_directory(root)) throw Error("tasks directory '" + root + "' does not exist");
    TaskDir dir;
    dir.root = root;
    dir.profile = profile;
    struct Found {
        int level;
        std::string op;
        fs::path path;
    };
    std::vector<Found> found;
    for (const auto& level_entry : fs::directory_iterator(root)) {
        const std::string name = level_entry.path().filename().string();
        if (!level_entry.is_directory() || name.rfind("level", 0) != 0) continue;
        int level = 0;
        try {
            level = std::stoi(name.substr(5));
        } catch (const std::exception&) {
            continue;
        }
        for (const auto& op_entry : fs::directory_iterator(level_entry.path()))
            if (op_entry.is_directory() && fs::exists(op_entry.path() / "proto.yaml"))
                found.push_back({level, op_entry.path().filename().string(), op_entry.path()});
    }
    if (found.empty())
        throw Error("tasks directory '" + root + "' holds no levelN/<op>/proto.yaml");
    std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
        return a.level != b.level ? a.level < b.level : a.op < b.op;
    });
    for (const auto& want : only_ops) {
        if (std::none_of(found.begin(), found.end(), [&](const Found& f) { return f.op == want; })) {
            std::string known;
            for (const auto& f : found) known += (known.empty() ? "" : ", ") + f.op;
            throw Error("unknown operator '" + want + "' in " + root + " (known: " + known + ")");
        }
    }
    Sha256 hasher;
    for (const auto& f : found) {
        if (!only_ops.empty() && std::find(only_ops.begin(), only_ops.end(), f.op) == only_ops.end()) continue;
        TaskEntry e;
        e.op = f.op;
        e.level = f.level;
        e.dir = f.path.string();
        const fs::path proto_path = f.path / "proto.yaml";
        fs::path cases_path = f.path / ("cases." + profile + ".yaml");
        if (!fs::exists(cases_path)) cases_path = f.path / "cases.yaml";
        e.cases_file = cases_path.string();
        e.proto = load_proto(proto_path.string(), f.op, f.level);
        if (fs::exists(cases_path)) e.cases = load_cases(cases_path.string(), e.proto);
        hasher.update(read_file(proto_path));
        if (fs::exists(cases_path)) hasher.update(read_file(cases_path));
        dir.tasks.push_back(std::move(e));
    }
    static const char* digits = "0123456789abcdef";
    for (auto byte : hasher.finish()) {
        dir.suite_hash += digits[byte >> 4];
        dir.suite_hash += digits[byte & 15];
    }
    return dir;
}

}  // namespace hb
