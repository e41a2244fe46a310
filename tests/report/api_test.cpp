// The per-command library calls of include/ridge/api.hpp, called with plain values (no CLI, no binary).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "ridge/api.hpp"
#include "ridge/error.hpp"
#include "support/test_support.hpp"

namespace ridge::report {
namespace {

const Table& table(const Document& d, const std::string& key) {
  for (const auto& b : d.blocks)
    if (auto* t = std::get_if<Table>(&b); t && t->key == key) return *t;
  throw std::runtime_error("no table " + key);
}

const Fields& fields(const Document& d, const std::string& key) {
  for (const auto& b : d.blocks)
    if (auto* f = std::get_if<Fields>(&b); f && f->key == key) return *f;
  throw std::runtime_error("no fields " + key);
}

const Cell& field(const Fields& f, const std::string& key) {
  for (const auto& [col, cell] : f.items)
    if (col.key == key) return cell;
  throw std::runtime_error("no field " + key);
}

Count count_of(const Cell& c) { return std::get<Count>(c.value); }
double real_of(const Cell& c) { return std::get<double>(c.value); }

Graph resnet18() { return load_model("resnet18", LoadOptions{}); }

TEST(SummaryReport, ListsEveryNodeWithExactTotals) {
  const Graph g = resnet18();
  const Document d = summary_report(g, SummaryOptions{});
  EXPECT_EQ(table(d, "layers").rows.size(), g.nodes.size());
  EXPECT_EQ(count_of(field(fields(d, "totals"), "params")), estimate(g).total.params);
  EXPECT_EQ(count_of(field(fields(d, "totals"), "flops")), estimate(g).total.flops);
  EXPECT_EQ(fields(d, "memory").title, "Memory (sgd optimizer)");
  EXPECT_EQ(d.extra["model"], "resnet18");
}

TEST(SummaryReport, GroupsByDepthAndCountsUnderAConvention) {
  const Graph g = resnet18();
  SummaryOptions o;
  o.depth = 1;
  o.convention = Convention::Fvcore;
  o.optimizer = Optimizer::Adam;
  o.precision = require_precision_mode("amp-bf16");
  const Document d = summary_report(g, o);
  const Table& layers = table(d, "layers");
  EXPECT_LT(layers.rows.size(), g.nodes.size());
  EXPECT_GE(layers.column("headline"), 0);
  EXPECT_EQ(count_of(field(fields(d, "totals"), "headline")), count_under(g, Convention::Fvcore).total);
  EXPECT_EQ(fields(d, "memory").title, "Memory (adam optimizer, amp-bf16)");
  // AMP keeps fp32 weights, gradients and master weights, and two fp32 Adam states per parameter.
  const Count params = estimate(g).total.params;
  EXPECT_EQ(count_of(field(fields(d, "memory"), "grad_bytes")), 4 * params);
}

TEST(SummaryReport, FittingDepthKeepsTheTableWithinTheRows) {
  const Graph g = resnet18();
  EXPECT_EQ(fitting_depth(g, g.nodes.size()), 0);
  const int depth = fitting_depth(g, 20);
  EXPECT_GE(depth, 1);
  SummaryOptions o;
  o.depth = depth;
  EXPECT_LE(table(summary_report(g, o), "layers").rows.size(), 20u);
}

TEST(SummaryReport, OutputShapeIsTheNodesFirstOutput) {
  // LSTM's outputs are Y [seq, dirs, batch, hidden], Y_h and Y_c [dirs, batch, hidden]: the row shows Y.
  Graph g = graph_from_descriptor("lstm:4x3x6,1x20x6,1x20x5/hidden_size=5/out0=4x1x3x5/out1=1x3x5/out2=1x3x5",
                                  DType::F32);
  ASSERT_EQ(g.nodes[0].outputs.size(), 3u);
  auto shown = [&] {
    const Document d = summary_report(g, SummaryOptions{});
    const Table& layers = table(d, "layers");
    return std::get<std::string>(layers.rows.at(0).at(layers.column("output_shape")).value);
  };
  EXPECT_EQ(shown(), "4x1x3x5");
  // Y omitted (an ONNX LSTM written with outputs "", "Y_h"): the first output there is, Y_h.
  g.value(g.nodes[0].outputs[0]).omitted = true;
  g.value(g.nodes[0].outputs[1]).shape = Shape{{1, 3, 7}};
  EXPECT_EQ(shown(), "1x3x7");
}

TEST(FlopsReport, PicksConventionsAsTheCommandDoes) {
  EXPECT_EQ(flops_conventions(false, std::nullopt), std::vector<Convention>{Convention::Ridge});
  EXPECT_EQ(flops_conventions(false, Convention::Thop), (std::vector<Convention>{Convention::Ridge, Convention::Thop}));
  EXPECT_EQ(flops_conventions(true, Convention::Thop).size(), conventions().size());
}

TEST(FlopsReport, OneRowPerConventionWithItsExactHeadline) {
  const Graph g = resnet18();
  const auto which = flops_conventions(true, std::nullopt);
  const Document d = flops_report(g, which);
  const Table& t = table(d, "conventions");
  ASSERT_EQ(t.rows.size(), which.size());
  for (size_t i = 0; i < which.size(); ++i)
    EXPECT_EQ(count_of(t.rows[i][static_cast<size_t>(t.column("headline"))]), count_under(g, which[i]).total);
  EXPECT_EQ(count_of(field(fields(d, "totals"), "macs")), estimate(g).total.macs);
}

TEST(DevicesReport, ListsTheDatabaseAndSaysWhyThisMachineIsMissing) {
  DevicesRequest req;
  req.machine_profile = test::temp_dir() + "/no-profile.json";
  const Document d = devices_report(req);
  EXPECT_EQ(table(d, "devices").rows.size(), load_devices().size());
  EXPECT_EQ(d.extra["devices"].size(), load_devices().size());
  bool noted = false;
  for (const auto& n : d.notes) noted |= n.find("no profile at " + req.machine_profile) != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(PredictReport, MatchesThePredictionOfTheModelStage) {
  PredictRequest req;
  req.model = "resnet18";
  req.device = "a100";
  req.load.batch = 8;
  const Document d = predict_report(req);
  const Device dev = find_device(load_devices(), "a100");
  PredictSettings s;
  s.batch = 8;
  LoadOptions lo;
  lo.batch = 8;
  const Prediction p = predict(load_model_work("resnet18", lo).layers, predict_options(dev, s));
  EXPECT_DOUBLE_EQ(real_of(field(fields(d, "summary"), "total_time_s")), p.total_time_s);
  EXPECT_EQ(table(d, "layers").rows.size(), p.layers.size());
  EXPECT_EQ(d.extra["precision"], "fp32");
}

TEST(PredictReport, HandGivenFlopsAndDataParallelTraining) {
  PredictRequest req;
  req.model = "paper-model";
  req.device = "v100";
  req.flops = Count(1000000000);
  req.train = true;
  req.ppp = 0.5;
  const Document d = predict_report(req);
  EXPECT_EQ(table(d, "layers").rows.size(), 1u);
  EXPECT_EQ(d.notes.front(), "FLOPs from --flops: memory traffic and kernel launches are not modelled");

  PredictRequest dp;
  dp.model = "resnet18";
  dp.device = "v100";
  dp.train = true;
  dp.data_parallel.cluster.devices = 16;
  dp.data_parallel.allreduce = "ring";
  EXPECT_GT(table(predict_report(dp), "buckets").rows.size(), 0u);
  dp.train = false;
  EXPECT_THROW(predict_report(dp), UsageError);
}

TEST(PredictReport, BadNamesAreUsageErrors) {
  PredictRequest req;
  req.model = "resnet18";
  req.device = "a100";
  req.combine = "both";
  EXPECT_THROW(predict_report(req), UsageError);
  req.combine = "sum";
  req.precision = "fp12";
  EXPECT_THROW(predict_report(req), UsageError);
}

}  // namespace
}  // namespace ridge::report

namespace ridge::report {
namespace {

TEST(RooflineReport, OneRowPerModelAndDeviceAndOneChartPerDevice) {
  RooflineRequest req;
  req.models = {"resnet18"};
  req.devices = {"a100", "v100"};
  const RooflineResult r = roofline_report(req);
  EXPECT_EQ(table(r.doc, "devices").rows.size(), 2u);
  EXPECT_EQ(table(r.doc, "models").rows.size(), 2u);
  EXPECT_EQ(r.charts.size(), 2u);
  req.summary_only = true;
  req.charts = false;
  const RooflineResult s = roofline_report(req);
  EXPECT_TRUE(s.charts.empty());
  EXPECT_THROW(table(s.doc, "layers"), std::runtime_error);
}

TEST(RooflineReport, UsesAMatchingMeasurementsTime) {
  RooflineRequest req;
  req.models = {"resnet18"};
  req.devices = {"a100"};
  MeasuredRun m;
  m.file = "run.json";
  m.model = "resnet18";
  m.layers = {MeasuredRow{"all", "", 1e-3, Count(2000000000), Count(1000000), std::nullopt, "", {}}};
  req.measured = {m};
  const RooflineResult r = roofline_report(req);
  const Table& models = table(r.doc, "models");
  EXPECT_DOUBLE_EQ(real_of(models.rows[0][static_cast<size_t>(models.column("measured_time_s"))]), 1e-3);
  EXPECT_EQ(count_of(models.rows[0][static_cast<size_t>(models.column("flops"))]), Count(2000000000));
}

TEST(IngestReport, ReadsSumsAndListsKernels) {
  RIDGE_REQUIRE_SHARED();
  IngestRequest req;
  req.files = {{test::fixture("profiles/01_ncu_text_nyu_A100_resnet18_bs10_train_smsp_flops_dram.log"), ""}};
  const ingest::Profile p = ingest_profile(req);
  ASSERT_FALSE(p.kernels.empty());
  const Document all = ingest_report(p, req, true);
  EXPECT_EQ(table(all, "kernels").rows.size(), p.kernels.size());
  EXPECT_EQ(count_of(field(fields(all, "totals"), "kernels")), ingest::totals(p).kernels);
  const Document top = ingest_report(p, req, false);
  EXPECT_LE(table(top, "kernels").rows.size(), 25u);
  req.model = "resnet18";
  req.batch = 10;
  req.train = true;
  const Document compared = ingest_report(p, req, false);
  EXPECT_EQ(table(compared, "compare").rows.size(), 2u);
}

TEST(IngestReport, UnknownInputFormatIsAUsageError) {
  IngestRequest req;
  req.files = {{"x.log", ""}};
  req.input_format = "bogus";
  EXPECT_THROW(ingest_profile(req), UsageError);
}

}  // namespace
}  // namespace ridge::report

namespace ridge::report {
namespace {

TEST(MeasureReport, MeasuresALoadedGraphAndCallsBackBeforeTheFirstRun) {
  const Graph g = load_model("relu:1x8x16x16", LoadOptions{});
  MeasureRequest req;
  req.options.max_repeats = 2;
  req.options.min_repeats = 1;
  req.options.warmup = 0;
  req.machine_profile = "none";
  int started = 0;
  const ModelMeasurement m = measure_model(g, req, [&] { ++started; });
  EXPECT_EQ(started, 1);
  const Document d = measure_report(g, m);
  EXPECT_EQ(table(d, "layers").rows.size(), m.layers.size());
  EXPECT_EQ(d.extra["device"], "cpu");
  EXPECT_EQ(count_of(field(fields(d, "summary"), "flops")), m.flops);
}

// Timings are facts injected here: a step whose repeats spread (IQR) above half their median, or one faster
// than its roof, is named in the notes.
TEST(MeasureReport, FlagsBusyTimingsAndStepsAboveTheirRoof) {
  const Graph g = load_model("relu:1x8x16x16", LoadOptions{});
  ModelMeasurement m;
  LayerMeasurement l;
  l.step.name = "relu";
  l.step.status = StepStatus::Executed;
  l.forward.median_s = 1e-3, l.forward.samples = 10, l.forward.spread = 0.9;
  l.roofline_percent = 180;
  m.layers.push_back(l);
  m.total = l.forward;
  auto notes = measure_report(g, m).notes;
  auto has = [&](const char* text) {
    return std::any_of(notes.begin(), notes.end(), [&](const std::string& n) { return n.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(has("busy-machine: 1 layer timing(s), the whole pass spread (IQR)"));
  EXPECT_TRUE(has("above-roof: 1 layer(s) measured faster than their roof (relu 180 %"));
  m.layers[0].forward.spread = m.total.spread = 0.05;
  m.layers[0].roofline_percent = 90;
  notes = measure_report(g, m).notes;
  EXPECT_FALSE(has("busy-machine"));
  EXPECT_FALSE(has("above-roof"));
}

TEST(RunReport, ExecutesOnceAndListsOutputsAndSteps) {
  RunRequest req;
  req.model = "relu:1x8x16x16";
  const RunResult r = run_model(req);
  EXPECT_FALSE(r.failure.has_value());
  EXPECT_EQ(table(r.doc, "outputs").rows.size(), r.exec.outputs.size());
  EXPECT_EQ(table(r.doc, "steps").rows.size(), r.exec.steps.size());
  EXPECT_EQ(r.doc.extra["passed"], true);
}

TEST(MachineReport, ListsThePeaksAndLevelsOfAProfile) {
  measure::MachineProfile p;
  p.cpu.model = "Test CPU";
  p.threads = 4;
  const Document d = machine_report(p, measure::ProfileSource{}, false);
  EXPECT_EQ(std::get<std::string>(field(fields(d, "cpu"), "model").value), "Test CPU");
  EXPECT_NO_THROW(table(d, "peaks"));
  EXPECT_THROW(table(d, "sweep"), std::runtime_error);
  const Document with_sweep = machine_report(p, measure::ProfileSource{}, true);
  EXPECT_NO_THROW(table(with_sweep, "sweep"));
}

}  // namespace
}  // namespace ridge::report

namespace ridge::report {
namespace {

SweepPoint point(int64_t batch, std::optional<double> measured_s = std::nullopt) {
  SweepPoint p;
  p.model = "m";
  p.batch = batch;
  p.flops = 1000 * batch + 10;
  p.training_peak_bytes = 64 * batch;
  p.measured = measured_s.has_value();
  p.measured_time_s = measured_s;
  return p;
}

TEST(SweepReport, OneBatchSizeFitsNoLineAndSaysSo) {
  SweepReportRequest req{{"m"}, 1, "", std::nullopt};
  const Document one = sweep_report(req, {point(8)});
  EXPECT_TRUE(table(one, "fits").rows.empty());  // a slope of 0 with R^2 1 was printed
  bool said = false;
  for (const auto& n : one.notes) said |= n.find("no line fitted for m: one batch size") != std::string::npos;
  EXPECT_TRUE(said);
  req.planned_points = 2;
  const Document two = sweep_report(req, {point(1), point(2)});
  const Table& fits = table(two, "fits");
  ASSERT_FALSE(fits.rows.empty());
  EXPECT_DOUBLE_EQ(std::get<double>(fits.rows[0][static_cast<size_t>(fits.column("slope_per_sample"))].value), 1000.0);
}

TEST(SweepReport, PredictedColumnsSayWhetherTheyAreBoundsOrCalibrated) {
  SweepReportRequest req{{"m"}, 2, "h100-sxm", std::nullopt};
  std::vector<SweepPoint> points = {point(1), point(2)};
  for (SweepPoint& p : points) p.predicted = true, p.predicted_time_s = 1e-3, p.predicted_samples_per_s = 1e3;
  auto title = [](const Document& d, const char* key) {
    const Table& t = table(d, "points");
    return t.columns.at(static_cast<size_t>(t.column(key))).title;
  };
  const Document bound = sweep_report(req, points);
  EXPECT_EQ(title(bound, "predicted_time_s"), "predicted time (h100-sxm, upper bound (uncalibrated))");
  EXPECT_EQ(title(bound, "predicted_samples_per_s"), "predicted samples/s (upper bound (uncalibrated))");
  points[0].predicted_calibrated = true;  // one bound among calibrated points still makes the column a bound
  EXPECT_EQ(title(sweep_report(req, points), "predicted_samples_per_s"), "predicted samples/s (upper bound (uncalibrated))");
  points[1].predicted_calibrated = true;
  EXPECT_EQ(title(sweep_report(req, points), "predicted_time_s"), "predicted time (h100-sxm, calibrated)");
}

TEST(SweepReport, PointsFitsAndCapacityFromTypedPoints) {
  SweepReportRequest req{{"m"}, 3, "", std::nullopt};
  const std::vector<SweepPoint> points = {point(1), point(2)};
  const Document d = sweep_report(req, points);
  EXPECT_EQ(table(d, "points").rows.size(), 2u);
  EXPECT_LT(table(d, "points").column("measured_time_s"), 0);
  const Table& fits = table(d, "fits");
  const size_t flops_row = 0;  // quantities in order: flops first
  EXPECT_DOUBLE_EQ(real_of(fits.rows[flops_row][static_cast<size_t>(fits.column("slope_per_sample"))]), 1000.0);
  EXPECT_EQ(d.title, "batch-size sweep: m (2 of 3 points)");
  EXPECT_THROW(table(d, "capacity"), std::runtime_error);
  EXPECT_EQ(sweep_charts(points).size(), 2u);

  req.device = "a100";
  req.capacity = SweepCapacity{"a100", Count(40) << 30, "sgd", {{"m", BatchCapacity{512, 128}}, {"n", std::nullopt}}};
  const std::vector<SweepPoint> measured = {point(1, 1e-3), point(2)};
  const Document c = sweep_report(req, measured);
  EXPECT_EQ(table(c, "capacity").rows.size(), 2u);
  EXPECT_GE(table(c, "points").column("measured_time_s"), 0);
  auto stops = [](const Document& doc) {
    return std::any_of(doc.notes.begin(), doc.notes.end(), [](const std::string& n) { return n.find("where the search stops") != std::string::npos; });
  };
  EXPECT_FALSE(stops(c));
  // A largest batch at the search's limit says that more fit.
  req.capacity->models = {{"m", BatchCapacity{65536, 128, 65536}}};
  EXPECT_TRUE(stops(sweep_report(req, measured)));
  EXPECT_EQ(sweep_charts(measured).size(), 3u);
  // At int8 (inference only) there is no training column, and its limit says nothing; a model with an incomplete
  // memory has no largest batch, and the notes say why.
  req.capacity->models = {{"m", BatchCapacity{512, 65536, 65536}}, {"n", std::nullopt}};
  req.capacity->trainable = false;
  req.capacity->unknown = {{"n", "its memory is incomplete (Shape not costed)"}};
  const Document int8 = sweep_report(req, measured);
  const Table& cap = table(int8, "capacity");
  EXPECT_TRUE(cap.rows[0][static_cast<size_t>(cap.column("max_batch_training"))].is_empty());
  EXPECT_FALSE(stops(int8));
  EXPECT_TRUE(std::any_of(int8.notes.begin(), int8.notes.end(), [](const std::string& n) {
    return n == "largest batch of n not computed: its memory is incomplete (Shape not costed)";
  }));
}

TEST(TrainReport, FromARequestAppliesTheCalibrationChosenForTheDevice) {
  TrainRequest req{"llama-2-7b", "a100", {}, "builtin", {}};
  req.options.gpus = 16;
  req.options.tp = 2;
  const Device d = find_device(load_devices({}), "a100");
  TrainOptions to = req.options;
  LlmCalibrationChoice chosen = llm_calibration_for(d, to.compute, to.tp, "builtin");
  to.calibration = chosen.calibration;
  to.tp_allreduce = chosen.tp_allreduce;
  const LlmConfig c = require_llm_config(ModelSource("llama-2-7b"));
  EXPECT_EQ(to_json(train_report(req)).dump(),
            to_json(train_report(analyze_training(c, d, to), c, memory_savers_that_fit(c, d, to))).dump());
  req.calibration = "none";
  EXPECT_NE(to_json(train_report(req)).dump(), to_json(train_report(analyze_training(c, d, to), c)).dump());
}

std::vector<std::string> section_ids(const chart::ReportData& page) {
  std::vector<std::string> ids;
  for (const auto& s : page.sections) ids.push_back(s.id);
  return ids;
}

TEST(HtmlReport, ModelPageHasEverySectionAndReportsTheSweepsProgress) {
  ReportRequest req;
  req.model = "lenet5";
  req.devices = {"a100", "h100"};
  req.sweep = {1, 2, 4};
  std::vector<std::string> steps;
  req.progress = [&](const std::string& what, size_t done, size_t total, const std::string& detail) {
    steps.push_back(fmt::format("{} {}/{} {}", what, done, total, detail));
  };
  const HtmlReport r = html_report(req);
  EXPECT_EQ(section_ids(r.page),
            (std::vector<std::string>{"headline", "roofline", "sweep", "layers", "summary", "prediction", "shares"}));
  EXPECT_EQ(steps, (std::vector<std::string>{"report: sweep 0/3 batch 1", "report: sweep 1/3 batch 2",
                                             "report: sweep 2/3 batch 4", "report: sweep 3/3 "}));  // then its end
  EXPECT_EQ(r.page.sections[1].charts.size(), 2u);  // one roofline per device
  EXPECT_EQ(r.page.sections[2].charts.size(), 4u);  // time, samples/s, memory and FLOPs against batch
  EXPECT_EQ(r.doc.blocks.size(), 4u);                // runs, slowest layers, op groups, memory
  EXPECT_EQ(r.doc.title, r.page.title);
  EXPECT_EQ(r.doc.extra["scenario"]["model"], "lenet5");
  EXPECT_NE(chart::render_html(r.page).find("lenet5"), std::string::npos);
}

TEST(HtmlReport, ServingPageTimesLikeServe) {
  ReportRequest req;
  req.model = "llama-2-7b";
  req.serve = true;
  req.devices = {"a100"};
  req.serve_options.tp = 2;
  const HtmlReport r = html_report(req);
  EXPECT_EQ(section_ids(r.page), (std::vector<std::string>{"headline", "roofline"}));
  EXPECT_EQ(r.doc.extra["scenario"]["serving"], true);
  ServeOptions so = req.serve_options;
  so.compute = Precision::FP16;
  const Document serve = serve_report(ServeRequest{"llama-2-7b", "a100", {}, "builtin", so});
  // The headline's time is serve's end-to-end latency, with serve's label on the page and serve's time_kind in JSON.
  const auto runs = to_json(r.doc);
  EXPECT_EQ(runs["headline"][0]["time_kind"], serve.extra["time_kind"]) << runs.dump();
  EXPECT_NE(chart::render_html(r.page).find(serve.extra["ttft_s_label"].get<std::string>()), std::string::npos);
  // Under tensor parallelism the memory shown is one GPU's, and its title says so.
  const auto memory = std::find_if(r.doc.blocks.begin(), r.doc.blocks.end(),
                                   [](const Block& b) { return std::holds_alternative<Fields>(b); });
  ASSERT_NE(memory, r.doc.blocks.end());
  EXPECT_EQ(std::get<Fields>(*memory).title, "Memory per GPU");
}

TEST(HtmlReport, ProfilesSectionPutsTheKernelsOnEachGpusRoofline) {
  RIDGE_REQUIRE_SHARED();
  ReportRequest req;
  req.model = "lenet5";
  req.devices = {"a100"};
  req.precision = "fp16";
  req.sweep = {1};
  req.profiles = {test::fixture("profiles/09_ncu_csv_details_leleucas_A100_bert_mha_fp16_with_rules.csv")};
  const HtmlReport r = html_report(req);
  const auto profiles_at = std::find_if(r.page.sections.begin(), r.page.sections.end(),
                                        [](const auto& s) { return s.id == "profiles"; });
  ASSERT_NE(profiles_at, r.page.sections.end());
  const auto& profiles = *profiles_at;
  ASSERT_EQ(profiles.charts.size(), 2u);  // the kernel roofline and, with L1/L2 bytes, the hierarchical one
  const std::string svg = chart::render_svg(profiles.charts[0]);
  EXPECT_NE(svg.find("class=\"pt\""), std::string::npos);
  // The A100's L2 and L1 ceilings are drawn under the hierarchical points.
  std::vector<std::string> ceilings;
  for (const auto& c : profiles.charts[1].ceilings) ceilings.push_back(c.label);
  for (const char* level : {"DRAM ", "L2 ", "L1 "})
    EXPECT_TRUE(std::any_of(ceilings.begin(), ceilings.end(), [&](const std::string& l) { return l.starts_with(level); }))
        << level;
  // One path with `ridge ingest`: the HTML shows ingest's blocks, the JSON keeps them under "profile" with its keys.
  std::vector<std::string> keys;
  for (const auto& b : profiles.blocks) keys.push_back(std::visit([](const auto& x) { return x.key; }, b));
  for (const char* key : {"totals", "groups", "compare"})
    EXPECT_NE(std::find(keys.begin(), keys.end(), key), keys.end()) << key;
  const nlohmann::json j = to_json(r.doc);
  ASSERT_TRUE(j.contains("profile")) << j.dump();
  const auto& p = j["profile"];
  EXPECT_EQ(p["compare"][0]["quantity"], "flops");
  EXPECT_EQ(p["compare"][1]["quantity"], "bytes");
  EXPECT_TRUE(p["compare"][0]["estimated"].is_number_integer() || p["compare"][0]["estimated"].is_string());
  EXPECT_GT(p["totals"]["kernels"].get<int64_t>(), 0);
  EXPECT_TRUE(p.contains("kernels") && p.contains("warnings") && p.contains("groups"));
}

TEST(HtmlReport, AProfileOfAnotherModelIsRefusedAsIngestRefusesIt) {
  RIDGE_REQUIRE_SHARED();
  ReportRequest req;
  req.model = "resnet50";
  req.load.batch = 10;
  req.sweep = {1};
  req.profiles = {test::fixture("profiles/01_ncu_text_nyu_A100_resnet18_bs10_train_smsp_flops_dram.log")};
  try {
    html_report(req);
    FAIL() << "a resnet18 profile was accepted in a resnet50 report";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("resnet18"), std::string::npos) << m;
    EXPECT_NE(m.find("resnet50"), std::string::npos) << m;
  }
  req.force = true;
  const HtmlReport r = html_report(req);
  const nlohmann::json j = to_json(r.doc);
  bool forced = false;
  for (const auto& n : j["profile"]["notes"]) forced = forced || n.get<std::string>().find("forced: ") != std::string::npos;
  EXPECT_TRUE(forced) << j["profile"]["notes"].dump();
}

TEST(HtmlReport, BadRequestsAreOneLineErrors) {
  ReportRequest serve;
  serve.model = "llama-2-7b";
  serve.serve = true;
  EXPECT_THROW(html_report(serve), UsageError);  // no device
  ReportRequest sweep;
  sweep.model = "lenet5";
  sweep.sweep = {1, 0};
  EXPECT_THROW(html_report(sweep), UsageError);
  ReportRequest unknown;
  unknown.model = "nosuch";
  EXPECT_THROW(html_report(unknown), Error);
}

}  // namespace
}  // namespace ridge::report

namespace ridge::report {
namespace {

TEST(ServeReport, LayerPatternStarsTheLayerIndex) {
  EXPECT_EQ(layer_pattern("model.layers.12.mlp.up_proj"), "model.layers.*.mlp.up_proj");
  EXPECT_EQ(layer_pattern("transformer.h.0.attn.c_attn"), "transformer.h.*.attn.c_attn");
  EXPECT_EQ(layer_pattern("lm_head"), "lm_head");
  EXPECT_EQ(layer_pattern("model.layers.3.experts.7.w1"), "model.layers.*.experts.7.w1");  // the first index only
  EXPECT_EQ(layer_pattern("allreduce (2 per layer)"), "allreduce (2 per layer)");
}

TEST(ServeReport, OpGroupsSumEveryLayersOpsPerPhase) {
  ServeOptions so;
  so.prompt = 16;
  so.generate = 4;
  const Document d = serve_report(ServeRequest{"llama-2-7b", "a100", {}, "none", so});
  const Table* ops = nullptr;
  const Table* groups = nullptr;
  for (const Block& b : d.blocks)
    if (const auto* t = std::get_if<Table>(&b)) {
      if (t->key == "ops") ops = t;
      if (t->key == "op_groups") groups = t;
    }
  ASSERT_TRUE(ops && groups);
  const int time = groups->column("time_s"), count = groups->column("count"), name = groups->column("name");
  double ops_time = 0, group_time = 0, share = 0;
  for (const auto& row : ops->rows) ops_time += std::get<double>(row[ops->column("time_s")].value);
  for (const auto& row : groups->rows) {
    group_time += std::get<double>(row[time].value);
    if (std::get<std::string>(row[groups->column("phase")].value) == "prefill")
      share += std::get<double>(row[groups->column("share_of_phase_percent")].value);
    if (std::get<std::string>(row[name].value) == "model.layers.*.mlp.down_proj") {
      EXPECT_EQ(std::get<Count>(row[count].value), Count{32});  // one per layer
    }
  }
  EXPECT_NEAR(group_time, ops_time, 1e-12 * ops_time);
  EXPECT_NEAR(share, 100.0, 1e-9);
  EXPECT_LT(groups->rows.size() * 10, ops->rows.size());  // 32 layers fold into one row per op
}

}  // namespace
}  // namespace ridge::report

namespace ridge::report {
namespace {

TEST(CompareReport, EveryModelAtEveryBatchAndPrecisionFromPlainValues) {
  CompareRequest req;
  req.models = {"resnet18", "mnist"};
  req.batches = {1, 4};
  req.precisions = {"fp32", "amp-bf16"};
  const Document d = compare_report(req);
  const auto j = to_json(d);
  ASSERT_EQ(j["compare"].size(), 8u);  // 2 models x 2 batches x 2 precisions
  EXPECT_EQ(j["compare"][0]["params"], 11689512);
  req.models = {"resnet18"};
  req.batches = {1};
  req.precisions = {"fp32"};
  EXPECT_THROW(compare_report(req), UsageError);  // one variant compares nothing
  req.models = {"resnet18", "mnist"};
  req.optimizer = "lion";
  EXPECT_THROW(compare_report(req), UsageError);
}

}  // namespace
}  // namespace ridge::report

namespace ridge::report {
namespace fallback_note_test {

// A hybrid's scan and conv1d have no fitted class in the shipped LLM calibrations: serve and train say which ops
// were timed with the fallback factors; a Llama, whose every class is fitted, gets no such note.
TEST(LlmReports, OpsWhoseClassIsNotCalibratedAreNamed) {
  auto fallback_note = [](const Document& d) {
    for (const std::string& n : d.notes)
      if (n.find("fallback factors") != std::string::npos) return n;
    return std::string{};
  };
  ServeOptions so;
  so.batch = 1, so.prompt = 32, so.generate = 4, so.compute = Precision::FP16;
  so.weights = *parse_number_format("fp16"), so.kv = *parse_number_format("fp16");
  const std::string hybrid = fallback_note(serve_report(ServeRequest{"nemotron-nano-9b-v2", "h100", {}, "builtin", so}));
  EXPECT_NE(hybrid.find("backbone.layers.*.mixer.selective_scan (Recurrent)"), std::string::npos) << hybrid;
  EXPECT_NE(hybrid.find("backbone.layers.*.mixer.conv1d (DepthwiseConv)"), std::string::npos) << hybrid;
  EXPECT_EQ(fallback_note(serve_report(ServeRequest{"llama-3-8b", "h100", {}, "builtin", so})), "");
  EXPECT_EQ(fallback_note(serve_report(ServeRequest{"nemotron-nano-9b-v2", "h100", {}, "none", so})), "");
}

// The HTML report's serving page counts a hybrid's state cache in the memory per GPU, beside the KV cache.
TEST(LlmReports, AHybridsStateCacheIsPartOfTheServingMemory) {
  ReportRequest req;
  req.model = "nemotron-nano-9b-v2";
  req.serve = true;
  req.devices = {"h100"};
  req.serve_options.prompt = 64, req.serve_options.generate = 4;
  const HtmlReport r = html_report(req);
  const auto memory = std::find_if(r.doc.blocks.begin(), r.doc.blocks.end(),
                                   [](const Block& b) { return std::holds_alternative<Fields>(b); });
  ASSERT_NE(memory, r.doc.blocks.end());
  const Fields& f = std::get<Fields>(*memory);
  Count kv = -1, state = -1, weights = -1, total = -1;
  for (const auto& [column, cell] : f.items) {
    const Count* v = std::get_if<Count>(&cell.value);
    if (!v) continue;
    if (column.key == "kv_cache_bytes") kv = *v;
    if (column.key == "state_cache_bytes") state = *v;
    if (column.key == "weights_bytes") weights = *v;
    if (column.key == "total_bytes") total = *v;
  }
  // 27 Mamba-2 layers x (12,288 x 3 conv values x 2 bytes + 128 x 80 x 128 float32) for one sequence.
  EXPECT_EQ(state, Count{27} * (12288 * 3 * 2 + 128 * 80 * 128 * 4));
  EXPECT_EQ(total, weights + kv + state);
}

}  // namespace fallback_note_test
}  // namespace ridge::report
