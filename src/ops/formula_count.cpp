#include "ops/formula_count.hpp"

namespace hb {

DType formula_dtype(DType input, FormulaMath math) {
    if (input == DType::bf16) return DType::f32;
    if (input == DType::f16 && math == FormulaMath::in_fp32) return DType::f32;
    return input;
}

void add_formula_terms(WorkModel& w, DType input, FormulaMath math, double times,
                       std::initializer_list<std::pair<OpClass, double>> per_time) {
    const DType compute = formula_dtype(input, math);
    for (const auto& [cls, n] : per_time)
        if (n > 0 && times > 0) w.formula.push_back({cls, compute, n * times});
}

void add_formula(WorkModel& w, DType input, FormulaMath math, double elements,
                 std::initializer_list<std::pair<OpClass, double>> per_element) {
    add_formula_terms(w, input, math, elements, per_element);
    const DType compute = formula_dtype(input, math);
    if (compute != input && math != FormulaMath::compare && elements > 0)
        w.formula.push_back({OpClass::cast, compute, 2 * elements});
}

double all_input_bytes(const Problem& p) {
    double bytes = 0;
    for (const auto& arg : p.inputs) {
        if (!arg.present) continue;
        for (const auto& t : arg.tensors) bytes += static_cast<double>(t.bytes());
    }
    return bytes;
}

}  // namespace hb
