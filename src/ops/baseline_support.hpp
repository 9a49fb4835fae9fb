// Header-only pieces the baseline shared objects (src/ops/levelN/<op>/baseline.cpp) share:
// the oneDNN CPU engine and stream, caches of primitives keyed by their description (a
// user of oneDNN creates a primitive once and executes it many times; creating it in every
// timed call would charge the baseline for JIT work), the oneDNN data type of an hb_dtype,
// element types for fp16/bf16 loops that compute in fp32, contiguous tensors as flat 1-D
// oneDNN memory, and the vectorized fp16/bf16 <-> fp32 conversions of the fp32 fallback.
// Header-only because every baseline is its own shared object, linked with oneDNN, while
// src/ops/*.cpp goes into the harness library, which must not link oneDNN.
#pragma once

#include <cstdint>
#include <cstring>
#include <exception>
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

// Hidden: each baseline shared object keeps its own engine, stream and caches, as a
// self-contained kernel library would. Default visibility would make the statics of these
// inline functions process-wide (STB_GNU_UNIQUE) and the object impossible to dlclose.
#pragma GCC visibility push(hidden)

namespace hb::baseline {

inline dnnl::engine& cpu_engine() {
    static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    return engine;
}

inline dnnl::stream& cpu_stream() {
    static dnnl::stream stream(cpu_engine());
    return stream;
}

// The oneDNN type of a float dtype, the ones oneDNN computes in.
inline std::optional<dnnl::memory::data_type> dnnl_type(hb_dtype t) {
    switch (t) {
        case HB_FLOAT32: return dnnl::memory::data_type::f32;
        case HB_FLOAT16: return dnnl::memory::data_type::f16;
        case HB_BFLOAT16: return dnnl::memory::data_type::bf16;
        default: return std::nullopt;
    }
}

// The oneDNN type of a tensor handed to oneDNN as it is stored: the float dtypes plus int8
// and uint8 (a binary primitive takes those as its second source, e.g. a mask).
inline std::optional<dnnl::memory::data_type> dnnl_storage_type(hb_dtype t) {
    switch (t) {
        case HB_INT8: return dnnl::memory::data_type::s8;
        case HB_UINT8: return dnnl::memory::data_type::u8;
        default: return dnnl_type(t);
    }
}

// Every tensor here is contiguous and the operation elementwise, so one flat 1-D
// descriptor of n elements describes it whatever its rank.
inline dnnl::memory::desc flat_desc(std::int64_t n, dnnl::memory::data_type t) {
    return dnnl::memory::desc({n}, t, dnnl::memory::format_tag::a);
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

// Creates a primitive descriptor, or nothing when oneDNN has no implementation for these
// data types on this CPU (fp16/bf16 without AVX-512); any other error propagates.
template <typename Make, typename... Args>
auto try_create(Make make, Args... args) -> std::optional<decltype(make(args...))> {
    try {
        return make(args...);
    } catch (const dnnl::error& e) {
        if (e.status == dnnl_unimplemented) return std::nullopt;
        throw;
    }
}

// Plans (a primitive and how to run it) by a typed key, for baselines whose plan holds more
// than the primitive. Primitives are created on a case's first call
// (hapbench_workspace_bytes) and reused for its timed calls; a framework keeps the same kind
// of shape-keyed cache.
template <typename Key, typename Plan>
class PlanCache {
  public:
    template <typename Make>
    const Plan& get(const Key& key, Make make) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = plans_.find(key);
        if (it == plans_.end()) {
            if (plans_.size() >= 64) plans_.clear();  // a suite run visits one case at a time
            it = plans_.emplace(key, make()).first;
        }
        return it->second;
    }

  private:
    std::mutex mutex_;
    std::map<Key, Plan> plans_;
};

// Runs `body` and turns any exception into an error return with its message.
template <typename Body>
int guarded(const hb_call* call, Body body) {
    try {
        return body();
    } catch (const dnnl::error& e) {
        return hb_fail(call, 3, (std::string("oneDNN: ") + e.what()).c_str());
    } catch (const std::exception& e) {
        return hb_fail(call, 3, e.what());
    }
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

// The value an element compares by (selection and scan baselines): fp32 for the float
// dtypes (exact for fp16 and bf16), the integer itself otherwise.
inline float compare_key(float v) { return v; }
inline float compare_key(Half v) { return to_f32(v); }
inline float compare_key(BFloat16 v) { return to_f32(v); }
inline std::int32_t compare_key(std::int32_t v) { return v; }
inline std::int64_t compare_key(std::int64_t v) { return v; }

inline std::string dtype_label(hb_dtype t) {
    return t == HB_FLOAT32 ? "f32" : t == HB_FLOAT16 ? "f16" : t == HB_BFLOAT16 ? "bf16" : "dtype" + std::to_string(t);
}

// A contiguous tensor as data pointer, dtype and element count.
struct FlatTensor {
    void* data = nullptr;
    hb_dtype dtype = HB_FLOAT32;
    dnnl::memory::data_type type = dnnl::memory::data_type::f32;
    std::int64_t n = 0;
};

// Empty on success, else a message for hb_fail.
inline std::string flat_view(const hb_arg* arg, const char* what, FlatTensor& out) {
    if (!arg || !arg->present || arg->count != 1) return std::string(what) + ": expected one tensor";
    const hb_tensor& t = arg->tensors[0];
    if (!hb_is_contiguous(&t)) return std::string(what) + ": only contiguous tensors are supported";
    const auto type = dnnl_storage_type(t.dtype);
    if (!type) return std::string(what) + ": unsupported dtype";
    out.type = *type;
    out.data = t.data;
    out.dtype = t.dtype;
    out.n = hb_numel(&t);
    return {};
}

// Conversions to and from fp32 for dtypes oneDNN cannot compute in. oneDNN 2.6's own
// f16/bf16 reorder is the scalar "simple:any" kernel here (about 35 ns per element, measured),
// so these are the vectorized casts (F16C, bit shifts) a framework uses, on the same OpenMP
// threads, rounding to nearest even like the harness.
inline void widen_to_f32(const FlatTensor& src, float* dst) {
    const std::int64_t n = src.n;
    if (src.dtype == HB_FLOAT16) {
        const auto* s = static_cast<const std::uint16_t*>(src.data);
        std::int64_t scalar_from = 0;
#ifdef __F16C__
        scalar_from = n / 8 * 8;
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < scalar_from; i += 8)
            _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i))));
#endif
        for (std::int64_t i = scalar_from; i < n; ++i) dst[i] = hb_f16_to_f32(s[i]);
    } else if (src.dtype == HB_BFLOAT16) {
        const auto* s = static_cast<const std::uint16_t*>(src.data);
#pragma omp parallel for simd schedule(static)
        for (std::int64_t i = 0; i < n; ++i) dst[i] = hb_bf16_to_f32(s[i]);
    } else if (src.dtype == HB_INT8) {
        const auto* s = static_cast<const std::int8_t*>(src.data);
#pragma omp parallel for simd schedule(static)
        for (std::int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(s[i]);
    } else if (src.dtype == HB_UINT8) {
        const auto* s = static_cast<const std::uint8_t*>(src.data);
#pragma omp parallel for simd schedule(static)
        for (std::int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(s[i]);
    } else {
        std::memcpy(dst, src.data, static_cast<std::size_t>(n) * sizeof(float));
    }
}

// dst is fp16 or bf16.
inline void narrow_from_f32(const float* src, const FlatTensor& dst) {
    const std::int64_t n = dst.n;
    auto* d = static_cast<std::uint16_t*>(dst.data);
    if (dst.dtype == HB_FLOAT16) {
        std::int64_t scalar_from = 0;
#ifdef __F16C__
        scalar_from = n / 8 * 8;
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < scalar_from; i += 8)
            _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i),
                             _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
#endif
        for (std::int64_t i = scalar_from; i < n; ++i) d[i] = hb_f32_to_f16(src[i]);
    } else {
#pragma omp parallel for simd schedule(static)
        for (std::int64_t i = 0; i < n; ++i) d[i] = hb_f32_to_bf16(src[i]);
    }
}

}  // namespace hb::baseline

#pragma GCC visibility pop
