// Baseline for lstm: oneDNN lstm_forward (with its projection when projSize > 0), one
// primitive per layer and direction, as PyTorch's oneDNN path calls it (ops/dnnl_rnn_baseline.hpp).
// oneDNN's gate order (i, f, c~, o) is PyTorch's (i, f, g, o), so the weights are reordered
// from PyTorch's [4H, in] rows as they are; the bias is b_ih + b_hh.
#include "ops/dnnl_rnn_baseline.hpp"

extern "C" HB_EXPORT std::uint64_t hapbench_workspace_bytes(const hb_call* call) {
    return hb::baseline::rnn_workspace_bytes(call, hb::baseline::RnnKind::lstm);
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) { return hb::baseline::run_rnn(call, hb::baseline::RnnKind::lstm); }
