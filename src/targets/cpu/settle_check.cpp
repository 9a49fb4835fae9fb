#include "targets/cpu/settle_check.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <algorithm>
#include <cstring>

namespace hb::cpu {

double process_cpu_ns(pid_t pid) {
    clockid_t clock;
    if (clock_getcpuclockid(pid, &clock) != 0) return -1;
    timespec ts{};
    if (clock_gettime(clock, &ts) != 0) return -1;
    return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

int runnable_threads(pid_t pid) {
    const std::string dir = "/proc/" + std::to_string(pid) + "/task";
    DIR* d = opendir(dir.c_str());
    if (!d) return 0;
    int runnable = 0;
    while (const dirent* e = readdir(d)) {
        if (e->d_name[0] == '.') continue;
        const int fd = ::open((dir + "/" + e->d_name + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        char buf[512];
        const ssize_t n = ::read(fd, buf, sizeof buf - 1);
        ::close(fd);
        if (n <= 0) continue;
        buf[n] = '\0';
        // "tid (comm) S ...": the state follows the last ')' (comm may hold spaces and parens).
        const char* close_paren = std::strrchr(buf, ')');
        if (close_paren && close_paren[1] == ' ' && close_paren[2] == 'R') ++runnable;
    }
    closedir(d);
    return runnable;
}

bool stays_runnable(pid_t pid, double patience_ns, double poll_ns) {
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
        if (runnable_threads(pid) == 0) return false;
        if (std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() >= patience_ns)
            return true;
        std::this_thread::sleep_for(std::chrono::nanoseconds(static_cast<long long>(poll_ns)));
    }
}

double idle_cpu_allowance_ns(double window_ns) { return 50e3 + 0.005 * window_ns; }

bool too_many_unsettled(int unsettled, int calls) { return unsettled >= kUnsettledFloor && unsettled * 2 > calls; }

double settle_ns(double window_ns, bool thorough) {
    return thorough ? std::clamp(2 * window_ns, 2e6, 20e6) : std::clamp(0.1 * window_ns, 50e3, 2e6);
}

OutputSample::OutputSample(const std::vector<ArgView>& outputs, std::mt19937_64& rng, bool every_byte) {
    if (every_byte) key_ = DigestKey::draw(rng);
    for (const auto& arg : outputs)
        for (const auto& t : arg.tensors) {
            const std::size_t bytes = t.bytes();
            if (bytes == 0) continue;
            const auto* base = reinterpret_cast<const unsigned char*>(t.data);
            if (every_byte) {
                digests_.push_back({base, bytes, keyed_digest(base, bytes, key_)});
                continue;
            }
            std::uniform_int_distribution<std::size_t> pick(0, bytes - 1);
            probes_.push_back({base, base[0]});
            probes_.push_back({base + bytes - 1, base[bytes - 1]});
            for (int k = 0; k < 62 && static_cast<std::size_t>(k) + 2 < bytes; ++k) {
                const std::size_t at = pick(rng);
                probes_.push_back({base + at, base[at]});
            }
        }
}

bool OutputSample::unchanged() const {
    for (const auto& p : probes_)
        if (*static_cast<const volatile unsigned char*>(p.address) != p.value) return false;
    for (const auto& d : digests_)
        if (keyed_digest(d.address, d.bytes, key_) != d.value) return false;
    return true;
}

}  // namespace hb::cpu
