// The stacked recurrences gru and lstm (operators-l3-l4.md, level 4): what both share, in one
// place. Their interface is torch.nn.GRU / torch.nn.LSTM called with explicit weight lists:
// x [S, B, I] (or [B, S, I] with batchFirst), per layer l and direction d (list index
// l * Dn + d, d = 1 the reverse direction) W_ih [G H, in_l], W_hh [G H, Hs], optional biases
// [G H], lstm's optional projection W_hr [P, H], optional initial states h0 [L Dn, B, Hs] and
// (lstm) c0 [L Dn, B, H]; outputs y [S, B, Dn Hs] (or batch-first), hn [L Dn, B, Hs] and
// (lstm) cn [L Dn, B, H]. G = 3 gate blocks (r, z, n) for gru and 4 (i, f, g, o) for lstm;
// Hs = P when lstm projects (projSize > 0), else H; in_0 = I and in_l = Dn Hs above.
//
// The golden runs the recurrence step by step in fp64, every matrix product through
// hb::dgemm: per layer and direction the input projection of all S steps at once, then per
// step the recurrent product and the cell update. The same-precision reference is the same
// in fp32 over hb::sgemm (lstm's reference golden is fp32-pinned: that is it).
#pragma once

#include <cstdint>
#include <vector>

#include "ops/operator.hpp"

namespace hb {

enum class RecurrentCell { gru, lstm };

struct RecurrenceConfig {
    RecurrentCell cell = RecurrentCell::gru;
    std::int64_t seq = 0;         // S
    std::int64_t batch = 0;       // B
    std::int64_t input = 0;       // I
    std::int64_t hidden = 0;      // H
    std::int64_t proj = 0;        // P (lstm), 0: no projection
    std::int64_t layers = 1;      // L
    std::int64_t directions = 1;  // Dn
    bool batch_first = false;
    bool bias = true;             // the bias attribute
    bool bias_given = false;      // bias_ih and bias_hh are present (zeros when bias without them)
    bool h0_given = false;
    bool c0_given = false;
    DType dtype = DType::f32;

    std::int64_t gates() const { return cell == RecurrentCell::gru ? 3 : 4; }
    std::int64_t state() const { return proj > 0 ? proj : hidden; }  // Hs, the size of h
    std::int64_t layer_input(std::int64_t layer) const { return layer == 0 ? input : directions * state(); }
    std::int64_t cells() const { return layers * directions; }       // list entries
    // Multiply-adds of one step of one sequence in layer `layer` (one direction): its input
    // projection, the recurrent product and lstm's projection.
    double macs_per_step(std::int64_t layer) const;
    // Every multiply-add of the case.
    double total_macs() const;
};

// Reads and checks the attributes and every input's shape and dtype against each other;
// throws hb::Error naming the case, the input and what was expected.
RecurrenceConfig recurrence_config(const Problem& p, RecurrentCell cell);

// y, hn and (lstm) cn.
std::vector<ArgSpec> recurrence_outputs(const RecurrenceConfig& c);

// The recurrence in T (double: the golden; float: the same-precision reference), outputs
// pre-shaped by recurrence_outputs.
template <typename T>
void run_recurrence(const Problem& p, const RecurrenceConfig& c, const ValueArgs<T>& in, ValueArgs<T>& out);

// Compulsory bytes, the contractions, the cell's vector work, the dependent chain of steps
// (WorkModel::chain) and the cann-bench formula count.
WorkModel recurrence_work(const Problem& p, const RecurrenceConfig& c);

// Turns a draw into a case: the cycled layer/direction/layout/bias/state/projection
// pattern, then S, B, I and H within the element budget and the multiply-add cap.
void sample_recurrence_case(CaseSampler& sampler, CaseSpec& out, RecurrentCell cell);

// The multiply-add cap of one case (suite budget: the reference kernel, the baseline and the
// golden of every public case must stay fast on two cores).
inline constexpr double recurrence_macs_cap = 2.5e8;

}  // namespace hb
