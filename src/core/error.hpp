// Errors carry a message a user can act on; the CLI prints it and exits with the code.
#pragma once

#include <stdexcept>
#include <string>

namespace hb {

// Exit codes of the hapbench command (documented in docs/results.md).
enum class ExitCode : int {
    ok = 0,
    failures = 1,    // the run completed but some case did not pass
    bad_input = 2,   // malformed case/proto/model file, unknown operator, bad flag
    internal = 3,    // a bug or an environment problem in hapbench itself
};

class Error : public std::runtime_error {
  public:
    explicit Error(const std::string& message, ExitCode code = ExitCode::bad_input)
        : std::runtime_error(message), code_(code) {}
    ExitCode code() const { return code_; }

  private:
    ExitCode code_;
};

}  // namespace hb
