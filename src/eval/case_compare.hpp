// Reading an exported case directory back (eval/case_export) and judging candidate output
// files with the precision gate of an evaluation: `hapbench compare`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ops/problem.hpp"
#include "ops/values.hpp"
#include "verify/precision_gate.hpp"

namespace hb {

// A case rebuilt from its directory alone (case.json, the proto.yaml copy, the .npy files),
// so that a copied or moved case directory still compares; no operator code is needed.
struct ExportedCase {
    std::string dir;
    nlohmann::json meta;                 // case.json as written
    std::shared_ptr<const Proto> proto;  // problem.proto points into it
    Problem problem;
    ValueArgs<double> inputs;            // index-gather outputs select from these
    ValueArgs<double> golden;            // fp64
    ValueArgs<double> same_precision;    // exact values of the output dtype
};

// Throws hb::Error naming the file and field for a missing or inconsistent file.
ExportedCase load_case_dir(const std::string& dir);

// One candidate output file: `output` is an output's label ("y"; a tensor-list member
// "ys[1]", also accepted as "ys_1").
struct CandidateFile {
    std::string output;
    std::string path;
};
// Parses "NAME=FILE".
CandidateFile parse_candidate_arg(const std::string& arg);

// Loads the candidate files, checks that every compared output of the case is given exactly
// once with the case's dtype and shape (a structural mismatch throws hb::Error, exit 2),
// and runs run_precision_gate, the gate of `hapbench eval`. Outputs marked compare: false
// may be left out. A bfloat16 output also accepts an unmarked <u2 file (raw bf16 bits).
GateResult compare_case(const ExportedCase& exported, const std::vector<CandidateFile>& files);

}  // namespace hb
