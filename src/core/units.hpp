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
// In GiB with the given decimals, for tables headed GiB: "12.34". From 1 TiB on, the number
// switches unit and says so ("1.50 TiB", "5.08 PiB"), never "5584716796.88".
std::string format_gib(std::uint64_t bytes, int decimals = 2);
// The same with its unit, for prose: "12.34 GiB" (also below 1 GiB: "0.50 GiB"), "1.50 TiB".
std::string format_gib_unit(std::uint64_t bytes, int decimals = 2);
// Decimal rate: "4.81 TB/s" / "63.0 GB/s" from bytes per second (SI, as bandwidth is quoted).
std::string format_rate(double bytes_per_second, int decimals = 1);

// Parses "24GiB", "24 GB", "80g", "1.5TiB", "1048576" (bytes). Decimal units (GB) are 10^9,
// binary (GiB, or a bare G) are 2^30. Errors name the text.
Result<std::uint64_t> parse_size(std::string_view text);
// A card's or a budget's memory: as parse_size, but the unit is required ("24" alone is an
// error asking for one: 24 bytes is never meant) and 0 is refused.
Result<std::uint64_t> parse_memory_size(std::string_view text);

// The longest duration parse_duration accepts: 100 days. Anything longer is a typo, and every
// accepted duration fits std::chrono's 64-bit nanosecond counts with centuries to spare.
constexpr double kMaxDurationSeconds = 100.0 * 24 * 3600;
// Parses "20ms", "0.5s", "100us", "2m", "1h", "3d" into seconds; refuses more than kMaxDurationSeconds.
Result<double> parse_duration(std::string_view text);

// Saturating / checked arithmetic on byte counts: absurd inputs give a clear error, never a wrap.
std::optional<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b);
std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b);
std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b);
std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b);

}  // namespace vramdoc
