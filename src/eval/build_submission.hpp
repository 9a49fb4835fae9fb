// Stage 0 of an evaluation: the submission's operators built, before any case runs, as many
// at a time as the evaluation has CPUs. Nothing is timed while they build, and a compiler
// uses one core: on a 2-vCPU guest the 24 reference kernels of levels 1-2 took 16 s one after
// another. Each build is the target's own (compile, then the object check), with its own
// timeout; an operator whose source is missing is not built (the operator says so later).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "targets/target.hpp"

namespace hb {

struct SubmissionBuild {
    std::map<std::string, BuildResult> results;  // by operator
    double seconds = 0;                          // the stage's wall time
};

// `sources`: operator name -> source file, in the order they are built (first come first).
// `jobs` at least 1. A build that throws (the compiler cannot be started) throws here, after
// the others have finished.
SubmissionBuild build_submission(const Target& target, const std::vector<std::pair<std::string, std::string>>& sources,
                                 const std::string& out_dir, double timeout_s, int jobs);

}  // namespace hb
