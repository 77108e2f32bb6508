// SHA-256 (FIPS 180-4): weights files are checked against weights/manifest.json before use, and the
// feature schema is named by the hash of its column list. Small inputs only (a few MB at most): one pass,
// no streaming interface.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace perfcard {

std::array<std::uint8_t, 32> sha256(std::span<const std::uint8_t> bytes);
std::string sha256_hex(std::span<const std::uint8_t> bytes);  // 64 lowercase hex digits
std::string sha256_hex(std::string_view text);

}  // namespace perfcard
