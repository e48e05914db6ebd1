// Human-readable durations, sizes, rates and percentages in the style of CUDA.jl's @profile
// ("4.95 ms", "238.42 ns", "5.0 ms"), and parsing of durations given on the command line.
//
// Layer: analysis/model/. Pure functions; no I/O, no trace types.
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

namespace libprof::analysis {

enum class TimeUnit { kNs, kUs, kMs, kS };

// The unit CUDA.jl would print `ns` in: ns below 1 µs, µs below 1 ms, ms below 1 s, else s.
TimeUnit UnitFor(double ns);
const char* UnitName(TimeUnit unit);  // "ns", "µs", "ms", "s"
double InUnit(double ns, TimeUnit unit);

// A number rounded to 2 decimals and printed like Julia prints a Float64: at least one decimal,
// trailing zeros dropped ("5.0", "4.94", "894.8", "0.0").
std::string FormatNumber(double value);

// "4.95 ms", "1.9 µs", "238.0 ns", "1.98 s".
std::string FormatDuration(double ns);

// "4 B", "1.50 KiB", "16.00 MiB", "2.00 GiB" (binary units, exact bytes below 1 KiB).
std::string FormatBytes(uint64_t bytes);

// A GPU's UUID as nvidia-smi prints it, "GPU-222b92b5-443f-05f8-b663-f5f7c17b5e63", from its 16
// raw bytes (DeviceInfo::uuid); "" for any other length.
std::string FormatGpuUuid(std::string_view raw);

// Achieved bandwidth in decimal GB/s ("12.34 GB/s"); "" when `ns` is 0.
std::string FormatBandwidth(uint64_t bytes, uint64_t ns);
double GigabytesPerSecond(uint64_t bytes, uint64_t ns);  // 0 when ns is 0

// "98.38%" (two decimals); `total` 0 gives "0.00%".
std::string FormatPercent(double part, double total);

// Parses "1500" (ns), "250ns", "20us", "20µs", "1.5ms", "2s". Errors name the bad text.
std::expected<uint64_t, std::string> ParseDuration(std::string_view text);

// "+12.50%", "-99.88%": a relative change (0.125) as a signed percentage, two decimals.
std::string FormatSignedPercent(double fraction);

// Parses "5%", "0.5%" or "5" (percent either way) into a fraction (0.05). Errors name the text.
std::expected<double, std::string> ParsePercent(std::string_view text);

}  // namespace libprof::analysis
