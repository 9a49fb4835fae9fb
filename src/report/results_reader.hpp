// Reads a results file written by `eval --out` (schema_version 2, report/json_report.cpp) back
// into a RunResult, so that `report` and `diff` work on typed runs. Every field the writer
// writes from the typed structs is read (writing the run again gives the same JSON); the texts
// the writer derives (timing_plan.description and its fixed sentences, thresholds.mode and
// tau_cz) are recomputed, not read. A malformed or truncated file is an hb::Error (exit 2)
// naming the file and the field.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "eval/results.hpp"

namespace hb {

inline constexpr int results_schema_version = 2;

// `origin` names the document in messages (the file path).
RunResult read_results(const nlohmann::json& doc, const std::string& origin);
RunResult read_results_text(const std::string& text, const std::string& origin);
RunResult read_results_file(const std::string& path);

// An attribute as the results file writes it (AttrValue::to_string) back to a typed value:
// the type whose text form is exactly `text`, else a string. The file does not record the
// type, so a string attribute that reads like a number comes back as that number.
AttrValue attr_from_text(const std::string& text);

}  // namespace hb
