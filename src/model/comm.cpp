// Collective communication on a cluster: the topology (nodes of GPUs, the fabric inside a node, the network
// between nodes) and NCCL-style all-reduce times (ring, tree, hierarchical) with latency and bandwidth terms.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ridge/error.hpp"
#include "ridge/predict.hpp"

namespace ridge {

std::string_view allreduce_name(AllReduce a) {
  switch (a) {
    case AllReduce::Auto: return "auto";
    case AllReduce::Ring: return "ring";
    case AllReduce::Tree: return "tree";
    case AllReduce::Hierarchical: return "hierarchical";
    case AllReduce::ParameterServer: return "ps";
  }
  return "ring";
}

std::optional<AllReduce> parse_allreduce(std::string_view name) {
  if (name == "auto") return AllReduce::Auto;
  if (name == "ring") return AllReduce::Ring;
  if (name == "tree") return AllReduce::Tree;
  if (name == "hierarchical" || name == "2d") return AllReduce::Hierarchical;
  if (name == "ps" || name == "parameter-server") return AllReduce::ParameterServer;
  return std::nullopt;
}

// ---- topology ------------------------------------------------------------------------------------------------
namespace {

// A link by name: an interconnect file of the wanted scope first, else a link of the device file.
Interconnect resolve_link(const Device& d, const std::vector<InterconnectSpec>& links, const std::string& name,
                          const std::string& scope, const std::string& flag) {
  for (const auto& s : links) {
    if (!s.matches(name)) continue;
    if (s.scope != scope)
      throw Error(fmt::format("{} {}: '{}' is an {} link, not {}", flag, name, s.id, s.scope, scope));
    return s.link;
  }
  if (const Interconnect* own = d.interconnect(name)) return *own;
  std::string have;
  for (const auto& s : links)
    if (s.scope == scope) have += (have.empty() ? "" : ", ") + s.id;
  for (const auto& i : d.interconnects) have += (have.empty() ? "" : ", ") + i.name;
  throw Error(fmt::format("{} {}: device '{}' has no such link (known {} links: {})", flag, name, d.id, scope, have));
}

}  // namespace

ClusterTopology cluster_topology(const Device& d, const std::vector<InterconnectSpec>& links, const ClusterRequest& req) {
  const int n = req.devices;
  if (n < 1) throw UsageError(fmt::format("--devices-count {}: must be at least 1", n));
  ClusterTopology t;
  if (req.gpus_per_node) {
    const int g = *req.gpus_per_node;
    if (g < 1) throw UsageError(fmt::format("--gpus-per-node {}: must be at least 1", g));
    if (g > n) throw UsageError(fmt::format("--gpus-per-node {} is larger than --devices-count {}", g, n));
    if (n % g != 0) throw UsageError(fmt::format("--gpus-per-node {} does not divide --devices-count {}", g, n));
    t.gpus_per_node = g;
  } else if (d.node.gpus_per_node > 0) {
    t.gpus_per_node = std::min(d.node.gpus_per_node, n);
    if (n % t.gpus_per_node != 0)
      throw UsageError(fmt::format("--devices-count {} is not a multiple of {}'s {} GPUs per node: give --gpus-per-node",
                                   n, d.id, t.gpus_per_node));
  } else {
    t.gpus_per_node = n;  // nothing known about nodes: one node holds every device
  }
  t.nodes = n / t.gpus_per_node;
  const std::string intra = req.intra_node.empty() ? d.node.intra_node : req.intra_node;
  if (!intra.empty()) t.intra = resolve_link(d, links, intra, "intra-node", "--intra-node");
  else if (t.gpus_per_node > 1)
    throw Error(fmt::format("--intra-node: device '{}' names no fabric inside a node; give --intra-node NAME "
                            "(data/interconnects) or --interconnect NAME", d.id));
  const std::string inter = req.inter_node.empty() ? d.node.inter_node : req.inter_node;
  if (!inter.empty()) t.inter = resolve_link(d, links, inter, "inter-node", "--inter-node");
  else if (t.nodes > 1)
    throw Error(fmt::format("--inter-node: {} devices span {} nodes but device '{}' names no network between nodes; "
                            "give --inter-node NAME (data/interconnects)", n, t.nodes, d.id));
  if (req.nics_per_node && *req.nics_per_node < 1)
    throw UsageError(fmt::format("--nics-per-node {}: must be at least 1", *req.nics_per_node));
  t.nics_per_node = req.nics_per_node.value_or(d.node.nics_per_node > 0 ? d.node.nics_per_node : 1);
  return t;
}

std::string topology_text(const ClusterTopology& t) {
  const std::string gpus = fmt::format("{} GPU{}", t.gpus_per_node, t.gpus_per_node == 1 ? "" : "s");
  if (t.nodes == 1) return fmt::format("1 node x {}{}", gpus, t.gpus_per_node > 1 ? " over " + t.intra.name : "");
  std::string text = fmt::format("{} nodes x {}", t.nodes, gpus);
  if (t.gpus_per_node > 1) text += ", " + t.intra.name + " inside";
  return text + fmt::format(", {} x {} between", t.nics_per_node, t.inter.name);
}

// ---- all-reduce ----------------------------------------------------------------------------------------------
namespace {

AllReduceTime make_time(AllReduce algo, double latency_s, double bandwidth_s) {
  return {algo, latency_s, bandwidth_s, latency_s + bandwidth_s};
}

double ceil_log2(int n) { return std::ceil(std::log2(static_cast<double>(n))); }

// The link every step of a flat ring or tree waits for: the node's network when the ring leaves the node, the
// fabric inside a node when there is one.
struct Bottleneck {
  double latency_s, bandwidth_bytes_per_s;
};
Bottleneck bottleneck(const ClusterTopology& t) {
  if (t.nodes == 1) return {t.intra.latency_s, t.intra.bandwidth_bytes_per_s};
  if (t.gpus_per_node == 1) return {t.inter.latency_s, t.node_network_bytes_per_s()};
  return {std::max(t.intra.latency_s, t.inter.latency_s),
          std::min(t.intra.bandwidth_bytes_per_s, t.node_network_bytes_per_s())};
}

// Ring over n members: 2(n-1) steps, each moving bytes/n, on a link of (latency, bandwidth).
AllReduceTime ring(double bytes, int n, double latency_s, double bandwidth) {
  return make_time(AllReduce::Ring, 2.0 * (n - 1) * latency_s, 2.0 * (n - 1) / n * bytes / bandwidth);
}

// NCCL's tree: a chain through the GPUs of a node, a double binary tree across nodes, pipelined, so that the
// bandwidth term is that of the whole buffer up and down once.
AllReduceTime tree(double bytes, const ClusterTopology& t) {
  const Bottleneck b = bottleneck(t);
  const double hops_latency = ceil_log2(t.nodes) * t.inter.latency_s + (t.gpus_per_node - 1) * t.intra.latency_s;
  return make_time(AllReduce::Tree, 2.0 * hops_latency, 2.0 * bytes / b.bandwidth_bytes_per_s);
}

// Reduce-scatter inside each node, all-reduce of each GPU's 1/G shard across nodes (each GPU using 1/G of the
// node's network), all-gather inside each node.
AllReduceTime hierarchical(double bytes, const ClusterTopology& t) {
  const int g = t.gpus_per_node, m = t.nodes;
  if (m == 1) return ring(bytes, g, t.intra.latency_s, t.intra.bandwidth_bytes_per_s);
  const double shard = bytes / g, per_gpu_network = t.node_network_bytes_per_s() / g;
  const AllReduceTime across_ring = ring(shard, m, t.inter.latency_s, per_gpu_network);
  const AllReduceTime across_tree =
      make_time(AllReduce::Tree, 2.0 * ceil_log2(m) * t.inter.latency_s, 2.0 * shard / per_gpu_network);
  const AllReduceTime& across = across_tree.time_s < across_ring.time_s ? across_tree : across_ring;
  const double inside_latency = g > 1 ? 2.0 * (g - 1) * t.intra.latency_s : 0.0;
  const double inside_bandwidth = g > 1 ? 2.0 * (g - 1) / g * bytes / t.intra.bandwidth_bytes_per_s : 0.0;
  return make_time(AllReduce::Hierarchical, inside_latency + across.latency_s, inside_bandwidth + across.bandwidth_s);
}

}  // namespace

AllReduceTime allreduce_time(AllReduce algo, Count bytes, const ClusterTopology& t) {
  const int n = t.devices();
  RIDGE_ASSERT(t.gpus_per_node >= 1 && t.nodes >= 1, "a cluster has at least one node of one device");
  if (n == 1 || bytes <= 0) return make_time(algo == AllReduce::Auto ? AllReduce::Ring : algo, 0, 0);
  RIDGE_ASSERT(t.nodes == 1 || t.inter.bandwidth_bytes_per_s > 0, "several nodes need a network bandwidth");
  RIDGE_ASSERT(t.gpus_per_node == 1 || t.intra.bandwidth_bytes_per_s > 0, "GPUs of a node need a fabric bandwidth");
  const double s = to_double(bytes);
  const Bottleneck b = bottleneck(t);
  switch (algo) {
    case AllReduce::Ring: return ring(s, n, b.latency_s, b.bandwidth_bytes_per_s);
    case AllReduce::Tree: return tree(s, t);
    case AllReduce::Hierarchical: return hierarchical(s, t);
    case AllReduce::ParameterServer:  // one device gathers N-1 gradients, then sends N-1 updates over its link
      return make_time(AllReduce::ParameterServer, 2.0 * b.latency_s, 2.0 * (n - 1) * s / b.bandwidth_bytes_per_s);
    case AllReduce::Auto: break;
  }
  AllReduceTime best = ring(s, n, b.latency_s, b.bandwidth_bytes_per_s);
  for (const AllReduceTime& other : {tree(s, t), hierarchical(s, t)})
    if (other.time_s < best.time_s) best = other;
  return best;
}

double allreduce_bus_bandwidth(Count bytes, double time_s, int devices) {
  RIDGE_ASSERT(time_s > 0 && devices >= 1, "bus bandwidth needs a positive time and device count");
  return to_double(bytes) / time_s * 2.0 * (devices - 1) / devices;
}

const Interconnect& gpu_link(const Device& d, bool inside_node) {
  const Interconnect* l = inside_node ? d.interconnect("nvlink") : d.interconnect("network");
  if (!l && inside_node) l = d.interconnect("infinity-fabric");
  if (!l) l = d.interconnect("pcie");
  if (!l) throw Error(fmt::format("device {} has no interconnect in its file (needed for more than one GPU)", d.id));
  return *l;
}

double ring_allreduce_time_s(Count bytes, int devices, const Interconnect& link) {
  ClusterTopology t;
  t.gpus_per_node = devices;
  t.nodes = 1;
  t.intra = link;
  return allreduce_time(AllReduce::Ring, bytes, t).time_s;
}

double all_to_all_time_s(double bytes, int devices, const Interconnect& link) {
  const double n = devices;
  return (n - 1) * link.latency_s + (n - 1) / n * bytes / link.bandwidth_bytes_per_s;
}

}  // namespace ridge
