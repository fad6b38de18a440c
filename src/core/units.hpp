// Byte sizes and overflow-safe arithmetic shared by every command.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace vramdoc {

constexpr std::uint64_t KiB = 1024ULL;
constexpr std::uint64_t MiB = 1024ULL * KiB;
constexpr std::uint64_t GiB = 1024ULL * MiB;

// "12.34 GiB" style, binary units, chosen so the number is below 1024 (B, KiB, MiB, GiB, TiB, PiB, EiB).
std::string format_bytes(std::uint64_t bytes, int decimals = 2);
// Always in GiB with the given decimals, for aligned tables: "12.34".
std::string format_gib(std::uint64_t bytes, int decimals = 2);
// Decimal rate: "4.81 TB/s" / "63.0 GB/s" from bytes per second (SI, as bandwidth is quoted).
std::string format_rate(double bytes_per_second, int decimals = 1);

// Parses "24GiB", "24 GB", "80g", "1.5TiB", "1048576" (bytes). Decimal units (GB) are 10^9,
// binary (GiB, or a bare G) are 2^30. Errors name the text.
Result<std::uint64_t> parse_size(std::string_view text);
// Parses "20ms", "0.5s", "100us", "2m" into seconds.
Result<double> parse_duration(std::string_view text);

// Saturating / checked arithmetic on byte counts: absurd inputs give a clear error, never a wrap.
std::optional<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b);
std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b);
std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b);
std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b);

}  // namespace vramdoc
