// Helpers shared by every test executable.
#pragma once
#include <gtest/gtest.h>

#include <string>

namespace ridge::test {

/// Path to ../shared (the fixtures folder sits beside the clone).
std::string shared_dir();
/// Path to a fixture under ../shared/fixtures, e.g. fixture("onnx/resnet18.ext_emptybin.onnx").
std::string fixture(const std::string& rel);
/// True when ../shared/fixtures exists; tests that need it call RIDGE_REQUIRE_SHARED() first.
bool have_shared();

/// Result of running the ridge binary.
struct RunResult {
  int exit_code = -1;
  std::string out;  ///< stdout
  std::string err;  ///< stderr
};
/// Runs `build/ridge ARGS` (args are passed to /bin/sh, quote as needed) and captures stdout and stderr.
RunResult run_ridge(const std::string& args);
/// A fresh temporary directory, removed at exit.
std::string temp_dir();
/// The whole content of a file ("" when it cannot be read).
std::string slurp(const std::string& path);

}  // namespace ridge::test

/// Skips the current test with a message when ../shared is absent.
#define RIDGE_REQUIRE_SHARED()                                                        \
  do {                                                                                \
    if (!::ridge::test::have_shared())                                                \
      GTEST_SKIP() << "../shared/fixtures not found beside the clone; fixture test skipped"; \
  } while (0)
