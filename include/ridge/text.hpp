// Small ASCII text helpers shared by every stage (names, flags, file fields). Locale-independent: bytes outside
// A-Z / a-z and ASCII whitespace pass through unchanged, so UTF-8 names survive.
#pragma once
#include <string>
#include <string_view>

namespace ridge {

/// `s` with A-Z mapped to a-z ("A100-SXM4" -> "a100-sxm4").
std::string ascii_lower(std::string_view s);

/// `s` with a-z mapped to A-Z ("fp16 tensor" -> "FP16 TENSOR").
std::string ascii_upper(std::string_view s);

/// `s` without leading and trailing ASCII whitespace (space, \t, \n, \v, \f, \r): a view into `s`, valid
/// as long as the characters it views.
std::string_view trim(std::string_view s);

/// True when `s` is one or more ASCII digits 0-9 and nothing else ("0", "12"; not "", "-1", "1.5").
bool all_digits(std::string_view s);

/// `s` safe to print on a terminal or in a CSV: control characters (C0 but tab, DEL) become '?', and bytes
/// that are not well-formed UTF-8 become U+FFFD; well-formed UTF-8 passes unchanged. A file's node name with an
/// escape sequence in it must not drive the user's terminal.
std::string printable(std::string_view s);

}  // namespace ridge
