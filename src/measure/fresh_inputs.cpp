#include "measure/fresh_inputs.hpp"

#include <random>

#include "core/rng.hpp"
#include "suite/inputs.hpp"

namespace hb {

TimedInputSeeds::TimedInputSeeds() {
    std::random_device entropy;
    secret_ = (static_cast<std::uint64_t>(entropy()) << 32) ^ entropy();
}

std::uint64_t TimedInputSeeds::seed(const Problem& problem, int call) const {
    std::uint64_t state = secret_;
    for (char c : problem.op()) state = splitmix64(state) ^ static_cast<unsigned char>(c);
    state ^= splitmix64(state) ^ static_cast<std::uint64_t>(problem.case_id());
    state ^= splitmix64(state) ^ static_cast<std::uint64_t>(call);
    return splitmix64(state);
}

void fill_timed_inputs(const Problem& problem, const Operator& op, std::uint64_t seed, std::vector<Arg>& inputs) {
    fill_inputs(problem, op, seed, inputs, InputDraw::timed_call);
}

}  // namespace hb
