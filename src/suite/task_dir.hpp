// A task directory in the reference layout: levelN/<op>/{proto.yaml, cases.yaml}. hapbench's
// own suite/ adds one cases file per profile (cases.cpu.yaml, later cases.accel.yaml); the
// reader prefers cases.<profile>.yaml and falls back to cases.yaml.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "spec/case_spec.hpp"
#include "spec/proto.hpp"

namespace hb {

struct TaskEntry {
    std::string op;
    int level = 0;
    std::string dir;
    std::string cases_file;
    Proto proto;
    std::vector<CaseSpec> cases;
};

struct TaskDir {
    std::string root;
    std::string profile;
    std::vector<TaskEntry> tasks;  // by level, then name
    std::string suite_hash;        // SHA-256 over every proto and cases file read
    const TaskEntry* find(const std::string& op) const;
    std::string op_names() const;
    // Whether any operator has a cases file for the profile (cases.<profile>.yaml or cases.yaml).
    bool has_cases() const;
};

// Reads every operator (or only `only_ops` when non-empty; an unknown name is an error
// listing the known ones). Malformed files throw hb::Error naming file, line and field.
TaskDir load_task_dir(const std::string& root, const std::string& profile,
                      const std::vector<std::string>& only_ops = {});

}  // namespace hb
