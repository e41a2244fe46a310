#include "ridge/count.hpp"

#include <algorithm>
#include <limits>

#include "ridge/error.hpp"

namespace ridge {

std::string to_string(Count v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  // Work on the unsigned magnitude so that the most negative value is handled.
  unsigned __int128 u = neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string s;
  while (u > 0) {
    s.push_back(static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  if (neg) s.push_back('-');
  std::reverse(s.begin(), s.end());
  return s;
}

std::string with_commas(Count v) {
  std::string digits = to_string(v);
  bool neg = !digits.empty() && digits[0] == '-';
  if (neg) digits.erase(0, 1);
  std::string out;
  int n = static_cast<int>(digits.size());
  for (int i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return neg ? "-" + out : out;
}

Count parse_count(const std::string& text) {
  size_t i = 0;
  bool neg = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) neg = text[i++] == '-';
  if (i >= text.size()) throw Error("'" + text + "' is not an integer");
  const Count limit = std::numeric_limits<Count>::max() / 10 - 10;
  Count v = 0;
  bool any = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == ',' || c == '_') continue;
    if (c < '0' || c > '9') throw Error("'" + text + "' is not an integer");
    if (v > limit) throw Error("'" + text + "' is too large");
    v = v * 10 + (c - '0');
    any = true;
  }
  if (!any) throw Error("'" + text + "' is not an integer");
  return neg ? -v : v;
}

Count checked_mul(Count a, Count b, const char* what) {
  Count r;
  if (__builtin_mul_overflow(a, b, &r)) throw Error(std::string("count overflow computing ") + what);
  return r;
}

}  // namespace ridge
