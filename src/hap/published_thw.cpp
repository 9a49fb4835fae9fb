#include "hap/published_thw.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/error.hpp"

namespace hb {

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

// "910b2" names ascend910b2; "h100-sxm" names h100-sxm.
bool names_model(const std::string& published, const HardwareModel& model) {
    const std::string p = lower(published), m = lower(model.name);
    if (p.empty()) return false;
    if (p == m) return true;
    for (const char* prefix : {"ascend", "nvidia-", "nvidia"})
        if (m.starts_with(prefix) && m.substr(std::string(prefix).size()) == p) return true;
    return false;
}

}  // namespace

const double* PublishedThw::find(const std::string& op, std::int64_t case_id) const {
    auto it = t_hw_us.find({op, case_id});
    return it == t_hw_us.end() ? nullptr : &it->second;
}

PublishedThw load_published_thw(const std::string& tasks_dir, const HardwareModel& model) {
    namespace fs = std::filesystem;
    PublishedThw out;
    std::error_code ec;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(tasks_dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (entry.is_regular_file() && name.starts_with("metadata") && entry.path().extension() == ".json")
            files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& path : files) {
        std::ifstream f(path);
        nlohmann::json doc;
        try {
            doc = nlohmann::json::parse(f);
        } catch (const nlohmann::json::exception& e) {
            throw Error(path.string() + ": not valid JSON: " + e.what());
        }
        if (!doc.is_object()) continue;
        const auto meta = doc.find("_metadata");
        if (meta == doc.end() || !meta->is_object() || !meta->contains("hardware") || !(*meta)["hardware"].is_string() ||
            !names_model((*meta)["hardware"].get<std::string>(), model))
            continue;
        for (const auto& [level, ops] : doc.items()) {
            if (level.starts_with("_")) continue;
            if (!ops.is_object()) throw Error(path.string() + ": " + level + ": expected an object of operators");
            for (const auto& [op, cases] : ops.items()) {
                if (!cases.is_object()) throw Error(path.string() + ": " + level + "." + op + ": expected an object of cases");
                for (const auto& [id, value] : cases.items()) {
                    const std::string where = path.string() + ": " + level + "." + op + "." + id;
                    std::int64_t case_id = 0;
                    try {
                        std::size_t used = 0;
                        case_id = std::stoll(id, &used);
                        if (used != id.size()) throw std::invalid_argument(id);
                    } catch (const std::exception&) {
                        throw Error(where + ": the case id is not an integer");
                    }
                    if (!value.is_object() || !value.contains("t_hw_us")) continue;  // no T_HW published for it
                    const auto& t = value["t_hw_us"];
                    if (!t.is_number() || !std::isfinite(t.get<double>()) || t.get<double>() <= 0)
                        throw Error(where + ".t_hw_us: expected a positive number");
                    out.t_hw_us[{op, case_id}] = t.get<double>();
                }
            }
        }
        out.source_path += (out.source_path.empty() ? "" : ", ") + path.string();
    }
    return out;
}

}  // namespace hb
