// How the worker reports the ways a kernel can end it, before it dies: a fault in a watched
// range (a guard page after an output: out of bounds; an input while read-only: input
// mutation), a system call the sandbox refuses (SIGSYS, with the call's name), and a
// resource limit (SIGXCPU, SIGXFSZ, operator new failing under the address-space limit).
// Each becomes one event line on the harness channel, written with async-signal-safe calls
// only, and the worker exits.
#pragma once

#include <cstddef>
#include <string>

namespace hb::worker {

// A range whose faults are attributed: kind is "out_of_bounds" or "input_mutation".
void watch(const void* begin, std::size_t bytes, const char* kind, const std::string& what);
void clear_watches();

// Installs the handlers; syscall names are resolved now, as the handler may not allocate.
void install_signal_reports();

}  // namespace hb::worker
