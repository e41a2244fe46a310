// `ridge ingest --device`: profiled time next to the predicted time per kernel family and per matched layer, the
// kernel and hierarchical roofline charts (parsed, not compared with a golden file), refused mismatches, and the
// sanity flags of the roofline and machine documents. Plain values are injected; fixtures are read in place.
#include <gtest/gtest.h>

#include "report/xml_check.hpp"
#include "ridge/api.hpp"
#include "ridge/error.hpp"
#include "support/test_support.hpp"

namespace ridge::report {
namespace {

const Table* find_table(const Document& d, const std::string& key) {
  for (const auto& b : d.blocks)
    if (auto* t = std::get_if<Table>(&b); t && t->key == key) return t;
  return nullptr;
}
const Cell& cell(const Table& t, size_t row, const std::string& column) {
  return t.rows.at(row).at(static_cast<size_t>(t.column(column)));
}
std::optional<size_t> row_of(const Table& t, const std::string& first) {
  for (size_t r = 0; r < t.rows.size(); ++r)
    if (auto* s = std::get_if<std::string>(&t.rows[r][0].value); s && *s == first) return r;
  return std::nullopt;
}
bool any_contains(const std::vector<std::string>& lines, const std::string& part) {
  for (const auto& l : lines)
    if (l.find(part) != std::string::npos) return true;
  return false;
}

ingest::KernelRecord kernel(const std::string& name, double time_s, std::optional<Count> flops32,
                            std::optional<Count> dram, const std::string& nvtx = "") {
  ingest::KernelRecord k;
  k.name = name;
  k.nvtx = nvtx;
  k.derived.time_s = time_s;
  k.derived.flops_fp32 = flops32;
  k.derived.dram_bytes = dram;
  return k;
}

Device test_gpu() {
  Device d;
  d.id = "test-gpu";
  d.kind = "gpu";
  d.peak_flops = {{Precision::FP32, 1e13}, {Precision::FP16, 1e14}};
  d.bandwidth_bytes_per_s = {{"dram", 1e12}};
  return d;
}

TEST(IngestDevice, FamiliesAndMatchedLayersSitNextToThePrediction) {
  ingest::Profile p;
  p.kernels = {kernel("implicit_convolve_sgemm", 3e-3, Count(600), Count(60)),
               kernel("volta_sgemm_128x64_nn", 1e-3, Count(100), Count(10), "fc"),
               kernel("vectorized_elementwise_kernel", 0.5e-3, std::nullopt, Count(40))};
  std::vector<LayerWork> work(3);
  work[0] = {"conv1", "Conv", Count(300), Count(20)};
  work[1] = {"fc", "Linear", Count(50), Count(5)};
  work[2] = {"relu", "Unary", Count(0), Count(16)};
  Prediction pred;
  pred.layers.resize(3);
  pred.layers[0].time_s = 1e-3, pred.layers[1].time_s = 0.5e-3, pred.layers[2].time_s = 0.25e-3;
  pred.layers[0].forward.bytes = 20, pred.layers[0].backward.bytes = 40;  // what the prediction charged conv1
  const Document d = profile_vs_prediction(p, work, pred, 2, false);
  const Table* f = find_table(d, "families");
  ASSERT_NE(f, nullptr);
  const auto conv = row_of(*f, "conv");
  ASSERT_TRUE(conv);
  EXPECT_DOUBLE_EQ(std::get<double>(cell(*f, *conv, "profiled_time_s").value), 3e-3);
  EXPECT_DOUBLE_EQ(std::get<double>(cell(*f, *conv, "predicted_time_s").value), 2e-3);  // 2 steps
  EXPECT_DOUBLE_EQ(std::get<double>(cell(*f, *conv, "time_ratio").value), 1.5);
  EXPECT_EQ(std::get<Count>(cell(*f, *conv, "flops_estimated").value), Count(600));
  EXPECT_DOUBLE_EQ(std::get<double>(cell(*f, *conv, "flops_ratio").value), 1.0);
  // Estimated bytes are the bytes the prediction charged, both passes (the backward's 40 are the training step's).
  EXPECT_EQ(std::get<Count>(cell(*f, *conv, "bytes_estimated").value), Count(120));
  EXPECT_DOUBLE_EQ(std::get<double>(cell(*f, *conv, "bytes_ratio").value), 0.5);
  const auto gemm = row_of(*f, "gemm");
  ASSERT_TRUE(gemm);
  EXPECT_DOUBLE_EQ(std::get<double>(cell(*f, *gemm, "time_ratio").value), 1.0);
  const auto total = row_of(*f, "total");
  ASSERT_TRUE(total);
  EXPECT_NEAR(std::get<double>(cell(*f, *total, "predicted_time_s").value), 3.5e-3, 1e-15);
  const Table* l = find_table(d, "layers_profiled");
  ASSERT_NE(l, nullptr);  // the gemm kernel ran in NVTX range "fc"
  ASSERT_EQ(l->rows.size(), 1u);
  EXPECT_EQ(std::get<std::string>(l->rows[0][0].value), "fc");
}

TEST(IngestDevice, KernelRooflineAndHierarchicalChartsParse) {
  ingest::Profile p;
  auto with_levels = [](ingest::KernelRecord k, Count l1, Count l2) {
    k.derived.l1_bytes = l1;
    k.derived.l2_bytes = l2;
    return k;
  };
  p.kernels = {with_levels(kernel("gemm_a", 1e-3, Count(5'000'000'000), Count(100'000'000)), Count(900'000'000), Count(300'000'000)),
               with_levels(kernel("elementwise_b", 1e-3, Count(1'000'000), Count(50'000'000)), Count(60'000'000), Count(55'000'000)),
               // 2 TFLOP/s at 0.1 FLOP/B on a 1 TB/s device: twenty times its roof
               kernel("impossible_c", 1e-3, Count(2'000'000'000), Count(20'000'000'000))};
  std::vector<std::string> flags;
  const auto charts = kernel_roofline_charts(p, test_gpu(), Precision::FP32, &flags);
  ASSERT_EQ(charts.size(), 2u);  // kernel roofline + hierarchical (L1/L2 bytes present)
  EXPECT_TRUE(any_contains(flags, "above-roof: 1 of the kernels"));
  EXPECT_TRUE(any_contains(flags, "impossible_c"));

  const test::XmlInfo k = test::check_xml(chart::render_svg(charts[0]));
  ASSERT_TRUE(k.ok) << k.error;
  EXPECT_EQ(k.classes.at("pt"), 3);
  EXPECT_EQ(k.classes.at("ceiling"), 3);  // fp32, fp16 tensor, DRAM
  EXPECT_TRUE(any_contains(k.text_by_class.at("axis-title"), "Arithmetic intensity"));
  EXPECT_TRUE(any_contains(k.text_by_class.at("axis-title"), "FLOP/s"));
  const std::string svg = chart::render_svg(charts[0]);
  EXPECT_NE(svg.find("FP16 tensor"), std::string::npos);
  EXPECT_NE(svg.find("above-roof"), std::string::npos);

  const test::XmlInfo h = test::check_xml(chart::render_svg(charts[1]));
  ASSERT_TRUE(h.ok) << h.error;
  EXPECT_EQ(h.classes.at("pt"), 2 * 3 + 1);  // L1, L2, DRAM for two kernels; DRAM only for the third
  EXPECT_TRUE(any_contains(h.text_by_class.at("note"), "L1 and L2 ceilings"));
}

// L1 and L2 ceilings: the shipped GPU files carry them with a source per figure where one was published (V100
// SXM2: NERSC's ERT; A100: Citadel's GTC'21 microbenchmarks; H100 PCIe: RRZE-HPC gpu-benches; T4: Jia et al.),
// and stay absent where none was found (H100 SXM).
TEST(IngestDevice, ShippedGpuFilesCarryCacheCeilingsWithSources) {
  const std::vector<Device> all = load_devices({});
  for (const char* id : {"v100-sxm2", "a100-sxm4-40gb", "a100-sxm4-80gb", "a100-pcie-40gb", "a100-pcie-80gb", "h100-pcie", "t4"}) {
    const Device d = find_device(all, id);
    for (const char* level : {"l1", "l2"}) {
      ASSERT_TRUE(d.bandwidth_bytes_per_s.count(level)) << id << " " << level;
      EXPECT_GT(d.bandwidth(level), d.dram_bandwidth()) << id << " " << level;
      const auto src = d.sources.find(std::string("bandwidth_bytes_per_s.") + level);
      ASSERT_NE(src, d.sources.end()) << id << " " << level << ": a figure of its own needs a source of its own";
      EXPECT_FALSE(src->second.empty());
    }
    EXPECT_GT(d.bandwidth("l1"), d.bandwidth("l2")) << id;
  }
  EXPECT_NE(find_device(all, "a100").source_of("bandwidth_bytes_per_s.l2").find("S33322"), std::string::npos);
  EXPECT_NE(find_device(all, "v100-sxm2").source_of("bandwidth_bytes_per_s.l1").find("ERT"), std::string::npos);
  EXPECT_NE(find_device(all, "h100-pcie").source_of("bandwidth_bytes_per_s.l2").find("gpu-benches"), std::string::npos);
  EXPECT_NE(find_device(all, "t4").source_of("bandwidth_bytes_per_s.l1").find("1903.07486"), std::string::npos);
  for (const char* id : {"h100-sxm"}) {
    const Device d = find_device(all, id);
    EXPECT_FALSE(d.bandwidth_bytes_per_s.count("l2")) << id;
    EXPECT_FALSE(d.bandwidth_bytes_per_s.count("l1")) << id;
    EXPECT_EQ(d.level_bandwidth("l1"), std::nullopt) << id;  // absent, not zero
    EXPECT_EQ(d.level_bandwidth("DRAM"), d.dram_bandwidth()) << id;  // any case
  }
}

// The hierarchical chart draws the L2 and L1 ceilings (labelled) when the device has them, and says per device
// which it lacks; the DRAM-intensity chart keeps only the DRAM ceiling. JSON carries them in bytes/s.
TEST(IngestDevice, HierarchicalChartHasTheCacheCeilingsTheDeviceHas) {
  ingest::Profile p;
  ingest::KernelRecord k = kernel("gemm_a", 1e-3, Count(5'000'000'000), Count(100'000'000));
  k.derived.l1_bytes = Count(900'000'000);
  k.derived.l2_bytes = Count(300'000'000);
  p.kernels = {k};
  Device d = test_gpu();
  d.bandwidth_bytes_per_s["l2"] = 4e12;
  d.bandwidth_bytes_per_s["l1"] = 1.6e13;
  d.sources["bandwidth_bytes_per_s.l2"] = "injected L2 source";
  auto charts = kernel_roofline_charts(p, d, Precision::FP32);
  ASSERT_EQ(charts.size(), 2u);
  EXPECT_EQ(test::check_xml(chart::render_svg(charts[0])).classes.at("ceiling"), 3);  // fp32, fp16 tensor, DRAM
  const std::string svg = chart::render_svg(charts[1]);
  const test::XmlInfo h = test::check_xml(svg);
  ASSERT_TRUE(h.ok) << h.error;
  EXPECT_EQ(h.classes.at("ceiling"), 5);  // fp32, fp16 tensor, DRAM, L2, L1
  std::vector<std::string> labels;
  for (const auto& c : charts[1].ceilings) labels.push_back(c.label);
  for (const char* label : {"DRAM ", "L2 ", "L1 "}) EXPECT_TRUE(any_contains(labels, label)) << label;
  EXPECT_NE(svg.find(">L2 "), std::string::npos);  // labelled on the line
  EXPECT_TRUE(any_contains(h.text_by_class.at("note"), "L1 and L2 ceilings from test-gpu's device file"));

  d.bandwidth_bytes_per_s.erase("l1");
  charts = kernel_roofline_charts(p, d, Precision::FP32);
  const test::XmlInfo only_l2 = test::check_xml(chart::render_svg(charts[1]));
  EXPECT_EQ(only_l2.classes.at("ceiling"), 4);
  EXPECT_TRUE(any_contains(only_l2.text_by_class.at("note"), "L1 ceiling: not in test-gpu's device file"));

  const Fields f = device_ceilings(d);
  EXPECT_EQ(f.key, "ceilings");
  Document doc;
  doc.blocks.push_back(f);
  const auto json = to_json(doc);
  EXPECT_DOUBLE_EQ(json["ceilings"]["l2_bandwidth_bytes_per_s"].get<double>(), 4e12);
  EXPECT_DOUBLE_EQ(json["ceilings"]["dram_bandwidth_bytes_per_s"].get<double>(), 1e12);
  EXPECT_TRUE(json["ceilings"]["l1_bandwidth_bytes_per_s"].is_null());
  EXPECT_EQ(json["ceilings"]["l2_bandwidth_source"], "injected L2 source");
  EXPECT_EQ(json["ceilings"]["l1_bandwidth_source"], "not in the device file");
}

TEST(IngestDevice, FixtureProfilesOnTheA100) {
  RIDGE_REQUIRE_SHARED();
  // nsys trace: kernel times, no counters; the prediction is resnet50 at batch 10 on the A100
  IngestRequest req;
  req.files = {{test::fixture("profiles/03_nsys_gputrace_csv_nyu_A100_resnet50_bs10_train.csv"), ""}};
  req.model = "resnet50";
  req.batch = 10;
  req.train = true;
  req.device = "a100";
  const ingest::Profile p = ingest_profile(req);
  const Document d = ingest_report(p, req, false);
  const Table* f = find_table(d, "families");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title.find("a100"), std::string::npos);
  for (const char* family : {"conv", "gemm", "normalization", "total"}) {
    ASSERT_TRUE(row_of(*f, family)) << family;
    EXPECT_GT(std::get<double>(cell(*f, *row_of(*f, family), "time_ratio").value), 0) << family;
  }
  ASSERT_TRUE(row_of(*f, "memcpy"));  // profiled, nothing predicted: the cell stays empty
  EXPECT_TRUE(std::holds_alternative<std::monostate>(cell(*f, *row_of(*f, "memcpy"), "predicted_time_s").value));
  // ncu counters without time: FLOPs counted vs estimated, no point can be drawn (and a note says why)
  req.files = {{test::fixture("profiles/01_ncu_text_nyu_A100_resnet18_bs10_train_smsp_flops_dram.log"), ""}};
  req.model = "resnet18";
  const ingest::Profile counters = ingest_profile(req);
  const Document counted = ingest_report(counters, req, false);
  const Table* g = find_table(counted, "families");
  ASSERT_NE(g, nullptr);
  EXPECT_GT(std::get<double>(cell(*g, *row_of(*g, "conv"), "flops_ratio").value), 1);
  const auto charts = ingest_charts(counters, req);
  ASSERT_EQ(charts.size(), 1u);
  const test::XmlInfo x = test::check_xml(chart::render_svg(charts[0]));
  ASSERT_TRUE(x.ok) << x.error;
  EXPECT_EQ(x.classes.count("pt"), 0u);
  EXPECT_TRUE(any_contains(x.text_by_class.at("note"), "without FLOPs, DRAM bytes or time are not drawn"));
}

TEST(IngestDevice, HierarchicalRooflineFromAFixtureWithCacheBytes) {
  RIDGE_REQUIRE_SHARED();
  IngestRequest req;
  req.files = {{test::fixture("profiles/09_ncu_csv_details_leleucas_A100_bert_mha_fp16_with_rules.csv"), ""}};
  req.device = "a100";
  req.precision = "fp16";
  const auto charts = ingest_charts(ingest_profile(req), req);
  ASSERT_EQ(charts.size(), 2u);
  const test::XmlInfo h = test::check_xml(chart::render_svg(charts[1]));
  ASSERT_TRUE(h.ok) << h.error;
  EXPECT_GT(h.classes.at("pt"), 0);
}

TEST(IngestDevice, AProfileOfAnotherModelOrGpuIsRefusedUnlessForced) {
  RIDGE_REQUIRE_SHARED();
  const std::string f = test::fixture("profiles/01_ncu_text_nyu_A100_resnet18_bs10_train_smsp_flops_dram.log");
  IngestRequest req;
  req.files = {{f, ""}};
  req.model = "resnet50";
  req.batch = 10;
  try {
    ingest_profile(req);
    FAIL() << "a resnet18 profile was accepted for resnet50";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("resnet18"), std::string::npos) << m;
    EXPECT_NE(m.find("resnet50"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  req.model = "resnet18";
  req.batch = 64;
  EXPECT_THROW(ingest_profile(req), Error);  // batch 10 in the file name
  req.batch = 10;
  req.device = "v100";
  EXPECT_THROW(ingest_profile(req), Error);
  req.force = true;
  const ingest::Profile p = ingest_profile(req);
  EXPECT_TRUE(any_contains(p.notes, "forced: "));
  EXPECT_TRUE(any_contains(ingest_report(p, req, false).notes, "forced: "));
}

TEST(SanityFlags, MeasuredPointAboveItsRoofIsFlaggedInTheRooflineTable) {
  RooflineRequest req;
  req.models = {"resnet18"};
  req.devices = {"a100"};
  MeasuredRun m;
  m.file = "run.json";
  m.model = "resnet18";
  // 1e15 FLOP in 1 ms on an A100 (19.5 TFLOP/s fp32): far above the roof
  m.layers = {MeasuredRow{"all", "", 1e-3, Count(1'000'000'000'000'000), Count(1'000'000'000), std::nullopt, "", {}}};
  req.measured = {m};
  req.charts = false;
  const RooflineResult r = roofline_report(req);
  const Table* models = find_table(r.doc, "models");
  ASSERT_NE(models, nullptr);
  EXPECT_EQ(std::get<std::string>(cell(*models, 0, "flags").value), "above-roof");
}

TEST(SanityFlags, MachineProfileFlagsAllThreadsBelowOneThreadAndBusyRuns) {
  measure::MachineProfile p;
  p.threads = 2;
  p.peaks = {{DType::F32, measure::Isa::Scalar, 1, 10.0, 0, 0.05, 5},
             {DType::F32, measure::Isa::Scalar, 2, 8.0, 0, 0.9, 5}};
  const Document d = machine_report(p, measure::ProfileSource{}, false);
  EXPECT_TRUE(any_contains(d.notes, "2-thread-peak-below-1-thread: fp32 peak on 2 threads 8.0 GFLOP/s is below the 1-thread 10.0"));
  EXPECT_TRUE(any_contains(d.notes, "busy-machine"));
  const Table* peaks = find_table(d, "peaks");
  ASSERT_NE(peaks, nullptr);
  EXPECT_EQ(std::get<std::string>(cell(*peaks, 1, "flags").value), "busy-machine");
  EXPECT_EQ(std::get<std::string>(cell(*peaks, 0, "flags").value), "");
}

}  // namespace
}  // namespace ridge::report
