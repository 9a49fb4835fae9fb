#include "eval/golden_cache.hpp"

#include <sys/statvfs.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/cache_dir.hpp"
#include "core/dtype.hpp"
#include "core/dtype_blocks.hpp"
#include "core/error.hpp"
#include "core/sha256.hpp"
#include "suite/inputs.hpp"

namespace hb {

namespace {

constexpr int kFormat = 1;

std::optional<std::uint64_t> free_bytes_at(const std::string& dir) {
    struct statvfs fs {};
    if (statvfs(dir.c_str(), &fs) != 0) return std::nullopt;
    return static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
}

}  // namespace

std::uint64_t golden_cache_limit_bytes() {
    if (const char* env = std::getenv("HAPBENCH_GOLDEN_CACHE_BYTES"); env && *env) return std::strtoull(env, nullptr, 10);
    return 8ull << 30;
}

GoldenCache::GoldenCache(std::string dir, std::uint64_t max_bytes, std::uint64_t min_free_bytes)
    : dir_(std::move(dir)), max_bytes_(max_bytes), min_free_bytes_(min_free_bytes) {
    std::error_code ignored;  // a directory that cannot be made shows as a failed first store
    std::filesystem::create_directories(dir_, ignored);
    bytes_ = trim_directory(dir_, max_bytes_).kept;
}

std::string GoldenCache::key(const Operator& op, const Problem& problem, std::uint64_t input_seed, const std::string& kind) {
    return sha256_hex("hapbench " + kind + " format=" + std::to_string(kFormat) + " golden_version=" +
                      std::to_string(op.golden_version()) + " generator=" + std::to_string(kInputGeneratorVersion) +
                      " seed=" + std::to_string(input_seed) + "\n" + problem.canonical());
}

std::string GoldenCache::path_of(const std::string& key) const { return dir_ + "/" + key.substr(0, 2) + "/" + key + ".bin"; }

void GoldenCache::skip(const std::string& reason) {
    ++not_stored_;
    not_stored_reason_ = reason;
}

void GoldenCache::store(const std::string& key, const ValueArgs<double>& values) {
    if (!writable_) {
        ++not_stored_;  // the reason stays the failed write's
        return;
    }
    // The header first: it gives the entry's size, so an entry that will not be stored is never encoded.
    nlohmann::json header = {{"format", kFormat}, {"outputs", nlohmann::json::array()}};
    std::size_t data_bytes = 0;
    for (const auto& arg : values) {
        nlohmann::json tensors = nlohmann::json::array();
        for (const auto& t : arg.tensors) {
            tensors.push_back({{"dtype", static_cast<int>(t.spec.dtype)}, {"shape", t.spec.shape},
                               {"written_length", t.written_length}, {"count", t.v.size()}});
            data_bytes += t.v.size() * dtype_size(t.spec.dtype);
        }
        header["outputs"].push_back({{"name", arg.name}, {"present", arg.present}, {"tensors", tensors}});
    }
    std::string bytes = header.dump() + "\n";
    const std::size_t entry_bytes = bytes.size() + data_bytes;
    if (entry_bytes > max_bytes_ / 4)
        return skip("an entry of " + std::to_string(entry_bytes >> 20) + " MiB is over a quarter of the cache's limit of " +
                    std::to_string(max_bytes_ >> 20) + " MiB");
    if (const auto free = free_bytes_at(dir_); free && *free < entry_bytes + min_free_bytes_)
        return skip("the disk has " + std::to_string(*free >> 20) + " MiB free, and the cache leaves at least " +
                    std::to_string(min_free_bytes_ >> 20) + " MiB");
    bytes.resize(entry_bytes);
    std::size_t at = entry_bytes - data_bytes;
    for (const auto& arg : values)
        for (const auto& t : arg.tensors) {
            for (std::size_t i = 0; i < t.v.size(); ++i) store_element(bytes.data() + at, i, t.spec.dtype, t.v[i]);
            at += t.v.size() * dtype_size(t.spec.dtype);
        }
    try {
        write_file_atomically(path_of(key), bytes);
    } catch (const Error& e) {
        writable_ = false;
        return skip(std::string(e.what()) + "; storing is off for the rest of the run");
    }
    bytes_ += entry_bytes;
    if (bytes_ > max_bytes_) bytes_ = trim_directory(dir_, max_bytes_).kept;
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
