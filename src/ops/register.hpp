// Self-registration: an operator's op.cpp ends with HB_REGISTER_OPERATOR(ClassName). The
// ops are built as an object library so that no registration is dropped by the linker.
#pragma once

#include "ops/operator.hpp"

namespace hb {
bool register_operator(const Operator* op);
}  // namespace hb

#define HB_REGISTER_OPERATOR(Class)                                        \
    namespace {                                                            \
    const Class hb_operator_instance_##Class;                              \
    const bool hb_operator_registered_##Class =                            \
        ::hb::register_operator(&hb_operator_instance_##Class);            \
    }
