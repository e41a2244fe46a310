// torch.profiler Chrome traces: the trace written by make_chrome_trace.py (kineto layout), the legacy top-level
// list, and hand-written bad input that must become named skips or one warning, never a crash.
#include <gtest/gtest.h>

#include <algorithm>

#include "ridge/ingest.hpp"
#include "support/test_support.hpp"

namespace ridge::ingest {
namespace {

Profile parsed_trace(const std::string& text) {
  Profile p = parse_text(text, "trace.json");
  derive(p);
  return p;
}

bool warned(const Profile& p, const std::string& fragment) {
  return std::any_of(p.warnings.begin(), p.warnings.end(),
                     [&](const Warning& w) { return w.message.find(fragment) != std::string::npos; });
}

const Group* find_group(const std::vector<Group>& groups, const std::string& key) {
  for (const auto& g : groups)
    if (g.key == key) return &g;
  return nullptr;
}

TEST(IngestTorchTrace, GeneratedTraceExactTotals) {
  Profile p = read_file(std::string(RIDGE_SOURCE_DIR) + "/tests/ingest/data/torch_trace_small.json");
  derive(p);
  ASSERT_EQ(p.formats, std::vector<Format>{Format::TorchTrace});
  ASSERT_EQ(p.runs.size(), 1u);
  Totals t = totals(p);
  // figures printed by make_chrome_trace.py
  EXPECT_EQ(t.kernels, 7);
  EXPECT_EQ(t.memops, 2);
  EXPECT_EQ(t.counters.at("Duration").exact, Count(167769));  // ns: "dur" in us with 3 decimals, read exactly
  EXPECT_NEAR(*t.kernel_time_s, 164245e-9, 1e-15);
  EXPECT_NEAR(*t.sum.time_s, 167769e-9, 1e-15);
  EXPECT_EQ(*t.sum.flops_fp32, Count(1857880064));
  EXPECT_EQ(*t.sum.flops_fp16, Count(524288));
  EXPECT_EQ(t.counters.at("Bytes transferred").exact, Count(602112 + 4096));
  EXPECT_EQ(p.architecture, "ampere");  // from deviceProperties' name
  EXPECT_EQ(p.kernels[0].device, "NVIDIA A100-SXM4-40GB");
  EXPECT_TRUE(warned(p, "launched no GPU kernel"));  // aten::mul on the CPU: its 1000 FLOPs are named, not added
  for (const auto& k : p.kernels) EXPECT_EQ(k.nvtx, "ProfilerStep#1") << k.name;

  // per operator: GPU time and FLOPs
  auto ops = group(p, GroupBy::Op);
  const Group* conv = find_group(ops, "aten::conv2d");
  ASSERT_NE(conv, nullptr);
  ASSERT_EQ(conv->members.size(), 2u);  // winograd data transform + implicit GEMM
  Totals tc = totals(p, conv->members);
  EXPECT_NEAR(*tc.sum.time_s, (12345 + 85123) * 1e-9, 1e-15);
  EXPECT_EQ(*tc.sum.flops_fp32, Count(2) * 8 * 64 * 56 * 56 * 64 * 9);
  EXPECT_EQ(tc.missing_flops, 1);  // the FLOPs sit on the longest kernel only
  const Group* linear = find_group(ops, "aten::linear");  // addmm's kernels belong to the outer aten::linear
  ASSERT_NE(linear, nullptr);
  EXPECT_EQ(*totals(p, linear->members).sum.flops_fp32, Count(2) * 8 * 1000 * 512);
  const Group* relu = find_group(ops, "aten::relu_");  // tied through the runtime call's correlation id
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->members.size(), 1u);
  EXPECT_NE(find_group(ops, "aten::copy_"), nullptr);
  EXPECT_EQ(find_group(ops, "(no operator)"), nullptr);

  // kernel families as for the other readers
  auto fam = group(p, GroupBy::Family);
  for (const char* f : {"conv-winograd", "conv-implicit-gemm", "normalization", "elementwise", "gemm", "memcpy",
                        "memset"})
    EXPECT_NE(find_group(fam, f), nullptr) << f;
  EXPECT_EQ(find_group(fam, "gemm")->members.size(), 3u);  // sgemm, splitK reduce, fp16 s16816gemm
}

TEST(IngestTorchTrace, LegacyTopLevelList) {
  // torch.autograd.profiler (use_kineto=False) export_chrome_trace: a list, "CPU functions"/"CUDA functions"
  Profile p = parsed_trace(
      "[{\"name\": \"add\", \"ph\": \"X\", \"ts\": 101.524, \"dur\": 134.49, \"tid\": 1, \"pid\": \"CPU functions\", "
      "\"args\": {}},\n"
      " {\"name\": \"add\", \"ph\": \"s\", \"ts\": 101.524, \"tid\": 1, \"pid\": \"CPU functions\", \"id\": 0, "
      "\"cat\": \"cpu_to_cuda\", \"args\": {}},\n"
      " {\"name\": \"add_kernel\", \"ph\": \"X\", \"ts\": 102.957, \"dur\": 134.176, \"tid\": 0, "
      "\"pid\": \"CUDA functions\", \"args\": {}}]\n");
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].counters.at("Duration").exact, Count(134176));
  EXPECT_TRUE(p.kernels[0].op.empty());  // the legacy format links by flow arrows only: not tied to an operator
}

TEST(IngestTorchTrace, BadInputIsNamedNeverFatal) {
  const std::string good = R"({"ph": "X", "cat": "kernel", "name": "good_kernel", "pid": 0, "tid": 7, "ts": 10.5, "dur": 2.000})";
  struct Case {
    std::string events;
    std::string warning;  // fragment of the expected warning
    size_t records;       // records that survive
  };
  const std::vector<Case> cases = {
      {"", "no GPU kernel", 0},
      {R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1})", "no duration", 0},
      {R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -3.5})", "negative duration", 0},
      {R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": "12"})", "not a number", 0},
      {R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": null})", "not a number", 0},
      {R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1e300})", "implausibly long", 0},
      {R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 123456789012345678901234567890123})",
       "implausibly long", 0},
      {R"({"ph": "X", "cat": "kernel", "name": 5, "ts": 1, "dur": 1})", "no name", 0},
      {R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 10, "args": {"External id": 1, "flops": 12.5}},)"
       R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": {"External id": 1}})",
       "not a whole number", 1},
      {R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 10, "args": {"External id": 1, "flops": 1e400}},)"
       R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": {"External id": 1}})",
       "number overflow", 0},  // nlohmann stops at a number beyond double: the events before it are kept
      {R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": "x", "dur": 10, "args": {"External id": 1}})",
       "without a numeric ts", 0},
      {R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": [1, 2, {"a": [[[]]]}]}, 7, [1], "x")", "",
       1},
      {R"({"ph": 1, "cat": "kernel", "name": "k", "ts": 1, "dur": 1})", "no GPU kernel", 0},
  };
  for (const auto& c : cases) {
    const std::string text = "{\"traceEvents\": [" + good + (c.events.empty() ? "" : ",") + c.events + "]}";
    Profile p;
    ASSERT_NO_THROW(p = parse_text(text, "bad.json")) << text;
    derive(p);
    totals(p);
    ASSERT_EQ(p.formats, std::vector<Format>{Format::TorchTrace}) << text;
    EXPECT_EQ(p.kernels.size(), c.records + 1) << text;  // the good kernel always survives
    if (!c.warning.empty() && c.warning != "no GPU kernel") { EXPECT_TRUE(warned(p, c.warning)) << text; }
    for (const auto& w : p.warnings) EXPECT_EQ(w.file, "bad.json");
  }
  const std::vector<std::pair<std::string, std::string>> whole = {
      {"{\"traceEvents\": []}", "no GPU kernel"},
      {"{\"traceEvents\": [" + good + ", {\"ph\": \"X\", \"cat\": \"ker", "not valid JSON"},  // truncated
      {"{\"traceEvents\": 5, \"ph\": 1, \"ts\": 2}", "no \"traceEvents\""},
      {"[1, 2, 3, {\"ph\": \"X\", \"ts\": 1}]", "no GPU kernel"},
      {"{\"ph\": \"X\", \"ts\": 1, \"traceEvents\": [" + good + "]} trailing", "not valid JSON"},
  };
  for (const auto& [text, fragment] : whole) {
    Profile p;
    ASSERT_NO_THROW(p = parse_text(text, "bad.json")) << text;
    derive(p);
    totals(p);
    EXPECT_TRUE(warned(p, fragment)) << text;
  }
  // the truncated trace keeps what was read before the cut
  Profile cut = parsed_trace("{\"traceEvents\": [" + good + ", {\"ph\": \"X\", \"cat\": \"ker");
  EXPECT_EQ(cut.kernels.size(), 1u);
  // a deeply nested argument does not exhaust the stack
  std::string deep = "{\"traceEvents\": [" + good + ", {\"ph\": \"X\", \"args\": {\"Input type\": ";
  deep += std::string(100000, '[') + std::string(100000, ']') + "}}]}";
  EXPECT_NO_THROW(parse_text(deep, "deep.json"));
  // forcing the format onto text that is not JSON is a warning too
  ReadOptions o;
  o.format = Format::TorchTrace;
  Profile text = parse_text("==PROF== Connected to process 1\n", "x.log", o);
  EXPECT_TRUE(warned(text, "not valid JSON"));
}

}  // namespace
}  // namespace ridge::ingest
