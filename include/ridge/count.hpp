// Exact integer counts (FLOPs, MACs, bytes, params). 128-bit so that LLM-scale totals never overflow: gpt2 at
// batch 10^4 and sequence 1024 is ~3e15 forward FLOPs, and products (tokens x layers x d^2) and sums over
// sweeps and training runs go past 64 bits quickly.
#pragma once
#include <cstdint>
#include <string>

namespace ridge {

/// An exact count. Signed so that differences (measured - estimated) are representable.
using Count = __int128;

/// Decimal digits, e.g. "15516752872".
std::string to_string(Count v);
/// Decimal digits with thousands separators, e.g. "15,516,752,872".
std::string with_commas(Count v);
/// Parses a decimal integer (optional sign, optional ',' or '_' separators). Throws ridge::Error on junk or overflow.
Count parse_count(const std::string& text);
/// Closest double (for ratios and plots only; never for totals).
inline double to_double(Count v) { return static_cast<double>(v); }
/// Product of non-negative factors with an overflow check (throws ridge::Error naming `what`).
Count checked_mul(Count a, Count b, const char* what);

}  // namespace ridge
