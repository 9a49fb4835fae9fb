#include "eval/build_submission.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <optional>
#include <thread>

namespace hb {

SubmissionBuild build_submission(const Target& target, const std::vector<std::pair<std::string, std::string>>& sources,
                                 const std::string& out_dir, double timeout_s, int jobs) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::optional<BuildResult>> built(sources.size());
    std::vector<std::exception_ptr> errors(sources.size());
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t i; (i = next.fetch_add(1)) < sources.size();) {
            try {
                built[i] = target.build(sources[i].first, sources[i].second, out_dir, timeout_s);
            } catch (...) {
                errors[i] = std::current_exception();
            }
        }
    };
    const std::size_t threads = std::min(static_cast<std::size_t>(std::max(1, jobs)), sources.size());
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
    for (const auto& e : errors)
        if (e) std::rethrow_exception(e);
    SubmissionBuild b;
    for (std::size_t i = 0; i < sources.size(); ++i) b.results.emplace(sources[i].first, std::move(*built[i]));
    b.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return b;
}

}  // namespace hb
