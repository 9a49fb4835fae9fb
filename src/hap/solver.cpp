#include "hap/solver.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"

namespace hb {

namespace {

constexpr double us_per_s = 1e6;

double parallel_item_count(const WorkModel& work) {
    if (!std::isfinite(work.parallel_items) || work.parallel_items < 1) return 1;
    return std::ceil(work.parallel_items);
}

std::string model_label(const HardwareModel& model) {
    return "hardware model '" + model.name + "'" +
           (model.source_path.empty() ? "" : " (" + model.source_path + ")");
}

const Figure& rate_or_fail(const ExecutionUnit& unit, DType dtype, const HardwareModel& model,
                           const std::string& what) {
    const Figure* rate = unit.rate_for(dtype);
    if (!rate)
        throw Error(model_label(model) + ": unit '" + unit.name + "' serves " + what + " in " +
                    std::string(dtype_name(dtype)) + " but has no flops_per_s entry for it; add one or a runs_as mapping");
    return *rate;
}

bool any_unit_serves(const HardwareModel& model, WorkKind k) {
    return std::any_of(model.units.begin(), model.units.end(),
                       [&](const ExecutionUnit& u) { return u.serves_kind(k); });
}

// Every piece of work must land on some unit, or T_HW would silently ignore it.
void check_coverage(const WorkModel& work, const HardwareModel& model) {
    if (work.bytes_read > 0 && !any_unit_serves(model, WorkKind::bytes_read))
        throw Error(model_label(model) + ": no unit serves bytes_read");
    if (work.bytes_written > 0 && !any_unit_serves(model, WorkKind::bytes_written))
        throw Error(model_label(model) + ": no unit serves bytes_written");
    for (const auto& v : work.vector) {
        if (v.elements <= 0) continue;
        if (!std::any_of(model.units.begin(), model.units.end(), [&](const ExecutionUnit& u) {
                return u.serves_kind(WorkKind::vector) && u.vector_flops_per_element.count(v.op_class);
            }))
            throw Error(model_label(model) + ": no unit serves vector op class '" +
                        std::string(op_class_name(v.op_class)) +
                        "'; give a vector unit a vector_flops_per_element entry for it");
    }
    const bool has_matrix =
        std::any_of(work.matrix.begin(), work.matrix.end(), [](const MatrixWork& m) { return m.macs > 0; }) ||
        !work.contractions.empty();
    if (has_matrix && !any_unit_serves(model, WorkKind::matrix))
        throw Error(model_label(model) + ": no unit serves matrix MACs");
    if (work.chain.steps > 0) {
        if (!std::isfinite(work.chain.steps) || !(work.chain.items_per_step >= 1))
            throw Error("dependent chain of " + std::to_string(work.chain.steps) + " steps with " +
                        std::to_string(work.chain.items_per_step) +
                        " items per step: both must be finite and at least 1");
        for (const auto& c : work.chain.contractions)
            if (c.m < 1 || c.n < 1 || c.k < 1 || !(c.batch >= 1))
                throw Error("dependent chain's contraction with m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
                            " k=" + std::to_string(c.k) + ": every dimension and the batch must be at least 1");
    }
    for (const auto& c : work.contractions)
        if (c.m < 1 || c.n < 1 || c.k < 1 || !(c.batch >= 1))
            throw Error("contraction with m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
                        " k=" + std::to_string(c.k) + ": every dimension and the batch must be at least 1");
}

double round_up(double v, double granule) { return granule > 1 ? std::ceil(v / granule) * granule : v; }

// The work a choice puts on the machine: the case's own work plus what the choice derives
// from its contractions and its cube/vector crossing.
struct ChargedWork {
    double bytes_read = 0;
    double bytes_written = 0;
    double l1_to_l0a = 0;
    double l1_to_l0b = 0;
    double l0c_to_gm = 0;
    std::vector<VectorWork> vector;
    std::vector<MatrixWork> matrix;             // unpadded MACs
    std::vector<const Contraction*> cube;       // contractions on the matrix unit
};

ChargedWork charge(const WorkModel& work, const HardwareModel& model, const ImplementationChoice& choice) {
    ChargedWork c;
    c.bytes_read = work.bytes_read;
    c.bytes_written = work.bytes_written;
    c.vector = work.vector;
    c.matrix = work.matrix;
    const bool fixpipe = any_unit_serves(model, WorkKind::l0c_to_gm);
    for (const auto& k : work.contractions) {
        const double out_bytes = k.batch * static_cast<double>(k.m) * static_cast<double>(k.n) *
                                 static_cast<double>(dtype_size(k.out_dtype));
        if (choice.path == "vector") {
            // One multiply-add per MAC on the vector unit; operands come through the vector
            // core's own GM reads, already counted in bytes_read.
            c.vector.push_back({OpClass::fma, k.dtype, k.batch * static_cast<double>(k.m) *
                                                           static_cast<double>(k.n) * static_cast<double>(k.k)});
            continue;
        }
        c.cube.push_back(&k);
        if (fixpipe) {
            // The result leaves L0C through FixPipe, not through the vector core's MTE3.
            const double moved = std::min(c.bytes_written, out_bytes);
            c.bytes_written -= moved;
            c.l0c_to_gm += out_bytes;
        }
        if (choice.tile_m > 0 && choice.tile_n > 0) {
            const double s = static_cast<double>(dtype_size(k.dtype));
            const double m = static_cast<double>(k.m), n = static_cast<double>(k.n),
                         kk = static_cast<double>(k.k);
            // Output-stationary L0C tiles: each A row-panel is sent to L0A once per column
            // tile, each B column-panel to L0B once per row tile.
            c.l1_to_l0a += k.batch * m * kk * s * std::ceil(n / choice.tile_n);
            c.l1_to_l0b += k.batch * kk * n * s * std::ceil(m / choice.tile_m);
        }
    }
    const bool cross = work.cube_vector_bytes > 0 &&
                       (!choice.fused || model.cube_vector_exchange == "global_memory");
    if (cross) {
        (fixpipe ? c.l0c_to_gm : c.bytes_written) += work.cube_vector_bytes;
        c.bytes_read += work.cube_vector_bytes;
    }
    return c;
}

DType run_dtype(const ExecutionUnit& unit, DType t) {
    if (unit.flops_per_s.count(t)) return t;
    auto alias = unit.runs_as.find(t);
    return alias == unit.runs_as.end() ? t : alias->second;
}

// Rows a kernel keeps whole are padded to the unit's alignment granule.
double row_padding(const WorkModel& work, const ExecutionUnit& unit, DType t) {
    if (work.row_elements <= 0 || !unit.align_bytes) return 1;
    const double size = static_cast<double>(dtype_size(run_dtype(unit, t)));
    const double granule = std::max(1.0, std::floor(unit.align_bytes->value / size));
    const double row = static_cast<double>(work.row_elements);
    return round_up(row, granule) / row;
}

double byte_seconds(const ExecutionUnit& unit, WorkKind k, double bytes) {
    if (bytes <= 0 || !unit.serves_kind(k)) return 0;
    return bytes / unit.byte_rate_for(k)->value;
}

// Seconds of work on one instance of `unit` if it did all of the case alone.
double unit_seconds(const WorkModel& work, const ChargedWork& c, const ExecutionUnit& unit,
                    const HardwareModel& model) {
    double s = 0;
    // DRAM and HBM are one bus used in both directions, so reads and writes add on a unit
    // that serves both; engines that move one direction (MTE2, MTE3) serve one kind each.
    s += byte_seconds(unit, WorkKind::bytes_read, c.bytes_read);
    s += byte_seconds(unit, WorkKind::bytes_written, c.bytes_written);
    s += byte_seconds(unit, WorkKind::l1_to_l0a, c.l1_to_l0a);
    s += byte_seconds(unit, WorkKind::l1_to_l0b, c.l1_to_l0b);
    s += byte_seconds(unit, WorkKind::l0c_to_gm, c.l0c_to_gm);
    if (unit.serves_kind(WorkKind::vector)) {
        for (const auto& v : c.vector) {
            auto cost = unit.vector_flops_per_element.find(v.op_class);
            if (cost == unit.vector_flops_per_element.end() || v.elements <= 0) continue;
            const Figure& rate = rate_or_fail(unit, v.dtype, model,
                                              "vector op class '" + std::string(op_class_name(v.op_class)) + "'");
            s += v.elements * row_padding(work, unit, v.dtype) * cost->second.value / rate.value;
        }
        // Dtypes without arithmetic of their own are converted on the way in and out.
        if (unit.runs_as_conversion)
            for (const auto& io : work.vector_io) {
                if (io.elements <= 0 || unit.flops_per_s.count(io.dtype) || !unit.runs_as.count(io.dtype)) continue;
                const Figure& rate = rate_or_fail(unit, io.dtype, model, "conversions");
                s += io.elements * row_padding(work, unit, io.dtype) * unit.runs_as_conversion->value / rate.value;
            }
    }
    if (unit.serves_kind(WorkKind::matrix)) {
        for (const auto& m : c.matrix) {
            if (m.macs <= 0) continue;
            const Figure& rate = rate_or_fail(unit, m.dtype, model, "matrix MACs");
            s += m.macs * unit.flops_per_mac->value / rate.value;
        }
        const double g = unit.mac_granule ? unit.mac_granule->value : 1;
        for (const Contraction* k : c.cube) {
            const Figure& rate = rate_or_fail(unit, k->dtype, model, "matrix MACs");
            const double macs = k->batch * round_up(static_cast<double>(k->m), g) *
                                round_up(static_cast<double>(k->n), g) * round_up(static_cast<double>(k->k), g);
            s += macs * unit.flops_per_mac->value / rate.value;
        }
    }
    return s;
}

// Units that share hardware form one component; its busy time is the sum of its members.
std::vector<int> share_components(const HardwareModel& model) {
    std::vector<int> parent(model.units.size());
    std::iota(parent.begin(), parent.end(), 0);
    auto find = [&](int i) {
        while (parent[i] != i) i = parent[i] = parent[parent[i]];
        return i;
    };
    for (std::size_t i = 0; i < model.units.size(); ++i)
        for (const auto& other : model.units[i].shares_with)
            for (std::size_t j = 0; j < model.units.size(); ++j)
                if (model.units[j].name == other) parent[find(static_cast<int>(i))] = find(static_cast<int>(j));
    std::vector<int> component(model.units.size());
    for (std::size_t i = 0; i < model.units.size(); ++i) component[i] = find(static_cast<int>(i));
    return component;
}

double buffer_bytes(const HardwareModel& model, const std::string& name) {
    auto it = model.buffers.find(name);
    return it == model.buffers.end() ? 0 : it->second.value;
}

// L0C output tiles (tile_m x tile_n) that fit the buffers: the fp32 accumulator tile in
// L0C, and the thinnest (k = one fractal) operand slices in L0A and L0B. Powers of two from
// the fractal up; tiles larger than every contraction's padded extent are skipped as
// equivalent to the largest useful one.
std::vector<std::pair<int, int>> tile_shapes(const WorkModel& work, const HardwareModel& model) {
    const double l0a = buffer_bytes(model, "l0a"), l0b = buffer_bytes(model, "l0b"), l0c = buffer_bytes(model, "l0c");
    if (l0a <= 0 || l0b <= 0 || l0c <= 0) return {};
    std::int64_t max_m = 16, max_n = 16;
    std::size_t op_size = 1;
    for (const auto& k : work.contractions) {
        max_m = std::max(max_m, k.m);
        max_n = std::max(max_n, k.n);
        op_size = std::max(op_size, dtype_size(k.dtype));
    }
    constexpr int fractal = 16;
    constexpr double acc_size = 4;  // fp32 / int32 accumulators
    std::vector<std::pair<int, int>> out;
    for (int tm = fractal; tm <= 4096; tm *= 2) {
        if (tm / 2 >= max_m) break;
        for (int tn = fractal; tn <= 4096; tn *= 2) {
            if (tn / 2 >= max_n) break;
            if (tm * static_cast<double>(tn) * acc_size > l0c) continue;
            if (tm * static_cast<double>(fractal) * op_size > l0a) continue;
            if (tn * static_cast<double>(fractal) * op_size > l0b) continue;
            out.emplace_back(tm, tn);
        }
    }
    return out;
}

}  // namespace

std::string ImplementationChoice::describe() const {
    std::string s = "cores=" + std::to_string(cores_used);
    if (!path.empty()) s += " path=" + path;
    if (tile_m > 0) s += " tile=" + std::to_string(tile_m) + "x" + std::to_string(tile_n);
    if (!fused) s += " unfused";
    return s;
}

std::vector<ImplementationChoice> implementation_choices(const WorkModel& work, const HardwareModel& model) {
    // A case with fewer independent items than cores cannot use them all.
    const double items = parallel_item_count(work);
    const int max_cores = static_cast<int>(std::min<double>(model.cores, items));
    std::vector<std::string> paths = {""};
    if (!work.contractions.empty()) {
        paths = {"cube"};
        const bool vector_ok = std::all_of(work.contractions.begin(), work.contractions.end(),
                                           [](const Contraction& c) { return c.vector_ok; });
        if (vector_ok && any_unit_serves(model, WorkKind::vector)) paths.push_back("vector");
    }
    const std::vector<std::pair<int, int>> tiles = tile_shapes(work, model);
    std::vector<bool> fused = {true};
    if (work.cube_vector_bytes > 0) fused.push_back(false);
    std::vector<ImplementationChoice> choices;
    // Most cores first, so that ties (a memory-bound case) report the natural choice.
    for (int d = std::max(max_cores, 1); d >= 1; --d)
        for (const auto& path : paths)
            for (bool f : fused) {
                if (path == "cube" && !tiles.empty()) {
                    // Largest tiles first: ties go to the tile with the least re-reads.
                    for (auto it = tiles.rbegin(); it != tiles.rend(); ++it)
                        choices.push_back({d, path, it->first, it->second, f});
                } else {
                    choices.push_back({d, path, 0, 0, f});
                }
            }
    return choices;
}

namespace {

// The per-unit times of `work` under `choice`, without its dependent chain.
HapResult solve_without_chain(const WorkModel& work, const HardwareModel& model, const ImplementationChoice& choice) {
    const double items = parallel_item_count(work);
    const std::vector<int> component = share_components(model);
    const ChargedWork charged = charge(work, model, choice);
    std::vector<double> own_us(model.units.size(), 0);
    std::vector<double> component_us(model.units.size(), 0);
    HapResult r;
    r.choice = choice;
    for (std::size_t i = 0; i < model.units.size(); ++i) {
        const ExecutionUnit& u = model.units[i];
        if (u.serves.empty()) continue;
        const double s = unit_seconds(work, charged, u, model);
        // A per-core figure is for one instance; the busiest of cores_used * instances
        // instances gets ceil(items / instances) of the items.
        double share = 1;
        if (u.scope == UnitScope::core) {
            const double instances = static_cast<double>(choice.cores_used) * u.instances_per_core;
            share = std::ceil(items / instances) / items;
        }
        own_us[i] = s * share * us_per_s;
        component_us[component[i]] += own_us[i];
        r.unit_us[u.name] = own_us[i];
    }
    // The bottleneck is the busiest component (first in file order on ties), and within it
    // the unit with the most work of its own.
    int busiest_component = -1;
    for (std::size_t i = 0; i < model.units.size(); ++i)
        if (!model.units[i].serves.empty() &&
            (busiest_component < 0 || component_us[component[i]] > component_us[busiest_component]))
            busiest_component = component[i];
    int bottleneck = -1;
    for (std::size_t i = 0; i < model.units.size(); ++i)
        if (!model.units[i].serves.empty() && component[i] == busiest_component &&
            (bottleneck < 0 || own_us[i] > own_us[bottleneck]))
            bottleneck = static_cast<int>(i);
    if (bottleneck < 0) throw Error(model_label(model) + ": no unit serves any kind of work");
    const ExecutionUnit& b = model.units[bottleneck];
    r.unfloored_us = component_us[component[bottleneck]];
    r.bottleneck_unit = b.name;
    r.bottleneck_group = b.group;
    r.t_hw_us = std::max(r.unfloored_us, model.floor_us);
    r.floored = model.floor_us > r.unfloored_us;
    return r;
}

// One step of a dependent chain as a work model of its own: its work, spread over at most
// items_per_step items.
WorkModel chain_step(const DependentChain& chain) {
    WorkModel step;
    step.vector = chain.vector;
    step.contractions = chain.contractions;
    step.cube_vector_bytes = chain.cube_vector_bytes;
    step.parallel_items = chain.items_per_step;
    return step;
}

}  // namespace

HapResult solve_for_choice(const WorkModel& work, const HardwareModel& model, const ImplementationChoice& choice) {
    HapResult r = solve_without_chain(work, model, choice);
    if (!(work.chain.steps > 0)) return r;
    // The steps run one after another, each on the units a step can use: the busiest unit's
    // time of one step, times the steps. Where that exceeds the case's throughput bound, the
    // chain binds and names the bottleneck.
    const HapResult step = solve_without_chain(chain_step(work.chain), model, choice);
    r.chain_us = std::ceil(work.chain.steps) * step.unfloored_us;
    if (r.chain_us > r.unfloored_us) {
        r.unfloored_us = r.chain_us;
        r.bottleneck_unit = step.bottleneck_unit;
        r.bottleneck_group = step.bottleneck_group;
        r.chain_bound = true;
        r.t_hw_us = std::max(r.unfloored_us, model.floor_us);
        r.floored = model.floor_us > r.unfloored_us;
    }
    return r;
}

HapResult solve(const WorkModel& work, const HardwareModel& model) {
    check_coverage(work, model);
    HapResult best;
    bool have = false;
    double searched = 0;
    for (const auto& choice : implementation_choices(work, model)) {
        HapResult r = solve_for_choice(work, model, choice);
        ++searched;
        if (!have || r.unfloored_us < best.unfloored_us) {
            best = std::move(r);
            have = true;
        }
    }
    best.choices_searched = searched;
    return best;
}

}  // namespace hb
