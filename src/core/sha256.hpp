// SHA-256 (FIPS 180-4), used for the case seed rule and the suite hash.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace hb {

std::array<std::uint8_t, 32> sha256(std::string_view data);
std::string sha256_hex(std::string_view data);

// Incremental form for hashing many files.
class Sha256 {
  public:
    Sha256();
    void update(std::string_view data);
    std::array<std::uint8_t, 32> finish();

  private:
    void block(const std::uint8_t* p);
    std::array<std::uint32_t, 8> h_;
    std::array<std::uint8_t, 64> buffer_{};
    std::size_t buffered_ = 0;
    std::uint64_t total_bytes_ = 0;
};

}  // namespace hb
