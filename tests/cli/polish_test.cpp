// The CLI frame: unknown commands, range errors in words, --version everywhere, consistent flags, flags that do
// nothing are errors, completion and man page, a closed stdout, terminal-fitted tables, CSV and JSON outputs
// (round trip through python3's csv module, JSON Schema per command) and the progress estimate.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/llm_model.hpp"
#include "ridge/llm.hpp"
#include "schema_check.hpp"
#include "support/test_support.hpp"

namespace {

using ridge::test::run_ridge;
using ridge::test::slurp;

// Sets an environment variable for one scope (the ridge child inherits it).
struct ScopedEnv {
  std::string name;
  ScopedEnv(std::string n, const std::string& v) : name(std::move(n)) { setenv(name.c_str(), v.c_str(), 1); }
  ~ScopedEnv() { unsetenv(name.c_str()); }
};

// The visible subcommands, from `ridge --help`'s definitions (the same list the completion is built from).
std::vector<std::string> visible_commands() {
  CLI::App app;
  for (const auto& c : ridge::cli::commands()) c.add(app);
  std::vector<std::string> out;
  for (const CLI::App* sub : app.get_subcommands({}))
    if (!sub->get_group().empty()) out.push_back(sub->get_name());
  return out;
}

TEST(CliFrame, UnknownCommandSaysSoAndListsTheCommands) {
  auto r = run_ridge("frobnicate resnet50");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown command 'frobnicate'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("summary"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("A subcommand is required"), std::string::npos) << r.err;
  auto none = run_ridge("");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("no command given"), std::string::npos) << none.err;
}

TEST(CliFrame, MistypedCommandsAndOptionsGetTheNameTheyProbablyMeant) {
  const auto command = run_ridge("sumary resnet50");
  EXPECT_EQ(command.exit_code, 2);
  EXPECT_NE(command.err.find("unknown command 'sumary' (did you mean summary?)"), std::string::npos) << command.err;
  EXPECT_EQ(run_ridge("xyz resnet50").err.find("did you mean"), std::string::npos);  // nothing close: no guess

  // CLI11 said "The following arguments were not expected: 128 --gen" (its value first).
  for (const auto& [args, said] : std::vector<std::pair<std::string, std::string>>{
           {"serve llama-2-7b -d h100 --gen 128", "unknown option --gen (did you mean --generate?)"},
           {"serve llama-2-7b -d h100 --gen=128", "unknown option --gen (did you mean --generate?)"},
           {"summary resnet50 --bacth 3", "unknown option --bacth (did you mean --batch?)"},
           {"summary resnet50 --zzzzzzzz", "unknown option --zzzzzzzz (run `ridge summary --help`)"},
           {"summary resnet50 -x", "unknown option -x (run `ridge summary --help`)"},
           {"summary resnet50 extra1 extra2", "unexpected arguments 'extra1', 'extra2' (run `ridge summary --help`)"},
           {"summary resnet50 -- -5", "unexpected argument '-5'"},
           {"summary resnet50 ---", "unknown option ---"},  // dashes only: nothing to compare (was an abort)
           {"summary resnet50 --=5", "unknown option --"}}) {
    const auto r = run_ridge(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_NE(r.err.find("ridge: usage error: " + said), std::string::npos) << args << ": " << r.err;
  }
  EXPECT_EQ(ridge::cli::meant_names("gen", {"generate", "help", "tp"}), std::vector<std::string>{"generate"});
  EXPECT_EQ(ridge::cli::meant_names("bacth", {"batch", "depth"}), std::vector<std::string>{"batch"});
}

TEST(CliFrame, ValuesOfTheWrongKindAreNamedWithWhatTheOptionTakes) {
  // CLI11 said "Could not convert: --batch = abc"; a negative --seed wrapped to 18446744073709551615.
  for (const auto& [args, said] : std::vector<std::pair<std::string, std::string>>{
           {"summary mnist --batch abc", "--batch: 'abc' is not a whole number"},
           {"summary mnist --strict=maybe", "--strict is a flag: give it alone or as --strict=true|false, not 'maybe'"},
           {"predict mnist -d a100 --ppp x", "--ppp: x is not a number"},
           {"summary mnist --depth 1.5", "--depth: 1.5 is not a whole number"},
           {"measure mnist --seed -1", "--seed: -1 is negative"},
           {"run mnist --seed -1", "--seed: -1 is negative"}}) {
    const auto r = run_ridge(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_NE(r.err.find("ridge: usage error: " + said), std::string::npos) << args << ": " << r.err;
  }
}

TEST(CliFrame, RangeErrorsInWords) {
  for (const char* args : {"machine --quick --threads 0", "profile-cmd --slurm --batch-sizes -3 -- app {bs}",
                           "summary mnist --depth 99"}) {
    auto r = run_ridge(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_LT(r.err.size(), 200u) << args << ": " << r.err;
    EXPECT_EQ(r.err.find("000000"), std::string::npos) << args << ": " << r.err;
  }
  EXPECT_NE(run_ridge("machine --quick --threads 0").err.find("0 is not a positive number"), std::string::npos);
  // More threads than CPUs would time the scheduler (all-thread peaks of 0.0005 GFLOP/s were printed): refused,
  // before anything is measured or cached.
  const auto many = run_ridge("machine --quick --refresh --cache /nonexistent/m.json --threads 100000");
  EXPECT_EQ(many.exit_code, 2) << many.err;
  EXPECT_NE(many.err.find("--threads 100000: this process may run on "), std::string::npos) << many.err;
  EXPECT_NE(run_ridge("summary mnist --depth 99").err.find("99 is not between 0 and 64"), std::string::npos);
  EXPECT_EQ(ridge::cli::usage_message("--ppp: Value 2 not in range 0.000001 to 1.000000"),
            "--ppp: 2 is not between 0.000001 and 1");
}

TEST(CliFrame, VersionOnEverySubcommand) {
  for (const auto& c : visible_commands()) {
    auto r = run_ridge(c + " --version");
    EXPECT_EQ(r.exit_code, 0) << c << ": " << r.err;
    EXPECT_NE(r.out.find("ridge 0."), std::string::npos) << c << ": " << r.out;
  }
}

TEST(CliFrame, SameFlagSameMeaning) {
  // -d is --device wherever there is a device; --devices-dir loads device files everywhere (--devices stays).
  for (const char* c : {"predict", "roofline", "calibrate", "report", "sweep"}) {
    auto h = run_ridge(std::string(c) + " --help");
    EXPECT_NE(h.out.find("-d,--device"), std::string::npos) << c << "\n" << h.out;
  }
  for (const char* c : {"predict", "roofline", "calibrate", "report", "devices"})
    EXPECT_NE(run_ridge(std::string(c) + " --help").out.find("--devices-dir"), std::string::npos) << c;
  const std::string dir = ridge::test::temp_dir();
  EXPECT_EQ(run_ridge("devices --devices-dir " + dir + " --format json").exit_code, 0);
  EXPECT_EQ(run_ridge("devices --devices " + dir + " --format json").exit_code, 0);
  // summary's old -d (depth) still works, with a warning.
  auto old = run_ridge("summary resnet18 -d 1 --format json");
  EXPECT_EQ(old.exit_code, 0);
  EXPECT_NE(old.err.find("deprecated"), std::string::npos);
  // {batch} and {bs} are the same placeholder in profile-cmd --slurm and sweep --gpu-cmd.
  auto a = run_ridge("profile-cmd --slurm --batch-sizes 1,2 -- python train.py -b {batch}");
  auto b = run_ridge("profile-cmd --slurm --batch-sizes 1,2 -- python train.py -b {bs}");
  EXPECT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
}

TEST(CliFrame, FlagsThatDoNothingAreErrors) {
  // (sweep --precision without --device is not among them: the precision sets the memory of every point.)
  for (const char* args : {"sweep mnist --batch 1,2 --threads 2",
                           "summary mnist --format json --wide", "ingest x.log --steps 3",
                           "predict resnet18 -d a100 --interconnect nvlink"}) {
    auto r = run_ridge(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;  // one line, the help hint included
  }
}

TEST(CliFrame, CompletionListsEveryCommandAndOption) {
  const auto bash = run_ridge("completion bash");
  const auto zsh = run_ridge("completion zsh");
  const auto man = run_ridge("man");
  ASSERT_EQ(bash.exit_code, 0) << bash.err;
  ASSERT_EQ(zsh.exit_code, 0) << zsh.err;
  ASSERT_EQ(man.exit_code, 0) << man.err;
  CLI::App app;
  for (const auto& c : ridge::cli::commands()) c.add(app);
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_group().empty()) continue;
    const std::string name = sub->get_name();
    EXPECT_NE(bash.out.find(" " + name), std::string::npos) << name;
    EXPECT_NE(zsh.out.find("'" + name + ":"), std::string::npos) << name;
    EXPECT_NE(man.out.find(".SS \"ridge " + name), std::string::npos) << name;
    for (const CLI::Option* o : sub->get_options()) {
      if (o->get_positional() || o->get_group().empty()) continue;
      for (const auto& l : o->get_lnames()) {
        EXPECT_NE(bash.out.find("--" + l), std::string::npos) << name << " --" << l;
        std::string roff_name = "\\-\\-";  // roff escapes every hyphen
        for (char ch : l) roff_name += ch == '-' ? std::string("\\-") : std::string(1, ch);
        EXPECT_NE(man.out.find(roff_name), std::string::npos) << name << " --" << l;
      }
    }
  }
  for (const char* hidden : {"completion", "man"})  // hidden commands stay hidden
    EXPECT_EQ(bash.out.find(std::string("    ") + hidden + ")"), std::string::npos) << hidden;
  // The bash script works: completing `ridge su` offers summary, `ridge summary --de` offers --depth.
  const std::string dir = ridge::test::temp_dir();
  std::ofstream(dir + "/c.bash") << bash.out;
  const std::string script = "source " + dir + "/c.bash; COMP_WORDS=(ridge su); COMP_CWORD=1; _ridge; echo \"${COMPREPLY[*]}\";"
                             " COMP_WORDS=(ridge summary --de); COMP_CWORD=2; _ridge; echo \"${COMPREPLY[*]}\"";
  std::ofstream(dir + "/t.sh") << script;
  FILE* p = popen(("bash " + dir + "/t.sh").c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[512];
  std::string out;
  while (fgets(buf, sizeof buf, p)) out += buf;
  EXPECT_EQ(pclose(p), 0);
  EXPECT_EQ(out, "summary\n--depth\n");
}

TEST(CliFrame, ClosedStdoutStillWritesTheFilesAndExitsZero) {
  const std::string dir = ridge::test::temp_dir();
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  close(fds[0]);  // nobody reads: the first write to stdout gets EPIPE (or SIGPIPE)
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    const std::string json = dir + "/x.json", svg = dir + "/x.svg", csv = dir + "/x.csv";
    execl(RIDGE_BINARY, RIDGE_BINARY, "summary", "resnet50", "--json", json.c_str(), "--plot", svg.c_str(), "--csv",
          csv.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_NE(slurp(dir + "/x.svg").find("</svg>"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(slurp(dir + "/x.json"))["inputs"]["model"], "resnet50");
  EXPECT_EQ(slurp(dir + "/x.csv").rfind("name,op,", 0), 0u);
}

TEST(CliFrame, TablesFitColumnsAndSummaryRollsUpOnATerminal) {
  ScopedEnv cols("COLUMNS", "100"), lines("LINES", "60");
  auto r = run_ridge("summary resnet50");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream in(r.out);
  size_t rows = 0;
  for (std::string line; std::getline(in, line);) {
    size_t w = 0;
    for (unsigned char ch : line) w += (ch & 0xC0) != 0x80;
    EXPECT_LE(w, 100u) << line;
    rows += line.rfind("layer", 0) == 0;
  }
  EXPECT_NE(r.out.find("grouped to depth"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--wide shows all"), std::string::npos) << r.out;
  EXPECT_LE(rows, 31u);  // the header and at most LINES - 30 layers
  auto wide = run_ridge("summary resnet50 --wide --depth 0");
  EXPECT_NE(wide.out.find("descriptor"), std::string::npos);
  EXPECT_NE(wide.out.find("layer4.2.conv3"), std::string::npos);  // every node
  EXPECT_EQ(wide.out.find("left out"), std::string::npos);
  // A pipe without COLUMNS is not a terminal: every node, every column.
  unsetenv("COLUMNS");
  auto piped = run_ridge("summary resnet50");
  EXPECT_NE(piped.out.find("layer4.2.conv3"), std::string::npos);
  EXPECT_NE(piped.out.find("descriptor"), std::string::npos);
}

TEST(CliFrame, CsvOneTablePerFileLoadsAsIs) {
  const std::string dir = ridge::test::temp_dir();
  auto r = run_ridge("sweep mnist --batch 1,8,64 --device a100 --csv " + dir + "/all/ --csv-totals " + dir +
                     "/t.csv --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("model,batch,", 0), 0u) << r.out;  // stdout: the main table (points) only
  for (const char* f : {"points", "fits", "capacity"}) EXPECT_TRUE(std::filesystem::exists(dir + "/all/" + f + ".csv")) << f;
  auto s = run_ridge("summary resnet18 --csv " + dir + "/layers.csv --csv-totals " + dir + "/totals.csv");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  ASSERT_EQ(run_ridge("summary resnet18 --csv " + dir + "/s/").exit_code, 0);
  // python3's csv module reads every file back: one header, equal row lengths, numbers without units.
  const std::string py = std::string(RIDGE_SOURCE_DIR) + "/tests/cli/csv_roundtrip.py";
  if (std::system("python3 -c 'import csv' 2>/dev/null") != 0) GTEST_SKIP() << "python3 not found";
  const std::string cmd = "python3 " + py + " " + dir + "/layers.csv:69 " + dir + "/totals.csv " + dir +
                          "/all/points.csv:3 " + dir + "/all/fits.csv " + dir + "/s/layers.csv:69 " + dir + "/s/totals.csv";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

TEST(CliFrame, JsonCarriesVersionsInputsAndBooleans) {
  auto r = run_ridge("summary resnet18 --batch 4 --dtype bf16 --convention fvcore --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_TRUE(j["ridge_version"].is_string());
  EXPECT_EQ(j["command"], "summary");
  EXPECT_EQ(j["inputs"]["model"], "resnet18");
  EXPECT_EQ(j["inputs"]["batch"], 4);
  EXPECT_EQ(j["inputs"]["dtype"], "bf16");
  EXPECT_EQ(j["inputs"]["convention"], "fvcore");
  EXPECT_FALSE(j["inputs"].contains("format"));
  EXPECT_TRUE(j["totals"]["complete"].is_boolean());
  auto p = nlohmann::json::parse(run_ridge("sweep mnist --batch 1,2 --train --format json").out);
  EXPECT_EQ(p["inputs"]["train"], true);
  EXPECT_EQ(p["inputs"]["measure"], false);
}

// Every command's JSON output validates against docs/schemas/COMMAND.json.
TEST(CliFrame, JsonOutputsMatchTheirSchemas) {
  const std::string dir = ridge::test::temp_dir();
  // A private cache holding a measured profile, so `devices` lists this machine (a CPU: no links, fewer sources)
  // whatever the user's own ~/.cache holds.
  std::filesystem::create_directories(dir + "/cache/ridge");
  std::ofstream(dir + "/cache/ridge/machine.json")
      << R"({"cpu": {"model": "test cpu"}, "peak_gflops": {"fp32": 200, "fp64": 100}, "bandwidth_gbs": {"DRAM": 20}})";
  ScopedEnv cache("XDG_CACHE_HOME", dir + "/cache");
  const auto devices = nlohmann::json::parse(run_ridge("devices --format json").out);
  ASSERT_FALSE(devices["devices"].empty());
  EXPECT_EQ(devices["devices"].back()["id"], "machine");
  std::vector<std::pair<std::string, std::string>> runs = {
      {"list", "list"},
      {"summary", "summary resnet18 --convention torchvision"},
      {"flops", "flops resnet18 --all-conventions"},
      {"sweep", "sweep mnist --batch 1,8 --device a100"},
      {"devices", "devices"},
      {"roofline", "roofline resnet18 mnist -d a100 -d v100"},
      {"predict", "predict resnet18 -d a100 --train"},
      {"measure", "measure mnist --batch 2 --repeat 2 --machine none --json " + dir + "/m.json"},
      {"run", "run mnist"},
      {"machine", "machine --quick --cache " + dir + "/machine.json"},
      {"calibrate", "calibrate " + dir + "/m.json -d a100 --force -o " + dir + "/cal.json"},
      {"compare", "compare resnet18 mnist -d a100"},
      {"report", "report mnist -d a100 --train -o " + dir + "/report.html"},
  };
  if (ridge::test::have_shared())
    runs.push_back({"ingest", "ingest " + ridge::test::fixture("profiles/03_nsys_gputrace_csv_nyu_A100_resnet50_bs10_train.csv")});
  for (const auto& [name, args] : runs) {
    auto r = run_ridge(args + " --format json");
    ASSERT_EQ(r.exit_code, 0) << args << ": " << r.err;
    const std::string schema_path = std::string(RIDGE_SOURCE_DIR) + "/docs/schemas/" + name + ".json";
    const std::string text = slurp(schema_path);
    ASSERT_FALSE(text.empty()) << "no schema " << schema_path;
    auto errors = ridge::test::schema_errors(nlohmann::json::parse(text), nlohmann::json::parse(r.out));
    EXPECT_TRUE(errors.empty()) << name << ":\n" << (errors.empty() ? "" : errors.front()) << "\n("
                                << errors.size() << " problems)";
  }
  // The checker does catch a wrong document.
  auto schema = nlohmann::json::parse(slurp(std::string(RIDGE_SOURCE_DIR) + "/docs/schemas/summary.json"));
  auto doc = nlohmann::json::parse(run_ridge("summary mnist --format json").out);
  doc["totals"]["complete"] = "yes";
  doc.erase("schema_version");
  EXPECT_EQ(ridge::test::schema_errors(schema, doc).size(), 2u);
}

// Work on an LLM whose graphs take seconds to build (many experts) says so on stderr first; the estimate of the
// graph's size is within a third of the built graph's.
TEST(Progress, LargeLlmsAreAnnounced) {
  using namespace ridge;
  for (const char* name : {"llama-2-7b", "mixtral-8x7b", "deepseek-v2-lite", "gpt-oss-20b"}) {
    const LlmConfig& c = *find_llm_config(name);
    LlmShape s;
    s.tokens = 4;
    const auto built = static_cast<double>(build_llm(c, s).nodes.size());
    EXPECT_NEAR(static_cast<double>(llm_graph_nodes_estimate(c)) / built, 1.0, 1.0 / 3) << name;
  }
  EXPECT_EQ(ridge::cli::large_llm_message(*find_llm_config("llama-2-70b"), "serve"), "");
  EXPECT_EQ(ridge::cli::large_llm_message(*find_llm_config("qwen3-30b-a3b"), "serve"),
            "serve: qwen3-30b-a3b has about 76,000 ops per graph (48 layers, 128 experts in each sparse one): "
            "building and costing them takes seconds");
}

TEST(Progress, EstimatesTheTimeLeftFromInjectedTimings) {
  using ridge::cli::eta_seconds;
  EXPECT_FALSE(eta_seconds(5, 0, 10));
  EXPECT_DOUBLE_EQ(*eta_seconds(12, 3, 10), 28);
  EXPECT_DOUBLE_EQ(*eta_seconds(40, 10, 10), 0);
  EXPECT_EQ(ridge::cli::format_duration(200), "3 min 20 s");
  EXPECT_EQ(ridge::cli::format_duration(7500), "2 h 5 min");
  double now = 100;
  ridge::cli::ProgressMeter meter("sweep", 4, [&] { return now; });
  EXPECT_EQ(meter.next("mnist at batch 1"), "sweep: 1/4 (mnist at batch 1)");
  now += 10;
  EXPECT_EQ(meter.next("mnist at batch 2"), "sweep: 2/4 (mnist at batch 2), 10 s elapsed, about 30 s left");
  now += 30;  // the second point was slower: the estimate follows the average
  EXPECT_EQ(meter.next("mnist at batch 4"), "sweep: 3/4 (mnist at batch 4), 40 s elapsed, about 40 s left");
  now += 20;
  meter.next("mnist at batch 8");
  now += 20;
  EXPECT_EQ(meter.finish(), "sweep: 4/4 done in 1 min 20 s");
  // Work that may be quick (a chart's analyses) stays silent for its first second, then reports as usual.
  now = 0;
  ridge::cli::ProgressMeter quick("serve --plot: latency vs batch", 3, [&] { return now; }, 1.0);
  EXPECT_EQ(quick.next("batch 1"), "");
  now = 0.5;
  EXPECT_EQ(quick.next("batch 2"), "");
  now = 0.9;
  EXPECT_EQ(quick.finish(), "");  // nothing was shown, nothing to close
  now = 0;
  ridge::cli::ProgressMeter slow("serve --plot: latency vs batch", 3, [&] { return now; }, 1.0);
  EXPECT_EQ(slow.next("batch 1"), "");
  now = 2;
  EXPECT_EQ(slow.next("batch 2"), "serve --plot: latency vs batch: 2/3 (batch 2), 2 s elapsed, about 4 s left");
  now = 3;
  EXPECT_EQ(slow.finish(), "serve --plot: latency vs batch: 3/3 done in 3 s");
  // A thousand quick points: silent for 2 s, then one line a second, counting every point (a sweep had printed
  // 913 lines in 15 s, the first one "1/1024" at the 114th point with "about 34 min left").
  now = 0;
  ridge::cli::ProgressMeter many("sweep", 1000, [&] { return now; }, 2.0, 1.0);
  std::vector<std::string> shown;
  for (int i = 0; i < 1000; ++i) {
    now = i / 100.0;
    if (auto line = many.next("p"); !line.empty()) shown.push_back(line);
  }
  now = 10;
  ASSERT_EQ(shown.size(), 8u);  // at 2, 3, ..., 9 s
  EXPECT_EQ(shown.front(), "sweep: 201/1000 (p), 2 s elapsed, about 8 s left");
  EXPECT_EQ(many.finish(), "sweep: 1000/1000 done in 10 s");
  // The machine's numbered steps: the estimate starts with step 2.
  double first = -1;
  EXPECT_EQ(ridge::cli::step_eta("machine: clock", 0, first), "machine: clock");
  EXPECT_EQ(ridge::cli::step_eta("machine: bandwidth 8 KiB (1/16)", 1, first), "machine: bandwidth 8 KiB (1/16)");
  EXPECT_EQ(ridge::cli::step_eta("machine: bandwidth 16 KiB (2/16)", 1.5, first),
            "machine: bandwidth 16 KiB (2/16), about 8 s left");  // 0.5 s per step, 15 to go
  EXPECT_EQ(ridge::cli::step_eta("machine: bandwidth 1 MiB (16/16)", 8.5, first),
            "machine: bandwidth 1 MiB (16/16), about 1 s left");
}

}  // namespace
