// Header-only pieces the baseline shared objects (src/ops/levelN/<op>/baseline.cpp) share:
// the oneDNN CPU engine and stream, a cache of primitives keyed by their description (a
// user of oneDNN creates a primitive once and executes it many times; creating it in every
// timed call would charge the baseline for JIT work), the oneDNN data type of an hb_dtype,
// and element types for fp16/bf16 loops that compute in fp32.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include <oneapi/dnnl/dnnl.hpp>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace hb::baseline {

inline dnnl::engine& cpu_engine() {
    static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    return engine;
}

inline dnnl::stream& cpu_stream() {
    static dnnl::stream stream(cpu_engine());
    return stream;
}

inline std::optional<dnnl::memory::data_type> dnnl_type(hb_dtype t) {
    switch (t) {
        case HB_FLOAT32: return dnnl::memory::data_type::f32;
        case HB_FLOAT16: return dnnl::memory::data_type::f16;
        case HB_BFLOAT16: return dnnl::memory::data_type::bf16;
        default: return std::nullopt;
    }
}

// The primitive for `key`, made by `make` on first use. `make` returns std::nullopt when
// oneDNN has no implementation (it throws dnnl::error with status unimplemented); that
// answer is cached too, so the caller takes its fallback without asking again.
template <typename Make>
const std::optional<dnnl::primitive>& cached_primitive(const std::string& key, Make make) {
    static std::mutex mutex;
    static std::map<std::string, std::optional<dnnl::primitive>> cache;
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
    std::optional<dnnl::primitive> made;
    try {
        made = make();
    } catch (const dnnl::error& e) {
        if (e.status != dnnl_unimplemented) throw;
    }
    return cache.emplace(key, std::move(made)).first->second;
}

// Element types of fp16/bf16 loops: load to fp32, compute in fp32, round back once (what
// PyTorch CPU does for half types). F16C conversions are exact and round to nearest even,
// so they agree with hb_f16_to_f32/hb_f32_to_f16.
struct Half {
    std::uint16_t bits;
};
struct BFloat16 {
    std::uint16_t bits;
};

inline float to_f32(float v) { return v; }
inline float to_f32(BFloat16 v) { return hb_bf16_to_f32(v.bits); }
inline float to_f32(Half v) {
#if defined(__F16C__)
    return _cvtsh_ss(v.bits);
#else
    return hb_f16_to_f32(v.bits);
#endif
}

template <typename Element>
Element from_f32(float v);
template <>
inline float from_f32<float>(float v) { return v; }
template <>
inline BFloat16 from_f32<BFloat16>(float v) { return BFloat16{hb_f32_to_bf16(v)}; }
template <>
inline Half from_f32<Half>(float v) {
#if defined(__F16C__)
    return Half{static_cast<std::uint16_t>(_cvtss_sh(v, _MM_FROUND_TO_NEAREST_INT))};
#else
    return Half{hb_f32_to_f16(v)};
#endif
}

// Calls body(Element{}) with the element type of a floating dtype; false for other dtypes.
template <typename Body>
bool with_float_element(hb_dtype t, Body&& body) {
    switch (t) {
        case HB_FLOAT32: body(float{}); return true;
        case HB_FLOAT16: body(Half{}); return true;
        case HB_BFLOAT16: body(BFloat16{}); return true;
        default: return false;
    }
}

inline std::string dtype_label(hb_dtype t) {
    return t == HB_FLOAT32 ? "f32" : t == HB_FLOAT16 ? "f16" : t == HB_BFLOAT16 ? "bf16" : "dtype" + std::to_string(t);
}

}  // namespace hb::baseline
