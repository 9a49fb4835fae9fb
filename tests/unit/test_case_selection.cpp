// The hidden split (suite/case_selection): drawn from a seed domain-separated from the public
// generation seed, so that no hidden seed reproduces a shipped case; and reproducible: one seed
// gives the same full case specs every time. Cases are selected through select_cases, the one
// path eval, baseline, export and check-cases take.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "ops/registry.hpp"
#include "suite/case_selection.hpp"
#include "suite/cases_file.hpp"
#include "suite/split.hpp"

namespace hb {
namespace {

const std::string suite_dir = std::string(HB_SOURCE_DIR) + "/suite";

// The seed every shipped cases file was drawn with (`hapbench gen-cases --seed 2026`, in each
// file's header).


// Seeds a user may pick: small ones, the public generation seed itself, large ones and the
// extremes of the type.
const std::vector<std::uint64_t> hidden_seeds = {0, 1, 2, 7, public_generation_seed, 987654321, 0x5eed5eed5eed5eedull,
                                                 UINT64_MAX};

// What the case is, as a kernel sees it: every input's presence, list form, shapes, dtype and
// value range, and the attributes. Ids, notes and file positions are left out.
bool same_case(const CaseSpec& a, const CaseSpec& b) {
    if (a.inputs.size() != b.inputs.size() || a.attrs != b.attrs) return false;
    for (std::size_t i = 0; i < a.inputs.size(); ++i) {
        const CaseInput& x = a.inputs[i];
        const CaseInput& y = b.inputs[i];
        if (x.present != y.present || x.is_list != y.is_list || x.shapes != y.shapes || x.dtype != y.dtype ||
            x.range.has_value() != y.range.has_value() || (x.range && !(*x.range == *y.range)))
            return false;
    }
    return true;
}

SplitChoice hidden(std::uint64_t seed) {
    SplitChoice s;
    s.split = "hidden";
    s.hidden_seed = seed;
    return s;  // hidden_count left at its default
}

TEST(CaseSelection, DefaultHiddenCountIs80) { EXPECT_EQ(SplitChoice{}.hidden_count, 80); }

// The public cases files whose cases the generator no longer draws from the public seed:
// drawn with an earlier generator (or edited after drawing), though their headers name the
// gen-cases command. Every other shipped file is exactly the generator's draw, which shows
// that the comparison below sees a collision where there is one.
const std::set<std::string> public_files_not_redrawn = {"foreach_norm", "swi_glu"};

std::vector<CaseSpec> public_draw(const SelectedOperator& o) {
    return generate_cases(*o.op, o.entry->proto, profile_by_name("cpu"), public_generation_seed,
                          static_cast<int>(o.entry->cases.size()), 1);
}

TEST(CaseSelection, PublicCasesAreTheGeneratorsDrawFromThePublicSeed) {
    const CaseSelection pub = select_cases(suite_dir, "cpu", {}, SplitChoice{});
    ASSERT_GE(pub.operators.size(), 24u);
    std::set<std::string> not_redrawn;
    int reproduced = 0;
    for (const auto& o : pub.operators) {
        ASSERT_NE(o.op, nullptr) << o.entry->op;
        const auto drawn = public_draw(o);
        ASSERT_EQ(drawn.size(), o.cases.size()) << o.entry->op;
        // As gen-cases writes them: a range computed by a sampler (a shrunk weight range) is
        // written with fewer digits than the double drawn, so specs compare through the file's text.
        const bool all = cases_to_yaml(drawn, o.entry->proto, "") == cases_to_yaml(o.cases, o.entry->proto, "");
        if (all) ++reproduced;
        else not_redrawn.insert(o.entry->op);
    }
    EXPECT_EQ(not_redrawn, public_files_not_redrawn)
        << "a shipped cases file and `hapbench gen-cases --op OP` disagree where they did not before (the generator "
           "changed?), or agree again (remove OP from public_files_not_redrawn)";
    EXPECT_GE(reproduced, 24);
}

TEST(CaseSelection, HiddenGenerationSeedIsNeverThePublicOne) {
    for (std::uint64_t s = 0; s < 100000; ++s) ASSERT_NE(hidden_generation_seed(s), public_generation_seed) << s;
    for (std::uint64_t s : hidden_seeds) {
        EXPECT_NE(hidden_generation_seed(s), public_generation_seed) << s;
        EXPECT_NE(hidden_generation_seed(s), s) << s;
    }
}

// For every shipped operator and several seeds at the default count, no hidden case equals a
// public case in shapes, dtypes, ranges and attributes.
TEST(CaseSelection, NoHiddenCaseEqualsAPublicCase) {
    const CaseSelection pub = select_cases(suite_dir, "cpu", {}, SplitChoice{});
    // The public cases as shipped, and as the generator draws them from the public seed today.
    std::vector<std::vector<CaseSpec>> public_cases;
    for (const auto& o : pub.operators) {
        public_cases.push_back(o.cases);
        for (auto& c : public_draw(o)) public_cases.back().push_back(std::move(c));
    }
    int compared = 0;
    for (std::uint64_t seed : hidden_seeds) {
        const CaseSelection hid = select_cases(suite_dir, "cpu", {}, hidden(seed));
        ASSERT_EQ(hid.operators.size(), pub.operators.size());
        for (std::size_t k = 0; k < hid.operators.size(); ++k) {
            const auto& h = hid.operators[k];
            const auto& p = pub.operators[k];
            ASSERT_EQ(h.entry->op, p.entry->op);
            ASSERT_EQ(h.cases.size(), 80u) << h.entry->op;
            for (const auto& hc : h.cases)
                for (const auto& pc : public_cases[k]) {
                    ++compared;
                    EXPECT_FALSE(same_case(hc, pc))
                        << h.entry->op << ": hidden case " << hc.case_id << " of seed " << seed << " is public case "
                        << pc.case_id << (pc.file.empty() ? " as drawn today" : " (" + pc.where() + ")");
                }
        }
    }
    EXPECT_EQ(compared, static_cast<int>(hidden_seeds.size() * pub.operators.size()) * 80 * 2 * 20);
}

// Two selections with one seed: identical full case specs (the serialized cases file, notes
// and ids included), operator by operator.
TEST(CaseSelection, OneSeedGivesIdenticalCaseSpecs) {
    for (std::uint64_t seed : {std::uint64_t{1}, std::uint64_t{987654321}}) {
        const CaseSelection a = select_cases(suite_dir, "cpu", {}, hidden(seed));
        const CaseSelection b = select_cases(suite_dir, "cpu", {}, hidden(seed));
        ASSERT_EQ(a.operators.size(), b.operators.size());
        for (std::size_t k = 0; k < a.operators.size(); ++k) {
            const auto& x = a.operators[k];
            const auto& y = b.operators[k];
            SCOPED_TRACE(x.entry->op + " seed " + std::to_string(seed));
            ASSERT_EQ(x.cases.size(), y.cases.size());
            for (std::size_t i = 0; i < x.cases.size(); ++i) {
                EXPECT_TRUE(same_case(x.cases[i], y.cases[i])) << x.cases[i].case_id;
                EXPECT_EQ(x.cases[i].case_id, y.cases[i].case_id);
                EXPECT_EQ(x.cases[i].note, y.cases[i].note);
            }
            EXPECT_EQ(cases_to_yaml(x.cases, x.entry->proto, ""), cases_to_yaml(y.cases, y.entry->proto, ""));
        }
    }
}

// Another seed draws other cases (else the split would be one fixed set, learnable once seen).
TEST(CaseSelection, AnotherSeedDrawsOtherCases) {
    const CaseSelection a = select_cases(suite_dir, "cpu", {}, hidden(1));
    const CaseSelection b = select_cases(suite_dir, "cpu", {}, hidden(2));
    for (std::size_t k = 0; k < a.operators.size(); ++k) {
        int same = 0;
        for (std::size_t i = 0; i < a.operators[k].cases.size(); ++i)
            same += same_case(a.operators[k].cases[i], b.operators[k].cases[i]);
        EXPECT_LT(same, 8) << a.operators[k].entry->op;
    }
}

// Case ids pick cases of the hidden split as of the public one, and the count is honoured.
TEST(CaseSelection, CaseIdsAndCountApplyToTheHiddenSplit) {
    SplitChoice s = hidden(5);
    s.hidden_count = 6;
    s.case_ids = {2, 5};
    const CaseSelection picked = select_cases(suite_dir, "cpu", {"sigmoid"}, s);
    ASSERT_EQ(picked.operators.size(), 1u);
    ASSERT_EQ(picked.operators[0].cases.size(), 2u);
    s.case_ids.clear();
    const CaseSelection all = select_cases(suite_dir, "cpu", {"sigmoid"}, s);
    ASSERT_EQ(all.operators[0].cases.size(), 6u);
    EXPECT_TRUE(same_case(picked.operators[0].cases[0], all.operators[0].cases[1]));
    EXPECT_TRUE(same_case(picked.operators[0].cases[1], all.operators[0].cases[4]));
}

}  // namespace
}  // namespace hb
