// Helpers shared by every test executable.
#pragma once
#include <gtest/gtest.h>

#include <exception>
#include <random>
#include <string>

#include "ridge/error.hpp"

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

/// Expects `f` to throw a one-line ridge::Error that names `origin` (the file or config) and contains `want`; `what`
/// names the case in a failure.
template <class F>
void expect_one_line_error(F&& f, const std::string& origin, const std::string& want, const std::string& what) {
  std::string e;
  try {
    f();
  } catch (const Error& x) {
    e = x.what();
  }
  EXPECT_NE(e.find(origin), std::string::npos) << what << ": " << e;
  EXPECT_NE(e.find(want), std::string::npos) << what << ": " << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << what << ": " << e;
}

/// One to four random edits of `s` (a cut, an inserted JSON token, a random byte, a truncation): the inputs of
/// the parsers' mutation tests, a cheap, deterministic complement to libFuzzer.
std::string mutate(std::string s, std::mt19937& rng);

/// Feeds `rounds` mutations of `seed` (a fixed random sequence) to `parse`, which must return or throw a one-line
/// ridge::Error; any other exception fails the test. Some mutations must stay valid, so the seed is exercised.
template <class Parse>
void survive_mutations(const std::string& seed, Parse parse, int rounds = 3000) {
  std::mt19937 rng(1234);
  int accepted = 0;
  for (int i = 0; i < rounds; ++i) {
    const std::string input = mutate(seed, rng);
    try {
      parse(input);
      ++accepted;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "non-ridge exception " << e.what() << " for input:\n" << input;
      return;
    }
  }
  EXPECT_GT(accepted, 0);
}

}  // namespace ridge::test

/// Skips the current test with a message when ../shared is absent.
#define RIDGE_REQUIRE_SHARED()                                                        \
  do {                                                                                \
    if (!::ridge::test::have_shared())                                                \
      GTEST_SKIP() << "../shared/fixtures not found beside the clone; fixture test skipped"; \
  } while (0)
