// Numbers as profilers print them (locale grouping, exponents, unit suffixes) and the one unit table that
// normalises them to base units. Every factor is a power of ten (ncu and nsys use decimal prefixes).
#include <array>
#include <cctype>

#include "internal.hpp"

namespace ridge::ingest::detail {
namespace {

struct UnitRow {
  std::string_view spelling;
  std::string_view base;
  int exp10;
};

// Spellings seen in the corpus (profiler-formats.md section 8.2) -> base unit and power of ten.
constexpr std::array kUnits = {
    UnitRow{"byte", "byte", 0},           UnitRow{"Kbyte", "byte", 3},
    UnitRow{"Mbyte", "byte", 6},          UnitRow{"Gbyte", "byte", 9},
    UnitRow{"Tbyte", "byte", 12},         UnitRow{"B", "byte", 0},
    UnitRow{"KB", "byte", 3},             UnitRow{"MB", "byte", 6},
    UnitRow{"GB", "byte", 9},             UnitRow{"TB", "byte", 12},
    UnitRow{"byte/second", "byte/second", 0},   UnitRow{"Kbyte/second", "byte/second", 3},
    UnitRow{"Mbyte/second", "byte/second", 6},  UnitRow{"Gbyte/second", "byte/second", 9},
    UnitRow{"Tbyte/second", "byte/second", 12}, UnitRow{"B/s", "byte/second", 0},
    UnitRow{"KB/s", "byte/second", 3},    UnitRow{"MB/s", "byte/second", 6},
    UnitRow{"GB/s", "byte/second", 9},    UnitRow{"TB/s", "byte/second", 12},
    UnitRow{"MBps", "byte/second", 6},    UnitRow{"GBps", "byte/second", 9},
    UnitRow{"nsecond", "nsecond", 0},     UnitRow{"usecond", "nsecond", 3},
    UnitRow{"msecond", "nsecond", 6},     UnitRow{"second", "nsecond", 9},
    UnitRow{"ns", "nsecond", 0},          UnitRow{"us", "nsecond", 3},
    UnitRow{"ms", "nsecond", 6},          UnitRow{"s", "nsecond", 9},
    UnitRow{"cycle/second", "cycle/second", 0},  UnitRow{"cycle/usecond", "cycle/second", 6},
    UnitRow{"cycle/nsecond", "cycle/second", 9}, UnitRow{"cycle/msecond", "cycle/second", 3},
    UnitRow{"Hz", "cycle/second", 0},     UnitRow{"Khz", "cycle/second", 3},
    UnitRow{"Mhz", "cycle/second", 6},    UnitRow{"Ghz", "cycle/second", 9},
    UnitRow{"KHz", "cycle/second", 3},    UnitRow{"MHz", "cycle/second", 6},
    UnitRow{"GHz", "cycle/second", 9},    UnitRow{"byte/block", "byte/block", 0},
    UnitRow{"Kbyte/block", "byte/block", 3},     UnitRow{"Mbyte/block", "byte/block", 6},
    UnitRow{"inst", "inst", 0},           UnitRow{"sector", "sector", 0},
    UnitRow{"request", "request", 0},     UnitRow{"cycle", "cycle", 0},
    UnitRow{"warp", "warp", 0},           UnitRow{"block", "block", 0},
    UnitRow{"thread", "thread", 0},       UnitRow{"register/thread", "register/thread", 0},
    UnitRow{"%", "%", 0},                 UnitRow{"", "", 0},
};

// Name fragments of metrics that are rates, ratios or levels: summing them over kernels means nothing.
constexpr std::array<std::string_view, 23> kNotAdditive = {
    "per_second", "pct", "per_", "efficiency", "utilization", "throughput", "Throughput", "_rate",
    "_ratio", "occupancy", "Occupancy", "Frequency", "overhead", "ipc", "[%]", "Per ", "Size", "Limit",
    "Waves", "Registers", "Warps", "Threads", "launch__"};

bool is_digit(char c) { return c >= '0' && c <= '9'; }


// 1.234.567 / 1.234,5 / 6,72: valid only with a decimal comma.
bool comma_locale_evidence(std::string_view t) {
  if (!t.empty() && t[0] == '-') t.remove_prefix(1);
  size_t comma = t.find(',');
  if (comma != std::string_view::npos && t.find(',', comma + 1) != std::string_view::npos) return false;
  std::string_view integral = t.substr(0, comma), fraction;
  if (comma != std::string_view::npos) fraction = t.substr(comma + 1);
  if (comma != std::string_view::npos && !all_digits(fraction)) return false;
  size_t dots = 0;
  for (char c : integral) dots += c == '.';
  if (dots == 0) return comma != std::string_view::npos && all_digits(integral) && fraction.size() <= 2;
  // dotted groups of three after a 1-3 digit head
  size_t pos = 0, head = integral.find('.');
  if (head == 0 || head > 3 || !all_digits(integral.substr(0, head))) return false;
  pos = head;
  while (pos < integral.size()) {
    std::string_view group = integral.substr(pos + 1, 3);
    if (group.size() != 3 || !all_digits(group)) return false;
    pos += 4;
    if (pos < integral.size() && integral[pos] != '.') return false;
  }
  return dots >= 2 || comma != std::string_view::npos;
}

// 9,834,924.98 / 10,135,802: grouping commas.
bool dot_locale_evidence(std::string_view t) {
  if (!t.empty() && t[0] == '-') t.remove_prefix(1);
  size_t dot = t.find('.');
  std::string_view integral = t.substr(0, dot);
  size_t head = integral.find(',');
  if (head == std::string_view::npos || head == 0 || head > 3) return false;
  for (size_t pos = head; pos < integral.size(); pos += 4) {
    if (integral[pos] != ',' || integral.substr(pos + 1, 3).size() != 3 || !all_digits(integral.substr(pos + 1, 3)))
      return false;
  }
  return (integral.size() - head) % 4 == 0 && (dot == std::string_view::npos || all_digits(t.substr(dot + 1)));
}

Count pow10(int n) {
  Count r = 1;
  while (n-- > 0) r *= 10;
  return r;
}

}  // namespace

NumberLocale detect_locale(std::string_view text) {
  // The first kEnough numbers that tell the locales apart decide (a 1.7 MB ncu log has tens of thousands).
  constexpr int kEnough = 4096;
  auto separator = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == '"';
  };
  int comma = 0, dot = 0;
  size_t i = 0;
  while (i < text.size() && comma + dot < kEnough) {
    while (i < text.size() && separator(text[i])) ++i;
    size_t start = i;
    while (i < text.size() && !separator(text[i])) ++i;
    std::string_view t = text.substr(start, i - start);
    if (t.size() < 3 || t.size() > 24 || !(is_digit(t[0]) || t[0] == '-')) continue;
    if (comma_locale_evidence(t)) ++comma;
    else if (dot_locale_evidence(t)) ++dot;
  }
  return comma > dot ? NumberLocale::Comma : NumberLocale::Dot;
}

double Decimal::to_double() const {
  double v = static_cast<double>(mantissa);
  int e = exp10;
  while (e > 0) v *= 10, --e;
  while (e < 0) v /= 10, ++e;
  return v;
}

std::optional<Count> Decimal::exact() const {
  if (exp10 >= 0) {
    if (exp10 > 18) return std::nullopt;
    Count m = mantissa < 0 ? -mantissa : mantissa;
    if (m >= pow10(37 - exp10)) return std::nullopt;  // the product must stay below 10^37 (int128 holds 1.7e38)
    return mantissa * pow10(exp10);
  }
  if (exp10 < -36) return std::nullopt;
  Count d = pow10(-exp10);
  if (mantissa % d != 0) return std::nullopt;
  return mantissa / d;
}

std::optional<Decimal> parse_decimal(std::string_view s, NumberLocale loc) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  bool negative = false;
  if (s[0] == '-' || s[0] == '+') {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  int exponent = 0;
  size_t e = s.find_first_of("eE");
  if (e != std::string_view::npos) {
    std::string_view ex = s.substr(e + 1);
    bool eneg = false;
    if (!ex.empty() && (ex[0] == '-' || ex[0] == '+')) eneg = ex[0] == '-', ex.remove_prefix(1);
    if (!all_digits(ex) || ex.size() > 3) return std::nullopt;
    for (char c : ex) exponent = exponent * 10 + (c - '0');
    if (eneg) exponent = -exponent;
    s = s.substr(0, e);
  }
  const char decimal_sep = loc == NumberLocale::Comma ? ',' : '.';
  const char group_sep = loc == NumberLocale::Comma ? '.' : ',';
  size_t decimal_pos = s.rfind(decimal_sep);
  if (loc == NumberLocale::Dot && decimal_pos != std::string_view::npos && s.find('.') != decimal_pos)
    decimal_pos = std::string_view::npos;  // several dots: grouping dots in a C-locale file
  Decimal d;
  int digits = 0, frac_digits = 0;
  bool in_fraction = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (is_digit(c)) {
      if (++digits > 36) return std::nullopt;
      d.mantissa = d.mantissa * 10 + (c - '0');
      if (in_fraction) ++frac_digits;
    } else if (i == decimal_pos) {
      in_fraction = true;
    } else if (c == group_sep || (c == '.' && loc == NumberLocale::Dot)) {
      if (in_fraction) return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  if (digits == 0) return std::nullopt;
  d.exp10 = exponent - frac_digits;
  if (negative) d.mantissa = -d.mantissa;
  return d;
}

Value to_base(const Decimal& d, std::string_view unit) {
  for (const UnitRow& u : kUnits)
    if (u.spelling == unit) {
      Decimal scaled{d.mantissa, d.exp10 + u.exp10};
      return Value{scaled.to_double(), scaled.exact(), std::string(u.base)};
    }
  return Value{d.to_double(), d.exact(), std::string(unit)};
}

std::pair<std::string_view, std::string_view> split_number_unit(std::string_view s) {
  s = trim(s);
  size_t end = s.size();
  while (end > 0 && !is_digit(s[end - 1])) --end;
  return {trim(s.substr(0, end)), trim(s.substr(end))};
}

std::optional<Value> parse_with_unit(std::string_view s, NumberLocale loc) {
  auto [num, unit] = split_number_unit(s);
  auto d = parse_decimal(num, loc);
  if (!d) return std::nullopt;
  return to_base(*d, unit);
}

std::optional<Value> parse_in_unit(std::string_view s, std::string_view unit, NumberLocale loc) {
  auto d = parse_decimal(s, loc);
  if (!d) return std::nullopt;
  return to_base(*d, unit);
}

bool additive(std::string_view metric, std::string_view base_unit) {
  if (base_unit == "%" || base_unit.find('/') != std::string_view::npos) return false;
  for (std::string_view frag : kNotAdditive)
    if (metric.find(frag) != std::string_view::npos) return false;
  return true;
}

std::pair<std::string, std::string> split_title_unit(std::string_view title) {
  title = trim(title);
  if (title.size() > 2 && title.back() == ')') {
    size_t open = title.rfind('(');
    if (open != std::string_view::npos && open > 0)
      return {std::string(trim(title.substr(0, open))), std::string(title.substr(open + 1, title.size() - open - 2))};
  }
  return {std::string(title), ""};
}

}  // namespace ridge::ingest::detail
