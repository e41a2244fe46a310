#include "support/test_support.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ridge::test {

std::string shared_dir() {
  if (const char* env = std::getenv("RIDGE_SHARED_DIR")) return env;
  return RIDGE_SHARED_DIR;
}

std::string fixture(const std::string& rel) { return shared_dir() + "/fixtures/" + rel; }

bool have_shared() { return std::filesystem::is_directory(shared_dir() + "/fixtures"); }

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string mutate(std::string s, std::mt19937& rng) {
  static const std::string kTokens[] = {"{", "}", "[", "]", "\"", ":", ",", "null", "-1", "1e999", "0", "true",
                                        "\"x\"", "18446744073709551616", "{}", "[]"};
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !s.empty(); ++e) {
    const size_t at = rng() % s.size();
    switch (rng() % 4) {
      case 0: s.erase(at, 1 + rng() % 8); break;
      case 1: s.insert(at, kTokens[rng() % std::size(kTokens)]); break;
      case 2: s[at] = static_cast<char>(rng() % 256); break;
      default: s.resize(at); break;
    }
  }
  return s;
}

std::string temp_dir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "ridge-test-XXXXXX").string();
  char* p = mkdtemp(tmpl.data());
  return p ? std::string(p) : std::string("/tmp");
}

RunResult run_ridge(const std::string& args) {
  static const std::string dir = temp_dir();
  static int counter = 0;
  std::string out = dir + "/out" + std::to_string(counter) + ".txt";
  std::string err = dir + "/err" + std::to_string(counter++) + ".txt";
  std::string cmd = std::string(RIDGE_BINARY) + " " + args + " >" + out + " 2>" + err + " </dev/null";
  int status = std::system(cmd.c_str());
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

}  // namespace ridge::test
