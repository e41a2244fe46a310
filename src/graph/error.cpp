#include "ridge/error.hpp"

#include <cstdio>
#include <cstdlib>

namespace ridge {

void assert_fail(const char* expr, const char* file, int line, const char* msg) {
  std::fprintf(stderr, "ridge: internal error at %s:%d: %s (%s)\n", file, line, msg, expr);
  std::abort();
}

}  // namespace ridge
