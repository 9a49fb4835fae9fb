// hapbench's cache directory ($XDG_CACHE_HOME/hapbench or ~/.cache/hapbench): calibrated
// hardware models, goldens, baseline timings and the machine's split key. Files are written
// whole or not at all (a temporary file renamed into place), readable by this user only. A
// candidate kernel's worker cannot reach any of it (Landlock, docs/security.md); where the
// kernel lacks Landlock the caches of answers (goldens) are not used at all.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace hb {

// The directory, created (mode 0700) on first use.
std::string hapbench_cache_dir();

// Writes `bytes` to `path` atomically (parent directories created, mode 0600).
void write_file_atomically(const std::string& path, const std::string& bytes);
// The whole file, or nothing when it does not exist or cannot be read.
std::optional<std::string> read_file(const std::string& path);

// Removes the least recently written files under `dir` until it holds at most `max_bytes`.
struct Trimmed {
    std::uint64_t removed = 0;  // bytes
    std::uint64_t kept = 0;     // bytes left under `dir`
};
Trimmed trim_directory(const std::string& dir, std::uint64_t max_bytes);

// HMAC-SHA256 of `message` under `key`, hex.
std::string hmac_sha256_hex(const std::string& key, const std::string& message);

// A random key made once per machine and user (cache_dir/split-key), for identifying
// hidden splits in results without revealing their seeds.
std::string machine_split_key();

}  // namespace hb
