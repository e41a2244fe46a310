// Model stage, hardware side: the device database. Every device is a human-editable JSON file in
// data/devices/ (one per device, every number with its source); users add their own with --devices DIR, and
// "this machine" comes from the profile `ridge machine` caches. See docs/model.md for the file format.
#pragma once
#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ridge/count.hpp"
#include "ridge/data_dir.hpp"
#include "ridge/dtype.hpp"

namespace ridge {

/// A numeric precision that device peaks are quoted for (dense figures, never 2:4-sparse ones).
enum class Precision : uint8_t { FP64, FP32, TF32, FP16, BF16, INT8 };

/// One row of the precision table: its JSON key, the element type tensors use at it, and what it means.
struct PrecisionInfo {
  Precision id;
  std::string_view name;         ///< JSON key in peak_flops, e.g. "fp16"
  DType dtype;                   ///< element type of tensors at this precision (tf32 stores fp32)
  std::string_view description;  ///< "FP16 inputs on tensor/matrix cores, FP32 accumulate"
};
/// Every precision, in display order.
const std::vector<PrecisionInfo>& precisions();
/// The table row of a precision.
const PrecisionInfo& precision_info(Precision p);
/// Parses a precision name ("fp32", also "float32", "f32", "half", "double", ...); nullopt if unknown.
std::optional<Precision> parse_precision(std::string_view name);

/// A link between devices for gradient exchange: bandwidth per direction and per-message latency.
struct Interconnect {
  std::string name;                   ///< "nvlink", "pcie", "network", "infinity-fabric"
  double bandwidth_bytes_per_s = 0;   ///< one direction, per device
  double latency_s = 0;               ///< per message / per all-reduce step
};

/// Where a device usually sits in a cluster (the vendor's reference node, e.g. DGX A100): the "node" block of a
/// device file. Names refer to interconnect files (data/interconnects/*.json).
struct NodeSpec {
  int gpus_per_node = 0;   ///< devices per node (0: unknown)
  std::string intra_node;  ///< fabric between the devices of a node, e.g. "nvlink3" ("" unknown)
  std::string inter_node;  ///< network between nodes, e.g. "ib-hdr" ("" unknown)
  int nics_per_node = 0;   ///< network adapters per node used by collectives (0: unknown, taken as 1)
};

/// One device: peaks, bandwidths, memory and links, each with the source it came from.
struct Device {
  std::string id;                       ///< file stem, e.g. "v100-sxm2"
  std::string name;                     ///< "NVIDIA Tesla V100 SXM2 16GB"
  std::string vendor;                   ///< "NVIDIA", "AMD", or "" for this machine
  std::string kind;                     ///< "gpu" or "cpu"
  std::vector<std::string> aliases;     ///< short names: "v100", ...
  std::map<Precision, double> peak_flops;              ///< dense FLOP/s per precision (absent: unsupported)
  std::map<std::string, double> bandwidth_bytes_per_s; ///< per memory level: "dram", "l2", "l1", "l3"
  /// Measured ceilings ("achieved" in the file): the best FLOP/s a library GEMM reached per precision and the best
  /// bytes/s a streaming kernel moved per level, on a real device (empty: none measured). Never above the peaks.
  std::map<Precision, double> achieved_flops;
  std::map<std::string, double> achieved_bandwidth_bytes_per_s;
  Count memory_bytes = 0;               ///< device memory capacity (0: unknown)
  int sm_count = 0;                     ///< NVIDIA SMs / AMD CUs (0: unknown)
  double boost_clock_hz = 0;            ///< max boost clock (0: unknown)
  Count l2_bytes = 0;                   ///< L2 cache size (0: unknown)
  double kernel_launch_s = 0;           ///< per-kernel launch overhead assumed by predictions
  std::vector<Interconnect> interconnects;
  NodeSpec node;                        ///< default cluster node (GPUs per node, fabrics)
  std::map<std::string, std::string> sources;  ///< field path ("peak_flops", "interconnects.pcie.latency_s") -> source
  std::string notes;                    ///< free text shown by `ridge devices`
  std::string file;                     ///< where it was loaded from

  /// Peak FLOP/s at a precision, or nullopt when the device has no such unit.
  std::optional<double> peak(Precision p) const;
  /// The measured ceiling at a precision as a fraction of its peak (achieved_flops / peak_flops), or nullopt when
  /// either is missing. fp16 and bf16 share the tensor cores' peak: one stands in for the other when only one was
  /// measured.
  std::optional<double> achieved_fraction(Precision p) const;
  /// Peak FLOP/s at a precision; throws ridge::Error naming `flag` (the option that chose the precision), the
  /// device and the precisions it has.
  double require_peak(Precision p, std::string_view flag = "--precision") const;
  /// Bandwidth of a memory level ("dram", "l2", ...; any case) in bytes/s, or nullopt when the device file has none.
  std::optional<double> level_bandwidth(const std::string& level) const;
  /// Bandwidth of a memory level ("dram", "l2", ...) in bytes/s; throws ridge::Error listing the known levels.
  double bandwidth(const std::string& level) const;
  /// DRAM (main memory) bandwidth in bytes/s; throws ridge::Error naming the device when unknown.
  double dram_bandwidth() const { return bandwidth("dram"); }
  /// The interconnect named `name`, or nullptr.
  const Interconnect* interconnect(std::string_view name) const;
  /// True when `name` is this device's id, name or an alias (case-insensitive); for this machine also "cpu",
  /// "machine", "this-machine" and "local" (what measurements on this CPU record).
  bool matches(const std::string& name) const;
  /// The source recorded for a field path, looking at parents ("peak_flops.fp32" falls back to "peak_flops").
  std::string source_of(const std::string& field) const;
};

/// Parses one device from JSON text; `origin` (a file name) prefixes every error. Checks types, units (all
/// numbers positive and finite), known precision names, and that every number has a source.
Device parse_device(const std::string& text, const std::string& origin);
/// Reads one device file (its stem becomes the id).
Device load_device_file(const std::string& path);
/// The device as JSON: `peak_flops` by precision and `bandwidth_bytes_per_s` by level, plus everything else.
nlohmann::json device_to_json(const Device& d);

/// The built-in device folder: $RIDGE_DATA_DIR/devices when set, else the source tree's data/devices when it
/// exists, else the installed share/ridge/devices.
std::string builtin_devices_dir();
/// Loads the built-in devices plus every *.json in `extra_dirs` (a user device with the id of a built-in one
/// replaces it). Throws ridge::Error naming the file for a bad file, and for names or aliases used twice.
std::vector<Device> load_devices(const std::vector<std::string>& extra_dirs = {});

/// One interconnect file (data/interconnects/*.json): a fabric inside a node or a network between nodes.
struct InterconnectSpec {
  std::string id;                    ///< file stem, e.g. "nvlink3"
  std::string name;                  ///< "NVLink 3 through NVSwitch (A100 SXM4)"
  std::string scope;                 ///< "intra-node" or "inter-node"
  std::vector<std::string> aliases;  ///< other names accepted on the command line
  Interconnect link;                 ///< link.name = id; bandwidth per direction per GPU (intra) or per NIC (inter)
  std::map<std::string, std::string> sources;  ///< field -> source
  std::string notes;
  std::string file;

  /// True when `name` is the id or an alias (case-insensitive).
  bool matches(const std::string& name) const;
};
/// Parses one interconnect from JSON text; `origin` prefixes every error (every number needs a source).
InterconnectSpec parse_interconnect(const std::string& text, const std::string& origin);
/// The built-in interconnects plus every *.json in `extra_dirs` (a user file with a built-in id replaces it).
std::vector<InterconnectSpec> load_interconnects(const std::vector<std::string>& extra_dirs = {});
/// Finds an interconnect by id or alias; throws ridge::Error "FLAG NAME: unknown interconnect (did you mean ...?)".
const InterconnectSpec& find_interconnect(const std::vector<InterconnectSpec>& all, const std::string& name,
                                          const std::string& flag);

/// Where `ridge machine` caches this machine's profile: $XDG_CACHE_HOME/ridge/machine.json or
/// ~/.cache/ridge/machine.json.
std::string machine_profile_path();
/// This machine as a device (id "machine") from a `ridge machine` profile: all-thread peak fp32/fp64 and
/// L1/L2/L3/DRAM bandwidths (the cache format of measure::profile_to_json, or the flat form
/// {"peak_gflops": {"fp32": ..}, "bandwidth_gbs": {"DRAM": ..}}); nullopt when the file does not exist.
/// Throws ridge::Error naming the file when it is malformed or has no DRAM bandwidth.
std::optional<Device> load_machine_device(const std::string& profile_path);

/// Finds a device by id, alias or name (case-insensitive); "machine" (also "this-machine", "local", "cpu") reads the
/// machine profile. Throws ridge::Error with the closest names, or "run `ridge machine` first".
Device find_device(const std::vector<Device>& devices, const std::string& name);

}  // namespace ridge
