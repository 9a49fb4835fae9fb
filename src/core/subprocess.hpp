// Runs a command with a time limit and captures its combined output.
#pragma once

#include <string>
#include <vector>

namespace hb {

struct ProcessResult {
    int exit_code = -1;     // valid when exited
    int signal = 0;         // the signal that ended it, else 0
    bool timed_out = false;
    std::string output;     // stdout and stderr together (the last 64 KiB)
    double seconds = 0;
};

ProcessResult run_process(const std::vector<std::string>& argv, double timeout_s);
// "exited with status 1", "killed by SIGSEGV", "timed out after 600 s"
std::string describe_exit(int wait_status);

}  // namespace hb
