#include "targets/cpu/worker/case_binding.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <immintrin.h>

#include "targets/cpu/protocol.hpp"
#include "targets/cpu/worker/signal_report.hpp"

namespace hb::worker {

namespace {

std::vector<ArgSpec> specs_from_json(const nlohmann::json& j) {
    std::vector<ArgSpec> specs;
    for (const auto& a : j) {
        ArgSpec s{a.at("name"), a.at("is_list"), a.at("present"), {}};
        s.variable_length = a.value("variable_length", false);
        for (const auto& t : a.at("tensors"))
            s.tensors.push_back(TensorSpec{static_cast<DType>(t.at("dtype").get<int>()), t.at("shape").get<Shape>()});
        specs.push_back(std::move(s));
    }
    return specs;
}

double now_ns() {
    return static_cast<double>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

// Fills the page tables of [begin, begin + bytes) of a readable mapping: MADV_POPULATE_READ
// (Linux 5.14), then a read of every page, whose line is evicted again at once.
// Why both: under a hypervisor that shadows the guest's page tables (PVM, software nested
// paging), a page the guest has mapped still costs a trap to the hypervisor at its first
// access. Without the read that trap fell inside the first timed call on each slot: on a
// 2-vCPU AMD EPYC PVM guest, the first timed calls of tuned masked_scale and swi_glu cases
// took 3 to 7 times as long as the later ones, and a case that stopped after five such calls
// was scored on them (two evals of the tuned submission differed by 0.16 in score at the 90th
// percentile).
void populate_readable(const char* begin, std::size_t bytes, std::size_t page_bytes) {
    if (bytes == 0) return;
    const auto first = reinterpret_cast<std::uintptr_t>(begin) / page_bytes * page_bytes;
    const auto end = reinterpret_cast<std::uintptr_t>(begin) + bytes;
#ifdef MADV_POPULATE_READ
    madvise(reinterpret_cast<void*>(first), end - first, MADV_POPULATE_READ);
#endif
    for (std::uintptr_t at = first; at < end; at += page_bytes) {
        (void)*reinterpret_cast<const volatile char*>(at);
        _mm_clflush(reinterpret_cast<const void*>(at));  // timed calls start with cold inputs
    }
    _mm_mfence();
}

std::string label(const cpu::ArgPlace& a, std::size_t k) {
    std::string what = a.name;
    if (a.is_list) what.append("[").append(std::to_string(k)).append("]");
    return what;
}

}  // namespace

CaseBinding::CaseBinding(const LoadedKernel& kernel, SharedMappings& mappings, const nlohmann::json& case_command)
    : kernel_(kernel), mappings_(mappings) {
    call_.emplace(kernel_.op_name, specs_from_json(case_command.at("inputs")), specs_from_json(case_command.at("outputs")),
                  protocol::attrs_from_json(case_command.at("attrs")), kernel_.threads);
}

CaseBinding::~CaseBinding() { clear_watches(); }

std::uint64_t CaseBinding::workspace_bytes() {
    return kernel_.workspace_query ? kernel_.workspace_query(&call_->shape_only_call()) : 0;
}

std::string CaseBinding::map(const cpu::CallLayout& layout, std::size_t input_map_bytes, std::size_t output_map_bytes,
                             cpu::ControlPage& page) {
    clear_watches();
    layout_ = layout;
    // A page the kernel touches first inside a timed call would cost that call a page fault,
    // so every page is mapped before a call can read it: the outputs and the workspace when
    // the mapping is made (every call uses them), each input slot when bind_slot first binds
    // it in this case (populate_readable; cheap for pages an earlier case touched), so that a
    // case that stops after five timed calls does not pay for the page tables of slots it
    // never reads.
    if (std::string error = mappings_.fit(layout_.input_region_bytes(), layout_.output_region_bytes, input_map_bytes,
                                          output_map_bytes);
        !error.empty())
        return error;
    populated_.assign(static_cast<std::size_t>(layout_.slots), false);
    const std::size_t page_bytes = layout_.page_bytes;
    for (int s = 0; s < layout_.slots; ++s)
        for (std::size_t g : layout_.input_guards)
            mappings_.guard(mappings_.inputs() + static_cast<std::size_t>(s) * layout_.slot_bytes + g, page_bytes, false);
    for (std::size_t g : layout_.output_guards) mappings_.guard(mappings_.outputs() + g, page_bytes, true);
    for (std::size_t a = 0; a < layout_.outputs.size(); ++a)
        for (std::size_t k = 0; k < layout_.outputs[a].tensors.size(); ++k)
            call_->bind_output(a, k, mappings_.outputs() + layout_.outputs[a].tensors[k].offset);
    call_->set_workspace(layout_.workspace_bytes ? mappings_.outputs() + layout_.workspace_offset : nullptr, layout_.workspace_bytes);
    call_->bind_written_lengths(page.written_length);
    bound_slot_ = ~0u;
    bind_slot(0);
    return "";
}

void CaseBinding::bind_slot(std::uint32_t slot) {
    if (slot == bound_slot_ || slot >= static_cast<std::uint32_t>(layout_.slots)) return;
    char* base = mappings_.inputs() + static_cast<std::size_t>(slot) * layout_.slot_bytes;
    if (!populated_[slot]) {  // the tensors' pages only: the guard pages between them stay unmapped
        for (const auto& a : layout_.inputs)
            for (const auto& t : a.tensors) populate_readable(base + t.offset, t.spec.bytes(), layout_.page_bytes);
        populated_[slot] = true;
    }
    for (std::size_t a = 0; a < layout_.inputs.size(); ++a)
        for (std::size_t k = 0; k < layout_.inputs[a].tensors.size(); ++k)
            call_->bind_input(a, k, base + layout_.inputs[a].tensors[k].offset);
    bound_slot_ = slot;
    watch_faults(base);
}

// Faults are attributed by address: a guard page is out of bounds, an input is read-only.
// Only the slot in use is listed, so the list stays as long as the case has tensors.
void CaseBinding::watch_faults(const char* slot) {
    clear_watches();
    const std::size_t page_bytes = layout_.page_bytes;
    std::size_t guard = 0;
    for (const auto& a : layout_.outputs)
        for (std::size_t k = 0; k < a.tensors.size(); ++k)
            watch(mappings_.outputs() + layout_.output_guards[guard++], page_bytes, "out_of_bounds", "output " + label(a, k));
    watch(mappings_.outputs() + layout_.output_guards.back(), page_bytes, "out_of_bounds", "workspace");
    guard = 0;
    for (const auto& a : layout_.inputs)
        for (std::size_t k = 0; k < a.tensors.size(); ++k)
            watch(slot + layout_.input_guards[guard++], page_bytes, "out_of_bounds",
                  "input " + label(a, k) + " (read past its end)");
    for (const auto& a : layout_.inputs)
        for (std::size_t k = 0; k < a.tensors.size(); ++k)
            watch(slot + a.tensors[k].offset, std::max<std::size_t>(a.tensors[k].spec.bytes(), 1), "input_mutation",
                  "input " + label(a, k));
    if (layout_.input_region_bytes()) watch(mappings_.inputs(), layout_.input_region_bytes(), "input_mutation", "an input slot");
}

bool CaseBinding::serve_calls(cpu::ControlPage& page) {
    for (;;) {
        char byte = 0;
        if (read(cpu::arm_fd, &byte, 1) != 1) return false;
        const std::uint32_t sequence = page.sequence;
        const cpu::CallKind kind = page.kind;
        // Everything but the call happens before the worker reports itself armed, outside
        // the harness's timed window.
        if (kind == cpu::CallKind::kernel) {
            bind_slot(page.slot);
            call_->reset_written_lengths();
        }
        page.armed.store(sequence, std::memory_order_release);
        // Spin until the harness has read its clock and released the call (microseconds);
        // give up after a minute (the harness stopped between arming and releasing).
        const double armed_at = now_ns();
        for (std::uint64_t spins = 0; page.request.load(std::memory_order_acquire) != sequence; ++spins) {
            _mm_pause();
            if ((spins & 0xfffff) == 0xfffff && now_ns() - armed_at > 60e9) return false;
        }
        if (kind == cpu::CallKind::leave) {
            page.done.store(sequence, std::memory_order_release);
            return write(cpu::done_fd, &byte, 1) == 1;
        }
        int rc = 0;
        double call_ns = 0;
        if (kind == cpu::CallKind::kernel) {
            const double t0 = now_ns();
            rc = kernel_.kernel(&call_->call());
            call_ns = now_ns() - t0;
            if (rc != 0) {
                const std::string message = call_->error_message();
                const std::size_t n = std::min(message.size(), static_cast<std::size_t>(cpu::message_capacity - 1));
                std::memcpy(page.message, message.data(), n);
                page.message[n] = '\0';
            }
        }
        page.rc = rc;
        page.worker_call_ns = call_ns;
        page.done.store(sequence, std::memory_order_release);
        if (write(cpu::done_fd, &byte, 1) != 1) return false;
    }
}

}  // namespace hb::worker
