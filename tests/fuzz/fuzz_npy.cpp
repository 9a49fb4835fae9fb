// libFuzzer target for the .npy reader (core/npy). Every input must end in a clean
// hb::Error or an array that survives a write and a second read unchanged. Built and run
// by tests/fuzz/fuzz_npy.sh, outside CMake and CI.
#include <cstdint>
#include <cstdlib>
#include <span>

#include "core/error.hpp"
#include "core/npy.hpp"

namespace {

void check_round_trip(const hb::NpyArray& a) {
    if (a.bytes.size() != static_cast<std::size_t>(a.numel()) * hb::dtype_size(a.dtype)) std::abort();
    const std::string again = hb::encode_npy(a);
    const hb::NpyArray b = hb::decode_npy(
        std::span(reinterpret_cast<const unsigned char*>(again.data()), again.size()), "round trip");
    if (b.dtype != a.dtype || b.shape != a.shape || b.bytes != a.bytes) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::span<const unsigned char> file(data, size);
    for (const auto unmarked_u2 : {std::optional<hb::DType>{}, std::optional<hb::DType>{hb::DType::bf16}}) {
        try {
            check_round_trip(hb::decode_npy(file, "fuzz.npy", unmarked_u2));
        } catch (const hb::Error&) {
        }
    }
    return 0;
}
