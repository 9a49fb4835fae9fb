// Baseline for gru: oneDNN lbr_gru_forward, the linear-before-reset GRU whose candidate gate is
// tanh(W_in x + b_in + r (W_hn h + b_hn)), PyTorch's semantics; one primitive per layer and
// direction, as PyTorch's oneDNN path calls it (ops/dnnl_rnn_baseline.hpp). oneDNN's gates are
// (update, reset, candidate) and PyTorch's rows (r, z, n), so the weights are shuffled into
// (z, r, n) in every call before the reorder, and the four-gate bias is
// [b_iz + b_hz, b_ir + b_hr, b_in, b_hn], as PyTorch builds them.
#include "ops/dnnl_rnn_baseline.hpp"

extern "C" HB_EXPORT std::uint64_t hapbench_workspace_bytes(const hb_call* call) {
    return hb::baseline::rnn_workspace_bytes(call, hb::baseline::RnnKind::gru);
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) { return hb::baseline::run_rnn(call, hb::baseline::RnnKind::gru); }
