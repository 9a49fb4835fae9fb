// Which statuses are structural failures and which count as correct, table-driven from the
// status table of docs/results.md (columns status | structural | correct | meaning): every
// status of the code is in the table once, every row of the table is a status of the code,
// and both columns say what core/status.cpp does. The status table kernel writers read
// (docs/writing-a-kernel.md, a subset) must agree too.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace hb {
namespace {

struct DocumentedStatus {
    bool structural = false;
    bool correct = false;
    bool has_correct = false;  // the table has a `correct` column
    int line = 0;
};

std::vector<std::string> cells_of(const std::string& row) {
    std::vector<std::string> cells;
    std::string cell;
    for (std::size_t i = 1; i < row.size(); ++i) {  // row[0] is the leading '|'
        if (row[i] == '|' && row[i - 1] != '\\') {
            const auto first = cell.find_first_not_of(' ');
            const auto last = cell.find_last_not_of(' ');
            cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
            cell.clear();
        } else {
            cell += row[i];
        }
    }
    return cells;
}

bool yes_no(const std::string& cell, const std::string& where) {
    if (cell == "yes") return true;
    if (cell != "no") ADD_FAILURE() << where << ": '" << cell << "' is neither yes nor no";
    return false;
}

// The first table after `heading` in `doc` (relative to the source tree) whose header row
// starts with `| status |`: status name -> its columns.
std::map<std::string, DocumentedStatus> status_table(const std::string& doc, const std::string& heading) {
    std::ifstream in(std::string(HB_SOURCE_DIR) + "/" + doc);
    EXPECT_TRUE(in.good()) << doc;
    std::map<std::string, DocumentedStatus> table;
    std::string line;
    int number = 0;
    bool in_section = false, in_table = false;
    int structural_col = -1, correct_col = -1;
    while (std::getline(in, line)) {
        ++number;
        if (line.rfind("#", 0) == 0) {
            if (in_table) break;
            in_section = line.find(heading) != std::string::npos;
            continue;
        }
        if (!in_section) continue;
        if (!in_table) {
            if (line.rfind("| status |", 0) != 0) continue;
            const auto header = cells_of(line);
            for (std::size_t i = 0; i < header.size(); ++i) {
                if (header[i] == "structural") structural_col = static_cast<int>(i);
                if (header[i] == "correct") correct_col = static_cast<int>(i);
            }
            EXPECT_GE(structural_col, 0) << doc << ":" << number << ": no structural column";
            in_table = true;
            continue;
        }
        if (line.rfind("|---", 0) == 0) continue;
        if (line.rfind("| `", 0) != 0) break;  // the table ended
        const auto cells = cells_of(line);
        const std::string where = doc + ":" + std::to_string(number);
        const std::string name = cells.at(0).substr(1, cells.at(0).size() - 2);  // without the backquotes
        EXPECT_EQ(table.count(name), 0u) << where << ": " << name << " is listed twice";
        DocumentedStatus d;
        d.line = number;
        d.structural = yes_no(cells.at(static_cast<std::size_t>(structural_col)), where);
        if (correct_col >= 0) {
            d.has_correct = true;
            d.correct = yes_no(cells.at(static_cast<std::size_t>(correct_col)), where);
        }
        table[name] = d;
    }
    EXPECT_FALSE(table.empty()) << doc << ": no status table under '" << heading << "'";
    return table;
}

// Every status of the enum, by walking its values until status_name no longer knows one.
std::vector<CaseStatus> every_status() {
    std::vector<CaseStatus> all;
    for (int v = 0; status_name(static_cast<CaseStatus>(v)) != "UNKNOWN"; ++v) all.push_back(static_cast<CaseStatus>(v));
    return all;
}

TEST(Status, EveryStatusHasADistinctName) {
    const auto all = every_status();
    ASSERT_GE(all.size(), 18u);
    std::map<std::string, int> seen;
    for (CaseStatus s : all) EXPECT_EQ(++seen[status_name(s)], 1) << status_name(s);
    EXPECT_TRUE(seen.count("NOT_RUN")) << "the walk stopped early: a status without a name";
}

TEST(Status, ResultsDocTableMatchesTheCode) {
    auto table = status_table("docs/results.md", "Statuses");
    for (CaseStatus s : every_status()) {
        const std::string name = status_name(s);
        SCOPED_TRACE(name);
        const auto it = table.find(name);
        if (it == table.end()) {
            ADD_FAILURE() << name << " is not in the status table of docs/results.md";
            continue;
        }
        const DocumentedStatus& d = it->second;
        EXPECT_EQ(d.structural, is_structural_failure(s)) << "docs/results.md:" << d.line << ": structural";
        ASSERT_TRUE(d.has_correct) << "docs/results.md: the status table has no `correct` column";
        EXPECT_EQ(d.correct, is_correct(s)) << "docs/results.md:" << d.line << ": correct";
        table.erase(it);
    }
    for (const auto& [name, d] : table) ADD_FAILURE() << "docs/results.md:" << d.line << ": " << name << " is no status of the code";
}

// The kernel writer's table lists the common statuses; each row it has must agree.
TEST(Status, KernelWritersTableAgreesWithTheCode) {
    std::map<std::string, CaseStatus> by_name;
    for (CaseStatus s : every_status()) by_name[status_name(s)] = s;
    const auto table = status_table("docs/writing-a-kernel.md", "Statuses");
    for (const auto& [name, d] : table) {
        const auto it = by_name.find(name);
        if (it == by_name.end()) {
            ADD_FAILURE() << "docs/writing-a-kernel.md:" << d.line << ": " << name << " is no status of the code";
            continue;
        }
        EXPECT_EQ(d.structural, is_structural_failure(it->second)) << "docs/writing-a-kernel.md:" << d.line << ": " << name;
    }
}

// The split the score relies on, stated once more in the test's own words: the only correct
// statuses are PASS and IMPOSSIBLE_TIME; no correct status is structural.
TEST(Status, CorrectStatusesAreNeverStructural) {
    for (CaseStatus s : every_status()) {
        EXPECT_FALSE(is_correct(s) && is_structural_failure(s)) << status_name(s);
        EXPECT_EQ(is_correct(s), s == CaseStatus::pass || s == CaseStatus::impossible_time) << status_name(s);
    }
}

}  // namespace
}  // namespace hb
