// Cluster communication: topology, NCCL-style all-reduce formulas on injected links, DDP gradient buckets
// overlapped with backward, the interconnect files, and the all-reduce fit on Vidur's measured NCCL times.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <map>

#include "ridge/error.hpp"
#include "ridge/predict.hpp"
#include "support/test_support.hpp"

namespace ridge {
namespace {

using nlohmann::json;
constexpr Count kMiB = Count(1) << 20;

ClusterTopology cluster(int gpus_per_node, int nodes, Interconnect intra, Interconnect inter = {}, int nics = 1) {
  ClusterTopology t;
  t.gpus_per_node = gpus_per_node;
  t.nodes = nodes;
  t.intra = std::move(intra);
  t.inter = std::move(inter);
  t.nics_per_node = nics;
  return t;
}

TEST(AllReduce, OneNodeRingIsNcclsFormula) {
  const auto t = cluster(4, 1, {"fabric", 100e9, 2e-6});
  const Count bytes = 100000000;
  // 2(N-1) steps of latency, 2(N-1)/N x bytes over the per-GPU link.
  const auto ring = allreduce_time(AllReduce::Ring, bytes, t);
  EXPECT_DOUBLE_EQ(ring.latency_s, 6 * 2e-6);
  EXPECT_DOUBLE_EQ(ring.bandwidth_s, 2 * 3.0 / 4 * 1e8 / 100e9);
  // Tree inside one node is NCCL's chain: same latency, a whole buffer up and down: slower than the ring.
  const auto tree = allreduce_time(AllReduce::Tree, bytes, t);
  EXPECT_DOUBLE_EQ(tree.latency_s, 2 * 3 * 2e-6);
  EXPECT_DOUBLE_EQ(tree.bandwidth_s, 2 * 1e8 / 100e9);
  EXPECT_DOUBLE_EQ(allreduce_time(AllReduce::Hierarchical, bytes, t).time_s, ring.time_s);
  const auto best = allreduce_time(AllReduce::Auto, bytes, t);
  EXPECT_EQ(best.algorithm, AllReduce::Ring);
  EXPECT_DOUBLE_EQ(best.time_s, ring.time_s);
  EXPECT_DOUBLE_EQ(allreduce_time(AllReduce::ParameterServer, bytes, t).time_s, 2 * 2e-6 + 2 * 3 * 1e8 / 100e9);
  EXPECT_DOUBLE_EQ(allreduce_time(AllReduce::Ring, bytes, cluster(1, 1, {"fabric", 100e9, 2e-6})).time_s, 0.0);
}

TEST(AllReduce, TwoNodesTakeTheFastestOfRingTreeAndHierarchical) {
  // 2 nodes x 4 GPUs: 100 GB/s inside, 2 NICs of 10 GB/s (20 GB/s per node), latencies 2 us and 5 us.
  const auto t = cluster(4, 2, {"fabric", 100e9, 2e-6}, {"net", 10e9, 5e-6}, 2);
  EXPECT_DOUBLE_EQ(t.node_network_bytes_per_s(), 20e9);
  const Count bytes = 100000000;
  const auto ring = allreduce_time(AllReduce::Ring, bytes, t);  // flat ring: every step waits for the slower hop
  EXPECT_DOUBLE_EQ(ring.latency_s, 14 * 5e-6);
  EXPECT_DOUBLE_EQ(ring.bandwidth_s, 2 * 7.0 / 8 * 1e8 / 20e9);
  const auto tree = allreduce_time(AllReduce::Tree, bytes, t);  // chain of 4 inside, log2(2) = 1 hop across
  EXPECT_DOUBLE_EQ(tree.latency_s, 2 * (1 * 5e-6 + 3 * 2e-6));
  EXPECT_DOUBLE_EQ(tree.bandwidth_s, 2 * 1e8 / 20e9);
  // Reduce-scatter + all-gather inside (2 x 3/4 x S / 100 GB/s), ring of the S/4 shards across 2 nodes with
  // 20/4 GB/s each (2 x 1/2 x 25 MB / 5 GB/s).
  const auto h = allreduce_time(AllReduce::Hierarchical, bytes, t);
  EXPECT_DOUBLE_EQ(h.latency_s, 2 * 3 * 2e-6 + 2 * 1 * 5e-6);
  EXPECT_NEAR(h.bandwidth_s, 2 * 3.0 / 4 * 1e8 / 100e9 + 2 * 0.5 * 25e6 / 5e9, 1e-15);
  const auto best = allreduce_time(AllReduce::Auto, bytes, t);
  EXPECT_EQ(best.algorithm, AllReduce::Hierarchical);
  EXPECT_DOUBLE_EQ(best.time_s, h.time_s);
  // Small messages across 8 nodes are latency-bound: the tree's log-depth wins (3 hops across instead of 7).
  const auto eight = cluster(4, 8, {"fabric", 100e9, 2e-6}, {"net", 10e9, 5e-6}, 2);
  EXPECT_EQ(allreduce_time(AllReduce::Auto, 1024, eight).algorithm, AllReduce::Tree);
  EXPECT_DOUBLE_EQ(allreduce_time(AllReduce::Auto, 1024, eight).latency_s, 2 * (3 * 5e-6 + 3 * 2e-6));
  // One GPU per node: the ring runs on the network alone.
  const auto g1 = allreduce_time(AllReduce::Ring, bytes, cluster(1, 4, {}, {"net", 10e9, 5e-6}, 2));
  EXPECT_DOUBLE_EQ(g1.time_s, 6 * 5e-6 + 2 * 3.0 / 4 * 1e8 / 20e9);
}

TEST(AllReduce, BusBandwidthAndNames) {
  EXPECT_DOUBLE_EQ(allreduce_bus_bandwidth(1000000000, 0.01, 8), 1e11 * 14 / 8);
  EXPECT_EQ(parse_allreduce("auto"), AllReduce::Auto);
  EXPECT_EQ(parse_allreduce("2d"), AllReduce::Hierarchical);
  EXPECT_EQ(parse_allreduce("ps"), AllReduce::ParameterServer);
  EXPECT_FALSE(parse_allreduce("butterfly").has_value());
  EXPECT_EQ(allreduce_name(AllReduce::Hierarchical), "hierarchical");
}

// ---- topology ------------------------------------------------------------------------------------------------

Device dgx_like() {
  Device d;
  d.id = "gpu";
  d.node = {8, "fast", "net", 4};
  d.interconnects = {{"legacy", 1e9, 1e-5}};
  return d;
}

InterconnectSpec spec(const std::string& id, const std::string& scope, double bandwidth, double latency) {
  InterconnectSpec s;
  s.id = id;
  s.scope = scope;
  s.link = {id, bandwidth, latency};
  return s;
}

std::vector<InterconnectSpec> links() {
  std::vector<InterconnectSpec> all = {spec("fast", "intra-node", 100e9, 2e-6), spec("net", "inter-node", 10e9, 5e-6),
                                       spec("slow", "inter-node", 1e9, 5e-5)};
  all[0].aliases = {"fast-alias"};
  return all;
}

TEST(Topology, DefaultsComeFromTheDeviceNode) {
  const auto t = cluster_topology(dgx_like(), links(), {64});
  EXPECT_EQ(t.gpus_per_node, 8);
  EXPECT_EQ(t.nodes, 8);
  EXPECT_EQ(t.intra.name, "fast");
  EXPECT_EQ(t.inter.name, "net");
  EXPECT_EQ(t.nics_per_node, 4);
  EXPECT_EQ(topology_text(t), "8 nodes x 8 GPUs, fast inside, 4 x net between");
  const auto small = cluster_topology(dgx_like(), links(), {4});  // fewer devices than a node: one node
  EXPECT_EQ(small.gpus_per_node, 4);
  EXPECT_EQ(small.nodes, 1);
  EXPECT_EQ(topology_text(small), "1 node x 4 GPUs over fast");
  ClusterRequest req{16, 2, "fast-alias", "slow", 1};
  const auto custom = cluster_topology(dgx_like(), links(), req);
  EXPECT_EQ(custom.nodes, 8);
  EXPECT_EQ(custom.inter.name, "slow");
  EXPECT_EQ(custom.nics_per_node, 1);
  req.intra_node = "legacy";  // a link of the device file still works
  EXPECT_DOUBLE_EQ(cluster_topology(dgx_like(), links(), req).intra.bandwidth_bytes_per_s, 1e9);
}

TEST(Topology, ImpossibleShapesAreUsageErrors) {
  EXPECT_THROW(cluster_topology(dgx_like(), links(), {8, 16}), UsageError);  // more per node than devices
  EXPECT_THROW(cluster_topology(dgx_like(), links(), {12, 8}), UsageError);  // 8 does not divide 12
  EXPECT_THROW(cluster_topology(dgx_like(), links(), {12}), UsageError);     // the device's 8 does not divide 12
  EXPECT_THROW(cluster_topology(dgx_like(), links(), {8, 0}), UsageError);
  try {
    cluster_topology(dgx_like(), links(), {8, 3});
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--gpus-per-node 3 does not divide --devices-count 8");
  }
  ClusterRequest wrong_scope{16, 8, "net", "", {}};
  EXPECT_THROW(cluster_topology(dgx_like(), links(), wrong_scope), Error);
  ClusterRequest unknown{16, 8, "", "carrier-pigeon", {}};
  try {
    cluster_topology(dgx_like(), links(), unknown);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no such link"), std::string::npos) << e.what();
  }
  Device bare = dgx_like();
  bare.node = {};
  EXPECT_EQ(cluster_topology(bare, links(), {1}).devices(), 1);
  EXPECT_THROW(cluster_topology(bare, links(), {4}), Error);  // no fabric named
  ClusterRequest no_net{16, 8, "fast", "", {}};
  EXPECT_THROW(cluster_topology(bare, links(), no_net), Error);  // two nodes, no network named
}

// ---- gradient buckets overlapped with backward ------------------------------------------------------------

// A 2-GPU node whose ring all-reduce of S bytes takes exactly S / MiB seconds (no latency).
ClusterTopology one_mib_per_second() { return cluster(2, 1, {"fabric", to_double(kMiB), 0}); }

TEST(Buckets, AllReducesStartWhenBackwardProducesTheBucket) {
  // Forward order: L0 (3 MiB of gradients), L1 (none), L2 (2 MiB). Backward runs L2 (2 s), L1 (1 s), L0 (1 s).
  const std::vector<BackwardStep> steps = {{"L0", 1.0, 3 * kMiB}, {"L1", 1.0, 0}, {"L2", 2.0, 2 * kMiB}};
  Prediction single;
  single.total_time_s = 10;
  const auto dp = data_parallel(single, steps, 32, one_mib_per_second());
  // Bucket 1 = L2 (reaches DDP's 1 MiB first bucket): ready at 2 s, all-reduced 2..4 s. Bucket 2 = L0 (under
  // 25 MiB, closed at the end): ready at 4 s, stream free at 4 s, all-reduced 4..7 s. Backward ends at 4 s.
  ASSERT_EQ(dp.buckets.size(), 2u);
  EXPECT_EQ(dp.buckets[0].bytes, 2 * kMiB);
  EXPECT_DOUBLE_EQ(dp.buckets[0].ready_s, 2.0);
  EXPECT_DOUBLE_EQ(dp.buckets[0].end_s, 4.0);
  EXPECT_EQ(dp.buckets[1].layers, 1);
  EXPECT_DOUBLE_EQ(dp.buckets[1].start_s, 4.0);
  EXPECT_DOUBLE_EQ(dp.buckets[1].end_s, 7.0);
  EXPECT_DOUBLE_EQ(dp.allreduce_s, 5.0);
  EXPECT_DOUBLE_EQ(dp.exposed_s, 3.0);
  EXPECT_DOUBLE_EQ(dp.iteration_s, 13.0);
  EXPECT_DOUBLE_EQ(dp.efficiency, 10.0 / 13.0);
  EXPECT_DOUBLE_EQ(dp.samples_per_s, 2 * 32 / 13.0);

  BucketOptions no_overlap;
  no_overlap.overlap = false;  // every all-reduce after backward: 2 s + 3 s exposed
  EXPECT_DOUBLE_EQ(data_parallel(single, steps, 32, one_mib_per_second(), no_overlap).exposed_s, 5.0);

  BucketOptions tiny;  // 1 MiB buckets: L2 alone, then L0 alone; a 0.5 MiB first bucket changes nothing here
  tiny.bucket_bytes = kMiB;
  tiny.first_bucket_bytes = kMiB / 2;
  EXPECT_EQ(data_parallel(single, steps, 32, one_mib_per_second(), tiny).buckets.size(), 2u);
}

TEST(Buckets, BucketsQueueOnOneStream) {
  // Four layers of 1 MiB, backward 0.5 s each, 1 MiB buckets: ready at 0.5, 1, 1.5, 2 s, each taking 1 s.
  const std::vector<BackwardStep> steps(4, BackwardStep{"L", 0.5, kMiB});
  BucketOptions opt;
  opt.bucket_bytes = kMiB;
  Prediction single;
  single.total_time_s = 3;
  const auto dp = data_parallel(single, steps, 1, one_mib_per_second(), opt);
  ASSERT_EQ(dp.buckets.size(), 4u);
  EXPECT_DOUBLE_EQ(dp.buckets[3].start_s, 3.5);  // queued behind the third (2.5..3.5)
  EXPECT_DOUBLE_EQ(dp.exposed_s, 4.5 - 2.0);
  EXPECT_DOUBLE_EQ(dp.efficiency, 3.0 / 5.5);
}

TEST(Buckets, OneDeviceHasNothingToExchange) {
  Prediction single;
  single.total_time_s = 1;
  const auto dp = data_parallel(single, {{"L", 1.0, 100 * kMiB}}, 8, cluster(1, 1, {}));
  EXPECT_DOUBLE_EQ(dp.exposed_s, 0.0);
  EXPECT_DOUBLE_EQ(dp.efficiency, 1.0);
}

// ---- the shipped data and a real model ----------------------------------------------------------------------

TEST(Interconnects, ShippedFilesLoadWithSourcesAndDevicesNameThem) {
  const auto all = load_interconnects();
  for (const char* id : {"nvlink2", "nvlink3", "nvlink4", "pcie3", "pcie4", "pcie5", "ib-hdr", "ib-ndr", "eth-100g", "eth-25g"}) {
    const auto& s = find_interconnect(all, id, "--test");
    EXPECT_TRUE(s.sources.count("bandwidth_bytes_per_s") && s.sources.count("latency_s")) << id;
  }
  EXPECT_DOUBLE_EQ(find_interconnect(all, "nvlink3", "x").link.bandwidth_bytes_per_s, 600e9 / 2);  // 600 GB/s bidirectional
  EXPECT_DOUBLE_EQ(find_interconnect(all, "nvlink4", "x").link.bandwidth_bytes_per_s, 900e9 / 2);
  EXPECT_DOUBLE_EQ(find_interconnect(all, "ib-hdr", "x").link.bandwidth_bytes_per_s, 200e9 / 8);  // 200 Gb/s
  EXPECT_DOUBLE_EQ(find_interconnect(all, "ndr", "x").link.bandwidth_bytes_per_s, 400e9 / 8);
  EXPECT_THROW(find_interconnect(all, "nvlink9", "--intra-node"), Error);
  for (const Device& d : load_devices()) {
    if (!d.node.intra_node.empty()) {
      EXPECT_NO_THROW(cluster_topology(d, all, {d.node.gpus_per_node * 2})) << d.id;
    }
  }
  const Device a100 = find_device(load_devices(), "a100");
  EXPECT_EQ(a100.node.gpus_per_node, 8);
  EXPECT_EQ(a100.node.inter_node, "ib-hdr");
  EXPECT_THROW(parse_interconnect(R"({"name": "x", "scope": "intra-node", "bandwidth_bytes_per_s": 1, "latency_s": 1})", "x.json"),
               Error);  // numbers without sources
  EXPECT_THROW(parse_interconnect(R"({"name": "x", "scope": "sideways", "bandwidth_bytes_per_s": 1, "latency_s": 1,
                                      "sources": {"bandwidth_bytes_per_s": "s", "latency_s": "s"}})", "x.json"), Error);
}

DataParallel resnet50_on(const Device& d, int devices, const std::string& inter) {
  LoadOptions load;
  load.batch = 64;
  load.training = true;
  const ModelWork work = load_model_work("resnet50", load);
  PredictOptions opt;
  opt.peak_flop_per_s = d.require_peak(Precision::FP32);
  opt.bandwidth_bytes_per_s = d.dram_bandwidth();
  opt.kernel_launch_s = d.kernel_launch_s;
  opt.training = true;
  opt.batch = load.batch;
  const Prediction p = predict(work.layers, opt);
  const auto topo = cluster_topology(d, load_interconnects(), {devices, std::nullopt, "", inter, std::nullopt});
  const auto steps = backward_steps(p, work.layers, work.bytes_per_element);
  Count gradient_bytes = 0;
  for (const auto& s : steps) gradient_bytes += s.gradient_bytes;
  EXPECT_EQ(gradient_bytes, work.param_bytes);
  return data_parallel(p, steps, load.batch, topo);
}

TEST(Buckets, Resnet50On64A100sAcrossNodesScalesWorseThanOneNode) {
  const Device a100 = find_device(load_devices(), "a100");
  const auto one_node = resnet50_on(a100, 8, "");
  const auto cluster64 = resnet50_on(a100, 64, "ib-hdr");
  EXPECT_EQ(one_node.topology.nodes, 1);
  EXPECT_EQ(cluster64.topology.nodes, 8);
  EXPECT_GT(cluster64.exposed_s, 1.5 * one_node.exposed_s);
  EXPECT_LT(cluster64.efficiency, one_node.efficiency);
  // The same arithmetic by hand: exposed = end of the last all-reduce - end of backward.
  double backward_s = 0, allreduce_s = 0;
  for (const auto& b : cluster64.buckets) allreduce_s += b.allreduce.time_s;
  const auto& last = cluster64.buckets.back();
  backward_s = last.ready_s;  // the last bucket holds the first layer's gradients: ready when backward ends
  EXPECT_DOUBLE_EQ(cluster64.allreduce_s, allreduce_s);
  EXPECT_NEAR(cluster64.exposed_s, last.end_s - backward_s, 1e-15);
  EXPECT_DOUBLE_EQ(cluster64.efficiency, cluster64.compute_s / (cluster64.compute_s + cluster64.exposed_s));
  // A slow network is worse still.
  EXPECT_LT(resnet50_on(a100, 64, "eth-25g").efficiency, cluster64.efficiency);
}

// ---- the fit on measured NCCL times -------------------------------------------------------------------------

TEST(AllReduceFit, RecoversAnInjectedLineAndHoldsOutSizeRanges) {
  // Exact t = 2(n-1) a + 2(n-1)/n S / busbw for n = 4, a = 5 us, busbw = 100 GB/s over sizes in every range.
  std::vector<AllReduceSample> samples;
  for (Count s : {Count(4096), Count(512) << 10, Count(2) << 20, Count(6) << 20, Count(16) << 20, Count(64) << 20})
    samples.push_back({4, 4, s, 6 * 5e-6 + 1.5 * to_double(s) / 100e9});
  const auto f = fit_allreduce(samples, "gpu");
  EXPECT_NEAR(f.latency_s, 5e-6, 1e-12);
  EXPECT_NEAR(f.bus_bandwidth_bytes_per_s, 100e9, 1e-3);
  EXPECT_LT(f.in_sample.median, 1e-9);
  EXPECT_LT(f.leave_range_out.p90, 1e-9);
  EXPECT_EQ(f.leave_range_out.count, samples.size());
  EXPECT_NEAR(allreduce_fit_time_s(f, 1000000), 6 * 5e-6 + 1.5e6 / 100e9, 1e-15);
  const auto round = read_allreduce_fits([&] {
    const std::string path = test::temp_dir() + "/fit.json";
    std::ofstream(path) << allreduce_fits_to_json({f}, "test").dump(2);
    return path;
  }());
  ASSERT_EQ(round.size(), 1u);
  EXPECT_DOUBLE_EQ(round[0].bus_bandwidth_bytes_per_s, f.bus_bandwidth_bytes_per_s);
}

TEST(AllReduceFit, AOneNodeFitReplacesTheFabricFigures) {
  AllReduceFit fit;
  fit.device = "gpu";
  fit.workers = fit.devices_per_node = 8;
  fit.latency_s = 3e-6;
  fit.bus_bandwidth_bytes_per_s = 150e9;
  const std::vector<Device> devices = {dgx_like()};  // its node names the "fast" fabric
  const auto node = cluster_topology(dgx_like(), links(), {8});
  const auto found = intra_node_fit({fit}, devices, node);
  ASSERT_TRUE(found.has_value());
  const auto fitted = with_intra_node_fit(node, *found);
  for (Count s : {Count(2048), Count(64) << 20})
    EXPECT_DOUBLE_EQ(allreduce_time(AllReduce::Auto, s, fitted).time_s, allreduce_fit_time_s(fit, s));
  EXPECT_FALSE(intra_node_fit({fit}, devices, cluster_topology(dgx_like(), links(), {4})).has_value());  // 4 GPUs
  ClusterRequest other{8, std::nullopt, "legacy", "", std::nullopt};
  EXPECT_FALSE(intra_node_fit({fit}, devices, cluster_topology(dgx_like(), links(), other)).has_value());
}

std::string vidur(const std::string& file) { return test::shared_dir() + "/reference/measured/vidur/" + file; }

TEST(AllReduceFit, VidurA100AndH100) {
  RIDGE_REQUIRE_SHARED();
  if (!std::filesystem::exists(vidur("a100_dgx_all_reduce.csv"))) GTEST_SKIP() << "no Vidur all-reduce data";
  const auto a100 = read_allreduce_csv(vidur("a100_dgx_all_reduce.csv"));
  const auto h100 = read_allreduce_csv(vidur("h100_dgx_all_reduce.csv"));
  EXPECT_EQ(a100.size(), 6958u);
  EXPECT_EQ(h100.size(), 2982u);
  auto fits = fit_allreduce_configs(a100, "a100-sxm4-80gb");
  const auto h = fit_allreduce_configs(h100, "h100-sxm");
  EXPECT_EQ(fits.size(), 7u);
  EXPECT_EQ(h.size(), 3u);
  fits.insert(fits.end(), h.begin(), h.end());
  for (const auto& f : fits) {
    // Single-node NVLink/NVSwitch bus bandwidth is tens to hundreds of GB/s, latency a few microseconds per step.
    if (f.workers == f.devices_per_node) {
      EXPECT_GT(f.bus_bandwidth_bytes_per_s, 50e9) << f.workers;
    }
    EXPECT_LT(f.latency_s, 50e-6) << f.workers << "/" << f.devices_per_node;
    // One node: within 15 % (median over sizes); across nodes (a noisier network) within 30 %.
    EXPECT_LT(f.in_sample.median, f.workers == f.devices_per_node ? 0.15 : 0.30)
        << f.device << " " << f.workers << "/" << f.devices_per_node;
  }
  const json doc = allreduce_fits_to_json(fits, "../shared/reference/measured/vidur/{a100,h100}_dgx_all_reduce.csv "
                                                "(Vidur, microsoft/vidur data/profiling/network)");
  EXPECT_LT(doc["summary"]["error_median"].get<double>(), 0.15);
  if (const char* out = std::getenv("RIDGE_WRITE_ALLREDUCE_FIT"); out && *out) std::ofstream(out) << doc.dump(2) << "\n";

  // The physical model from the data files alone (no fit), configuration by configuration.
  const auto devices = load_devices();
  const auto links = load_interconnects();
  std::vector<double> all_errors;
  for (const auto* set : {&a100, &h100}) {
    const Device d = find_device(devices, set == &a100 ? "a100-sxm4-80gb" : "h100-sxm");
    std::map<std::pair<int, int>, std::vector<double>> by_config;
    for (const auto& m : *set) {
      const auto topo = cluster_topology(d, links, {m.workers, m.devices_per_node, "", "", std::nullopt});
      const double e = std::abs(allreduce_time(AllReduce::Auto, m.bytes, topo).time_s - m.time_s) / m.time_s;
      by_config[{m.workers, m.devices_per_node}].push_back(e);
      all_errors.push_back(e);
    }
    for (const auto& [config, errors] : by_config) {
      const auto st = error_stats(errors);
      std::printf("datasheet model %s %d workers / %d per node: median %.1f %%, p90 %.1f %%\n", d.id.c_str(),
                  config.first, config.second, 100 * st.median, 100 * st.p90);
    }
  }
  const auto st = error_stats(all_errors);
  std::printf("datasheet model, all: median %.1f %%, p90 %.1f %%\n", 100 * st.median, 100 * st.p90);
  for (const auto& f : fits)
    std::printf("fit %s %d workers / %d per node: latency %.2f us, busbw %.1f GB/s, error median %.1f %% p90 %.1f %%, "
                "leave-range-out median %.1f %% p90 %.1f %%\n", f.device.c_str(), f.workers, f.devices_per_node,
                1e6 * f.latency_s, 1e-9 * f.bus_bandwidth_bytes_per_s, 100 * f.in_sample.median, 100 * f.in_sample.p90,
                100 * f.leave_range_out.median, 100 * f.leave_range_out.p90);
  std::printf("fit, all: %s\n", doc["summary"].dump().c_str());

  // The shipped calibration is this fit (regenerate it with bench/allreduce_fit.sh).
  const auto shipped = read_allreduce_fits(builtin_data_dir("calibrations") + "/allreduce-vidur.json");
  ASSERT_EQ(shipped.size(), fits.size());
  for (size_t i = 0; i < fits.size(); ++i) {
    EXPECT_EQ(shipped[i].workers, fits[i].workers);
    EXPECT_NEAR(shipped[i].bus_bandwidth_bytes_per_s, fits[i].bus_bandwidth_bytes_per_s,
                1e-6 * fits[i].bus_bandwidth_bytes_per_s);
  }
}

}  // namespace
}  // namespace ridge
