#include "core/cache_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

#include "core/error.hpp"
#include "core/sha256.hpp"

namespace fs = std::filesystem;

namespace hb {

std::string hapbench_cache_dir() {
    fs::path dir;
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) dir = fs::path(xdg) / "hapbench";
    else if (const char* home = std::getenv("HOME"); home && *home) dir = fs::path(home) / ".cache" / "hapbench";
    else dir = fs::temp_directory_path() / ("hapbench-cache-" + std::to_string(getuid()));
    std::error_code ec;
    fs::create_directories(dir, ec);
    chmod(dir.c_str(), 0700);
    return dir.string();
}

void write_file_atomically(const std::string& path, const std::string& bytes) {
    const fs::path target(path);
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    const std::string temporary = path + ".tmp" + std::to_string(getpid());
    const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) throw Error("cannot write " + temporary, ExitCode::internal);
    std::size_t written = 0;
    while (written < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
        if (n <= 0) {
            close(fd);
            fs::remove(temporary, ec);
            throw Error("cannot write " + temporary + " (disk full?)", ExitCode::internal);
        }
        written += static_cast<std::size_t>(n);
    }
    close(fd);
    fs::rename(temporary, target, ec);
    if (ec) {
        fs::remove(temporary, ec);
        throw Error("cannot move " + temporary + " into place", ExitCode::internal);
    }
}

std::optional<std::string> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream ss;
    ss << in.rdbuf();
    if (!in.good() && !in.eof()) return std::nullopt;
    return ss.str();
}

Trimmed trim_directory(const std::string& dir, std::uint64_t max_bytes) {
    struct Entry {
        fs::path path;
        std::uint64_t bytes;
        fs::file_time_type written;
    };
    std::vector<Entry> entries;
    std::uint64_t total = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (!it->is_regular_file(ec)) continue;
        const auto bytes = static_cast<std::uint64_t>(it->file_size(ec));
        entries.push_back({it->path(), bytes, it->last_write_time(ec)});
        total += bytes;
    }
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.written < b.written; });
    Trimmed t;
    for (const auto& e : entries) {
        if (total - t.removed <= max_bytes) break;
        if (fs::remove(e.path, ec)) t.removed += e.bytes;
    }
    t.kept = total - t.removed;
    return t;
}

std::string hmac_sha256_hex(const std::string& key, const std::string& message) {
    std::string k = key.size() > 64 ? std::string(reinterpret_cast<const char*>(sha256(key).data()), 32) : key;
    k.resize(64, '\0');
    std::string inner(64, '\0'), outer(64, '\0');
    for (int i = 0; i < 64; ++i) {
        inner[i] = static_cast<char>(k[i] ^ 0x36);
        outer[i] = static_cast<char>(k[i] ^ 0x5c);
    }
    const auto inner_digest = sha256(inner + message);
    return sha256_hex(outer + std::string(reinterpret_cast<const char*>(inner_digest.data()), inner_digest.size()));
}

std::string machine_split_key() {
    const std::string path = hapbench_cache_dir() + "/split-key";
    if (auto existing = read_file(path); existing && existing->size() >= 32) return *existing;
    std::random_device entropy;
    std::string key;
    for (int i = 0; i < 32; ++i) key.push_back(static_cast<char>(entropy() & 0xff));
    write_file_atomically(path, key);
    return key;
}

}  // namespace hb
