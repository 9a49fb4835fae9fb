#include "targets/cpu/worker/settle.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace hb::worker {

int thread_count() {
    const int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char text[4096];
    const ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0) return 0;
    text[n] = '\0';
    const char* line = std::strstr(text, "\nThreads:");
    return line ? std::atoi(line + 9) : 0;
}

void settle_pause(double call_ns, bool threads_grew) {
    const double ns = threads_grew ? 5e7 : std::clamp(call_ns, 1e6, 1e7);
    timespec ts{static_cast<time_t>(ns / 1e9), static_cast<long>(ns) % 1000000000L};
    nanosleep(&ts, nullptr);
}

}  // namespace hb::worker
