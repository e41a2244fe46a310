// Errors in three tiers:
//  1. ridge::Error (and UsageError) — exceptions thrown at boundaries (files, flags, user input) with context;
//     the CLI catches them in one place and prints a single line (exit 1, or 2 for usage).
//  2. RIDGE_ASSERT — programmer errors; prints file:line and aborts (never reached by bad input).
//  3. Per-item status (unsupported op, skipped layer) is data in results, see cost.hpp / measure.
#pragma once
#include <stdexcept>
#include <string>

namespace ridge {

/// A user-facing failure: the message names the file, flag or node and says why. Exit code 1.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

/// A bad command line (unknown flag, malformed value). Exit code 2.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& what) : Error(what) {}
};

[[noreturn]] void assert_fail(const char* expr, const char* file, int line, const char* msg);

}  // namespace ridge

/// Invariant check for programmer errors; never use it for input validation.
#define RIDGE_ASSERT(cond, msg) \
  ((cond) ? void(0) : ::ridge::assert_fail(#cond, __FILE__, __LINE__, (msg)))
