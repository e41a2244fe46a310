// Every real profiler output in ../shared/fixtures/profiles parses, and totals match values computed
// independently: PROVENANCE.md's oracles, and sums taken with awk over the raw files (commands in comments).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "ridge/error.hpp"
#include "ridge/ingest.hpp"
#include "support/test_support.hpp"

namespace ridge::ingest {
namespace {

std::string profile_path(const std::string& prefix) {
  for (const auto& e : std::filesystem::directory_iterator(test::fixture("profiles")))
    if (e.path().filename().string().rfind(prefix, 0) == 0) return e.path().string();
  ADD_FAILURE() << "no fixture starting with " << prefix;
  return "";
}

Profile load(std::initializer_list<const char*> prefixes, JoinMode mode = JoinMode::Auto) {
  std::vector<Profile> parts;
  for (const char* p : prefixes) parts.push_back(read_file(profile_path(p)));
  Profile out = combine(std::move(parts), mode);
  derive(out);
  return out;
}

Count counter(const Totals& t, const std::string& name) {
  auto it = t.counters.find(name);
  EXPECT_NE(it, t.counters.end()) << name;
  if (it == t.counters.end() || !it->second.exact) return -1;
  return *it->second.exact;
}

TEST(IngestFixtures, EveryFileParsesWithoutCrashing) {
  RIDGE_REQUIRE_SHARED();
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(test::fixture("profiles"))) {
    if (e.path().extension() == ".md") continue;
    ++files;
    Profile p = read_file(e.path().string());
    derive(p);
    const std::string name = e.path().filename().string();
    const bool empty_by_design = name.rfind("25_", 0) == 0 || name.rfind("26_", 0) == 0 || name.rfind("27_", 0) == 0;
    if (empty_by_design) {
      EXPECT_TRUE(p.kernels.empty()) << name;
      EXPECT_FALSE(p.warnings.empty()) << name << ": an empty capture must say why";
    } else {
      EXPECT_FALSE(p.kernels.empty()) << name;
      EXPECT_FALSE(p.formats.empty()) << name;
    }
    // only 07 (two ncu sessions) and 28 (two ncu commands pasted into a README) hold several runs
    const bool several = name.rfind("07_", 0) == 0 || name.rfind("28_", 0) == 0;
    EXPECT_EQ(p.runs.size(), several ? 2u : 1u) << name;
  }
  EXPECT_GE(files, 25);
}

TEST(IngestFixtures, Ncu01MatchesStudentSums) {
  RIDGE_REQUIRE_SHARED();
  Profile p = load({"01_"});
  Totals t = totals(p);
  EXPECT_EQ(t.kernels, 1113);
  EXPECT_EQ(counter(t, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"), Count(196678002557));
  EXPECT_EQ(counter(t, "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"), Count(17877921231));
  EXPECT_EQ(counter(t, "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum"), Count(5060692048));
  EXPECT_EQ(counter(t, "dram__sectors_read.sum"), Count(371567392));
  EXPECT_EQ(counter(t, "dram__sectors_write.sum"), Count(204176272));
  EXPECT_EQ(*t.sum.flops(), Count(416294618393));
  EXPECT_EQ(*t.sum.dram_bytes, Count(18423797248));
  // the per-second metrics (mixed byte/s .. Tbyte/s) are rates: never summed
  EXPECT_EQ(t.counters.count("dram__bytes_read.sum.per_second"), 0u);
  EXPECT_FALSE(t.sum.time_s.has_value());
}

TEST(IngestFixtures, Nsys03Durations) {
  RIDGE_REQUIRE_SHARED();
  Totals t = totals(load({"03_"}));
  EXPECT_EQ(t.kernels, 3500);
  EXPECT_EQ(t.memops, 798);
  EXPECT_EQ(counter(t, "Duration"), Count(223135690));  // nanoseconds, all rows
  EXPECT_NEAR(*t.sum.time_s, 0.223135690, 1e-12);
  EXPECT_NEAR(*t.kernel_time_s, 0.202602843, 1e-12);
}

TEST(IngestFixtures, Ncu05OneTrainingStep) {
  RIDGE_REQUIRE_SHARED();
  Totals t = totals(load({"05_"}));
  EXPECT_EQ(t.kernels, 144);
  EXPECT_EQ(*t.sum.flops_fp32, Count(780129947));
}

TEST(IngestFixtures, NvprofSummary06And29) {
  RIDGE_REQUIRE_SHARED();
  // awk over the Time column with per-cell units -> 428,010,928 ns; CSV 29: sum of Time (ms) = 390.393560 ms
  Totals t06 = totals(load({"06_"}));
  EXPECT_NEAR(*t06.sum.time_s, 0.428010928, 1e-12);
  EXPECT_EQ(t06.kernels, 14003);
  EXPECT_EQ(t06.memops, 2006);
  Totals t29 = totals(load({"29_"}));
  EXPECT_NEAR(*t29.sum.time_s, 0.390393560, 1e-12);
}

TEST(IngestFixtures, Ncu07TwoRunsSectionsAndThousands) {
  RIDGE_REQUIRE_SHARED();
  Profile p = load({"07_"});
  ASSERT_EQ(p.kernels.size(), 2u);  // default sections, then --metrics
  ASSERT_EQ(p.runs.size(), 2u);     // two ncu sessions concatenated by the authors
  EXPECT_EQ(p.kernels[1].run, 1u);
  EXPECT_NEAR(*p.kernels[0].derived.time_s, 0.01326, 1e-12);  // Duration 13.26 msecond
  EXPECT_EQ(p.kernels[0].counters.at("Elapsed Cycles").exact, Count(10135802));
  Totals t = totals(p);
  EXPECT_EQ(*t.sum.flops_fp32, Count(10245120000));  // 2 x 5,122,560,000 FFMA
  EXPECT_EQ(*t.sum.dram_bytes, Count(332330000));    // 20.96 Mbyte + 311.37 Mbyte
}

// Two captures written one after another into one file (ncu --log-file with >>, or two logs pasted together) are
// two runs with equal totals, not one run with twice the launches. The file is doubled in memory.
TEST(IngestFixtures, ConcatenatedCapturesAreTwoRuns) {
  RIDGE_REQUIRE_SHARED();
  for (const char* prefix : {"01_", "05_", "09_", "12_", "22_"}) {
    const std::string path = profile_path(prefix);
    const std::string text = test::slurp(path);
    ASSERT_FALSE(text.empty()) << path;
    Profile one = parse_text(text, path);
    derive(one);
    ASSERT_EQ(one.runs.size(), 1u) << prefix;
    Profile two = parse_text(text + (text.back() == '\n' ? "" : "\n") + text, path);
    derive(two);
    ASSERT_EQ(two.runs.size(), 2u) << prefix;
    EXPECT_FALSE(two.runs[1].boundary.empty());
    EXPECT_GT(two.runs[1].line, 1);
    const Totals t = totals(one);
    for (size_t r = 0; r < 2; ++r) {
      const Totals tr = totals(two, run_records(two, r));
      EXPECT_EQ(tr.kernels, t.kernels) << prefix << " run " << r + 1;
      EXPECT_EQ(tr.sum.flops(), t.sum.flops()) << prefix << " run " << r + 1;
      EXPECT_EQ(tr.sum.dram_bytes, t.sum.dram_bytes) << prefix << " run " << r + 1;
      EXPECT_EQ(tr.counters.size(), t.counters.size()) << prefix << " run " << r + 1;
      for (const auto& [name, v] : t.counters) EXPECT_EQ(tr.counters.at(name).exact, v.exact) << prefix << " " << name;
    }
    Profile second = select_run(two, 2);
    EXPECT_EQ(second.kernels.size(), one.kernels.size());
    EXPECT_EQ(second.kernels.front().launch_id, one.kernels.front().launch_id);  // IDs restart with the run
    EXPECT_THROW(select_run(two, 3), UsageError);
  }
}

TEST(IngestFixtures, Ncu08ScaledUnits) {
  RIDGE_REQUIRE_SHARED();
  // awk '$1=="dram__bytes_read.sum"{f=($2=="Kbyte")?1e3:($2=="Mbyte")?1e6:1; s+=$3*f}' -> 546,792,130
  Totals t = totals(load({"08_"}));
  EXPECT_EQ(t.kernels, 10);
  EXPECT_EQ(counter(t, "dram__bytes_read.sum"), Count(546792130));
}

TEST(IngestFixtures, NcuCsv09And10Leleucas) {
  RIDGE_REQUIRE_SHARED();
  Totals t9 = totals(load({"09_"}));
  EXPECT_EQ(counter(t9, "sm__sass_thread_inst_executed_op_ffma_pred_on.sum"), Count(32885760));
  EXPECT_EQ(counter(t9, "sm__sass_thread_inst_executed_op_fadd_pred_on.sum"), Count(1051232));
  EXPECT_EQ(counter(t9, "sm__sass_thread_inst_executed_op_fmul_pred_on.sum"), Count(1635104));
  EXPECT_EQ(counter(t9, "sm__sass_thread_inst_executed_op_hfma_pred_on.sum"), Count(491720));
  EXPECT_EQ(counter(t9, "sm__inst_executed_pipe_tensor.sum"), Count(15427));
  EXPECT_EQ(*t9.sum.dram_bytes, Count(2406656));
  EXPECT_EQ(t9.kernels, 26);
  Profile p10 = load({"10_"});
  Totals t10 = totals(p10);
  EXPECT_EQ(counter(t10, "sm__sass_thread_inst_executed_op_ffma_pred_on.sum"), Count(6958080));
  EXPECT_EQ(counter(t10, "sm__sass_thread_inst_executed_op_hadd_pred_on.sum"), Count(838656));
  EXPECT_EQ(counter(t10, "sm__sass_thread_inst_executed_op_hfma_pred_on.sum"), Count(196611));
  EXPECT_EQ(counter(t10, "sm__sass_thread_inst_executed_op_dmul_pred_on.sum"), Count(6144));
  EXPECT_EQ(counter(t10, "sm__inst_executed_pipe_tensor.sum"), Count(86017));
  EXPECT_EQ(*t10.sum.dram_bytes, Count(5809408));
  EXPECT_EQ(p10.architecture, "ampere");
  EXPECT_EQ(*t10.sum.flops_tensor, Count(86017) * p10.tensor_flops_per_inst);
  for (const auto& w : p10.warnings) EXPECT_EQ(w.message.find("truncated"), std::string::npos) << w.text();
}

TEST(IngestFixtures, NerscJoin12To16) {
  RIDGE_REQUIRE_SHARED();
  Profile p = load({"12_", "13_", "14_", "15_", "16_"});
  ASSERT_EQ(p.kernels.size(), 797u);  // joined launch by launch, not 5 x 797
  Totals t = totals(p);
  EXPECT_EQ(counter(t, "sm__sass_thread_inst_executed_op_ffma_pred_on.sum"), Count(112136903184));
  EXPECT_EQ(*t.sum.dram_bytes, Count(21827093984));
  EXPECT_EQ(counter(t, "sm__inst_executed_pipe_tensor.sum"), Count(2204450816));
  EXPECT_EQ(p.architecture, "volta");
  EXPECT_EQ(*t.sum.flops_tensor, Count(2204450816) * 512);  // NERSC's V100 factor
  EXPECT_NEAR(*t.sum.time_s, 0.10412, 0.000005);
  EXPECT_EQ(p.kernels[0].counters.size(), 5u);
  // refusing the join keeps every file's records
  EXPECT_EQ(load({"12_", "13_"}, JoinMode::Concat).kernels.size(), 2 * 797u);
}

TEST(IngestFixtures, Tensor17AndNvprof18) {
  RIDGE_REQUIRE_SHARED();
  Totals t17 = totals(load({"17_"}));
  EXPECT_EQ(t17.kernels, 559);
  EXPECT_EQ(counter(t17, "sm__inst_executed_pipe_tensor.sum"), Count(18259099648));
  Totals t18 = totals(load({"18_"}));
  EXPECT_EQ(counter(t18, "flop_count_sp"), Count(7704715942));  // sum of Invocations x Avg
  EXPECT_EQ(counter(t18, "dram_read_transactions"), Count(7613204));
  EXPECT_EQ(*t18.sum.flops_fp32, Count(7704715942));
}

TEST(IngestFixtures, NsysText20And21) {
  RIDGE_REQUIRE_SHARED();
  // awk '/^ -----/{f=1;next} f && /^ +[0-9]+ +[0-9]+/{s+=$2}' -> 8 rows, 251,358 ns
  Totals t20 = totals(load({"20_"}));
  EXPECT_EQ(t20.kernels + t20.memops, 8);
  EXPECT_EQ(counter(t20, "Duration"), Count(251358));
  // cuda_gpu_kern_sum: 277,215 ns over 69 instances; cuda_gpu_mem_time_sum: 155,200 ns over 106 (awk, commas removed)
  Totals t21 = totals(load({"21_"}));
  EXPECT_EQ(t21.kernels, 69);
  EXPECT_EQ(t21.memops, 106);
  EXPECT_NEAR(*t21.kernel_time_s, 277215e-9, 1e-15);
  EXPECT_NEAR(*t21.sum.time_s, 432415e-9, 1e-15);
}

TEST(IngestFixtures, NvtxInCsv22AndText23) {
  RIDGE_REQUIRE_SHARED();
  Profile p22 = load({"22_"});
  Totals t22 = totals(p22);
  EXPECT_EQ(t22.kernels, 14);
  EXPECT_EQ(counter(t22, "gpu__time_duration.sum"), Count(79040));
  Profile p23 = load({"23_"});
  Totals t23 = totals(p23);
  EXPECT_EQ(counter(t23, "gpu__time_duration.sum"), Count(79420));  // 79.42 us, rounded by the text output
  for (const Profile* p : {&p22, &p23}) {
    auto g = group(*p, GroupBy::Nvtx);
    ASSERT_EQ(g.size(), 1u);
    EXPECT_EQ(g[0].key, "convLayer");
  }
}

TEST(IngestFixtures, SpanishLocale28) {
  RIDGE_REQUIRE_SHARED();
  Profile p = load({"28_"});
  ASSERT_EQ(p.formats.size(), 2u);  // ncu text and nsys stats in one README excerpt
  double ncu_none = -1, per_kernel = -1, nsys = -1;
  Count um = 0;
  for (const auto& k : p.kernels) {
    if (k.counters.count("Elapsed Cycles")) {
      ncu_none = *k.derived.time_s;
      EXPECT_EQ(k.counters.at("Elapsed Cycles").exact, Count(13490336));
    }
    if (k.counters.count("gpu__time_duration.sum")) per_kernel = *k.derived.time_s;
    if (k.counters.count("Total Time") && !k.memop) nsys = *k.derived.time_s;
    if (k.memop) um += k.invocations;
  }
  EXPECT_NEAR(ncu_none, 9.97e-3, 1e-12);        // "9,97" msecond
  EXPECT_NEAR(per_kernel, 9.989888e-3, 1e-12);  // %.6f regardless of locale
  EXPECT_NEAR(nsys, 39161797e-9, 1e-15);        // "39.161.797" ns
  EXPECT_EQ(um, 1976 + 1536);                   // "1.976" and "1.536" operations
}

TEST(IngestFixtures, NvprofTrace30) {
  RIDGE_REQUIRE_SHARED();
  // awk -F, 'NR>5 && $2!=""{s+=$2; n++}' -> 1,946 rows with a duration, 55.776665 ms
  Profile p = load({"30_"});
  EXPECT_EQ(p.kernels.size(), 1946u);
  EXPECT_NEAR(*totals(p).sum.time_s, 55.776665e-3, 1e-12);
}

TEST(IngestFixtures, EmptyCapturesSayWhy) {
  RIDGE_REQUIRE_SHARED();
  for (const char* prefix : {"25_", "26_", "27_"}) {
    Profile p = load({prefix});
    EXPECT_TRUE(p.kernels.empty()) << prefix;
    ASSERT_FALSE(p.warnings.empty()) << prefix;
  }
  Profile p27 = load({"27_"});
  bool killed = false;
  for (const auto& w : p27.warnings) killed |= w.message.find("signal 9") != std::string::npos;
  EXPECT_TRUE(killed);
}

}  // namespace
}  // namespace ridge::ingest
