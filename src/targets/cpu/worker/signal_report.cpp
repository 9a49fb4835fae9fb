#include "targets/cpu/worker/signal_report.hpp"

#include <seccomp.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "targets/cpu/control_page.hpp"

namespace hb::worker {

namespace {

struct WatchedRange {
    const char* begin;
    const char* end;
    char what[96];
    char kind[24];
};
constexpr int max_watched = 4096;
WatchedRange watched[max_watched];
volatile int watched_count = 0;

constexpr int max_syscall = 512;
const char* syscall_names[max_syscall];

void append(char*& p, const char* end, const char* s) {
    while (*s && p < end) *p++ = *s++;
}

void append_number(char*& p, const char* end, long value) {
    char digits[24];
    int n = 0;
    const bool negative = value < 0;
    unsigned long v = negative ? static_cast<unsigned long>(-value) : static_cast<unsigned long>(value);
    do {
        digits[n++] = static_cast<char>('0' + v % 10);
        v /= 10;
    } while (v && n < 23);
    if (negative && p < end) *p++ = '-';
    while (n > 0 && p < end) *p++ = digits[--n];
}

[[noreturn]] void send_and_exit(char* message, char* p, int code) {
    *p++ = '\n';
    ssize_t ignored = ::write(cpu::event_fd, message, static_cast<std::size_t>(p - message));
    (void)ignored;
    _exit(code);
}

void fault_handler(int sig, siginfo_t* info, void*) {
    const char* address = static_cast<const char*>(info->si_addr);
    const char* kind = "crash";
    const char* what = "";
    for (int i = 0; i < watched_count; ++i) {
        if (address >= watched[i].begin && address < watched[i].end) {
            kind = watched[i].kind;
            what = watched[i].what;
            break;
        }
    }
    char message[512];
    char* p = message;
    const char* end = message + sizeof message - 2;
    append(p, end, "{\"event\":\"fault\",\"kind\":\"");
    append(p, end, kind);
    append(p, end, "\",\"what\":\"");
    append(p, end, what);
    append(p, end, "\",\"signal\":\"");
    append(p, end, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
    append(p, end, "\"}");
    send_and_exit(message, p, 128 + sig);
}

void syscall_handler(int, siginfo_t* info, void*) {
    const int number = info->si_syscall;
    const char* name = number >= 0 && number < max_syscall && syscall_names[number] ? syscall_names[number] : "unknown";
    char message[256];
    char* p = message;
    const char* end = message + sizeof message - 2;
    append(p, end, "{\"event\":\"sandbox_violation\",\"syscall\":\"");
    append(p, end, name);
    append(p, end, "\",\"number\":");
    append_number(p, end, number);
    append(p, end, "}");
    send_and_exit(message, p, 128 + SIGSYS);
}

void report_limit(const char* what) {
    char message[256];
    char* p = message;
    const char* end = message + sizeof message - 2;
    append(p, end, "{\"event\":\"resource_limit\",\"what\":\"");
    append(p, end, what);
    append(p, end, "\"}");
    send_and_exit(message, p, 125);
}

void limit_handler(int sig, siginfo_t*, void*) {
    report_limit(sig == SIGXCPU ? "CPU time" : "file size (the worker's log)");
}

void out_of_memory() { report_limit("address space (operator new failed)"); }

void handle(int sig, void (*fn)(int, siginfo_t*, void*)) {
    struct sigaction sa {};
    sa.sa_sigaction = fn;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
}

}  // namespace

void watch(const void* begin, std::size_t bytes, const char* kind, const std::string& what) {
    if (watched_count >= max_watched) return;
    auto& w = watched[watched_count];
    w.begin = static_cast<const char*>(begin);
    w.end = w.begin + bytes;
    std::snprintf(w.what, sizeof w.what, "%s", what.c_str());
    std::snprintf(w.kind, sizeof w.kind, "%s", kind);
    watched_count = watched_count + 1;
}

void clear_watches() { watched_count = 0; }

void install_signal_reports() {
    for (int n = 0; n < max_syscall; ++n) syscall_names[n] = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, n);
    static std::vector<char> alt_stack(1 << 16);
    stack_t ss{};
    ss.ss_sp = alt_stack.data();
    ss.ss_size = alt_stack.size();
    sigaltstack(&ss, nullptr);
    handle(SIGSEGV, fault_handler);
    handle(SIGBUS, fault_handler);
    handle(SIGSYS, syscall_handler);
    handle(SIGXCPU, limit_handler);
    handle(SIGXFSZ, limit_handler);
    std::set_new_handler(out_of_memory);
}

}  // namespace hb::worker
