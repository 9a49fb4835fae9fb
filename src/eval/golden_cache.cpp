#include "eval/golden_cache.hpp"

#include <cstdlib>
#include <cstring>

#include <nlohmann/json.hpp>

#include "core/cache_dir.hpp"
#include "core/dtype.hpp"
#include "core/dtype_blocks.hpp"
#include "core/sha256.hpp"
#include "suite/inputs.hpp"

namespace hb {

namespace {
constexpr int kFormat = 1;
}

std::uint64_t golden_cache_limit_bytes() {
    if (const char* env = std::getenv("HAPBENCH_GOLDEN_CACHE_BYTES"); env && *env) return std::strtoull(env, nullptr, 10);
    return 8ull << 30;
}

GoldenCache::GoldenCache(std::string dir) : dir_(std::move(dir)) {}

std::string GoldenCache::key(const Operator& op, const Problem& problem, std::uint64_t input_seed, const std::string& kind) {
    return sha256_hex("hapbench " + kind + " format=" + std::to_string(kFormat) + " golden_version=" +
                      std::to_string(op.golden_version()) + " generator=" + std::to_string(kInputGeneratorVersion) +
                      " seed=" + std::to_string(input_seed) + "\n" + problem.canonical());
}

std::string GoldenCache::path_of(const std::string& key) const { return dir_ + "/" + key.substr(0, 2) + "/" + key + ".bin"; }

void GoldenCache::store(const std::string& key, const ValueArgs<double>& values) const {
    nlohmann::json header = {{"format", kFormat}, {"outputs", nlohmann::json::array()}};
    std::string data;
    for (const auto& arg : values) {
        nlohmann::json tensors = nlohmann::json::array();
        for (const auto& t : arg.tensors) {
            tensors.push_back({{"dtype", static_cast<int>(t.spec.dtype)}, {"shape", t.spec.shape},
                               {"written_length", t.written_length}, {"count", t.v.size()}});
            const std::size_t esize = dtype_size(t.spec.dtype);
            const std::size_t at = data.size();
            data.resize(at + t.v.size() * esize);
            for (std::size_t i = 0; i < t.v.size(); ++i) store_element(data.data() + at, i, t.spec.dtype, t.v[i]);
        }
        header["outputs"].push_back({{"name", arg.name}, {"present", arg.present}, {"tensors", tensors}});
    }
    write_file_atomically(path_of(key), header.dump() + "\n" + data);
}

std::optional<ValueArgs<double>> GoldenCache::load(const std::string& key, const Problem& problem) const {
    const auto bytes = read_file(path_of(key));
    if (!bytes) return std::nullopt;
    const auto newline = bytes->find('\n');
    if (newline == std::string::npos) return std::nullopt;
    try {
        const auto header = nlohmann::json::parse(bytes->substr(0, newline));
        if (header.at("format") != kFormat) return std::nullopt;
        const auto& outputs = header.at("outputs");
        if (outputs.size() != problem.outputs.size()) return std::nullopt;
        ValueArgs<double> values = values_for_specs<double>(problem.outputs);
        std::size_t at = newline + 1;
        for (std::size_t a = 0; a < values.size(); ++a) {
            const auto& tensors = outputs[a].at("tensors");
            if (tensors.size() != values[a].tensors.size()) return std::nullopt;
            for (std::size_t k = 0; k < tensors.size(); ++k) {
                auto& t = values[a].tensors[k];
                if (tensors[k].at("dtype").get<int>() != static_cast<int>(t.spec.dtype) ||
                    tensors[k].at("shape").get<Shape>() != t.spec.shape || tensors[k].at("count").get<std::size_t>() != t.v.size())
                    return std::nullopt;
                const std::size_t esize = dtype_size(t.spec.dtype);
                if (at + t.v.size() * esize > bytes->size()) return std::nullopt;
                widen_block(bytes->data() + at, t.v.size(), t.spec.dtype, t.v.data());
                at += t.v.size() * esize;
                t.written_length = tensors[k].at("written_length").get<std::int64_t>();
            }
        }
        if (at != bytes->size()) return std::nullopt;
        return values;
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;
    }
}

}  // namespace hb
