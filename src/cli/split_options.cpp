#include "cli/split_options.hpp"

#include <cstring>
#include <fstream>

#include "core/error.hpp"

namespace hb::cli {

SplitChoice SplitOptions::resolve() const {
    SplitChoice c = choice;
    const bool from_option = seed_option && seed_option->count() > 0;
    if (from_option && !hidden_seed_file.empty()) throw Error("give --hidden-seed or --hidden-seed-file, not both");
    if (from_option) c.hidden_seed = hidden_seed;
    if (!hidden_seed_file.empty()) {
        std::ifstream in(hidden_seed_file);
        std::string text;
        if (!in || !(in >> text)) throw Error("cannot read a seed from --hidden-seed-file " + hidden_seed_file);
        try {
            std::size_t used = 0;
            c.hidden_seed = std::stoull(text, &used, 0);
            if (used != text.size()) throw std::invalid_argument(text);
        } catch (const std::exception&) {
            throw Error(hidden_seed_file + ": the hidden seed must be an unsigned integer, not '" + text + "'");
        }
    }
    return c;
}

std::shared_ptr<SplitOptions> add_split_options(CLI::App* cmd, bool with_cases) {
    auto o = std::make_shared<SplitOptions>();
    cmd->add_option("--split", o->choice.split, "public (the shipped cases) or hidden (drawn from a secret seed)")
        ->capture_default_str();
    o->seed_option = cmd->add_option("--hidden-seed", o->hidden_seed, "Secret seed of the hidden split");
    cmd->add_option("--hidden-seed-file", o->hidden_seed_file,
                    "File holding the hidden split's seed (keeps it off the command line)");
    cmd->add_option("--hidden-count", o->choice.hidden_count, "Hidden cases per operator")->capture_default_str();
    if (with_cases) cmd->add_option("--case", o->choice.case_ids, "Only these case ids (repeatable)");
    return o;
}

void scrub_secret_arguments(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        char* value = nullptr;
        if (std::strcmp(argv[i], "--hidden-seed") == 0 && i + 1 < argc) value = argv[i + 1];
        else if (std::strncmp(argv[i], "--hidden-seed=", 14) == 0) value = argv[i] + 14;
        if (value) std::memset(value, 'x', std::strlen(value));
    }
}

}  // namespace hb::cli
