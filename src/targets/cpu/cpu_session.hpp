// The cpu target's KernelSession: one hapbench-worker process per operator and role, the
// three shared regions it maps, the doorbell (control_page.hpp) and the checks after every
// call (settle_check.hpp, guard-page canaries). The harness's clock times each call; the
// worker's only part is to wait, call and report.
#pragma once

#include <memory>
#include <random>
#include <string>

#include "targets/cpu/call_layout.hpp"
#include "targets/cpu/control_page.hpp"
#include "targets/cpu/shared_region.hpp"
#include "targets/cpu/thread_placement.hpp"
#include "targets/cpu/worker_process.hpp"
#include "targets/target.hpp"

namespace hb::cpu {

class CpuSession final : public KernelSession {
  public:
    CpuSession(std::string worker_exe, std::string op, std::string library, SessionOptions options);
    ~CpuSession() override;

    CallResult load_case(const Problem& problem, int input_slots, Clock::time_point deadline) override;
    const CaseBuffers& buffers() const override { return buffers_; }
    CallResult call(int slot, Clock::time_point deadline, CallCheck check) override;
    CallResult finish_calls(Clock::time_point deadline) override;
    std::vector<double> null_calls(int count, Clock::time_point deadline) override;
    void close() override;
    SessionFacts facts() const override { return facts_; }

  private:
    CallResult start_worker(Clock::time_point deadline);
    // Arms call `kind` on `slot`, releases it and waits until it is done; the window in ns.
    CallResult ring(CallKind kind, int slot, Clock::time_point deadline);
    // Turns a missing or unexpected event into the call's outcome; the worker is gone afterwards.
    CallResult failure(const std::optional<nlohmann::json>& event, bool timed_out, const std::string& phase);
    // Guard pages after the outputs and the workspace still hold the canary.
    std::string damaged_guard() const;
    void fill_guards();
    // How much CPU the worker used since it was last seen idle beyond what it may (0: none).
    double idle_excess_ns() const;
    // The worker's CPU time once no thread of it is runnable, or after `patience_ns`. A thread
    // preempted on its way back to sleep after a call (a loaded machine) is charged for being
    // switched back in (measured: 60-230 us on a loaded 2-vCPU VM), which is not work left
    // running; one still runnable after the patience is judged by the checks that follow.
    double cpu_ns_once_quiet(double patience_ns) const;
    // Counts an unsettled call; async_work (the worker is then gone) once they are not rare.
    CallResult note_unsettled(const std::string& what);
    // "used 120 us of CPU <when>" or "had a thread running <when>", for an idle_excess_ns().
    std::string busy_description(double excess_ns, const std::string& when) const;

    std::string worker_exe_, op_, library_;
    SessionOptions options_;
    SharedRegion control_{"hapbench-control"}, inputs_{"hapbench-inputs"}, outputs_{"hapbench-outputs"};
    int inputs_read_only_fd_ = -1;
    ControlPage* page_ = nullptr;
    std::unique_ptr<WorkerProcess> worker_;
    ThreadPlacement placement_;  // the worker's threads, one CPU each (thread_placement.hpp)
    CallLayout layout_;
    // The shared regions' size for the largest planned case (SessionOptions::planned_cases),
    // for `slots` input slots.
    struct Reserve {
        int slots = -1;
        std::size_t input_bytes = 0, output_bytes = 0;
    } reserve_;
    CaseBuffers buffers_;
    bool serving_calls_ = false;
    std::uint32_t sequence_ = 0;
    double idle_cpu_ns_ = -1;  // the worker's CPU time when it was last seen idle (-1: not yet)
    int case_calls_ = 0;       // kernel calls of the current case
    int case_unsettled_ = 0;   // of them, unsettled (the worker busy after them)
    std::uint64_t canary_ = 0;
    std::mt19937_64 rng_;      // canary and output sample positions: the harness's secret
    SessionFacts facts_;
};

}  // namespace hb::cpu
