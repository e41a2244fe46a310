// The device database as a document (`ridge devices`).
#include <fmt/format.h>

#include "ridge/api.hpp"
#include "ridge/error.hpp"

namespace ridge::report {
namespace {

// The measured ceilings of the devices that have them, next to the peak each is measured against.
Table achieved_table(const std::vector<Device>& devices) {
  Table t{"achieved", "Measured ceilings (the best a library kernel reached on a real device; sources in the file)",
          {}, {}, {}};
  t.columns = {{"id", "device", Unit::None},
               {"ceiling", "ceiling", Unit::None},
               {"achieved_flop_per_s", "achieved", Unit::FlopPerSecond},
               {"peak_flop_per_s", "peak", Unit::FlopPerSecond},
               {"achieved_bytes_per_s", "achieved", Unit::BytePerSecond},
               {"peak_bytes_per_s", "peak", Unit::BytePerSecond},
               {"percent_of_peak", "of peak", Unit::Percent}};
  auto row = [&](const Device& d, std::string ceiling, double rate, double peak, bool flops) {
    const Unit u = flops ? Unit::FlopPerSecond : Unit::BytePerSecond, other = flops ? Unit::BytePerSecond : Unit::FlopPerSecond;
    const Cell achieved = Cell::real(rate, u), at_peak = Cell::real(peak, u), none = Cell::empty(other);
    std::vector<Cell> r = {Cell::text(d.id), Cell::text(std::move(ceiling))};
    if (flops) r.insert(r.end(), {achieved, at_peak, none, none});
    else r.insert(r.end(), {none, none, achieved, at_peak});
    r.push_back(Cell::real(100 * rate / peak, Unit::Percent));
    t.add_row(std::move(r));
  };
  for (const Device& d : devices) {
    for (const auto& [p, rate] : d.achieved_flops)
      row(d, std::string(precision_info(p).name), rate, d.peak(p).value_or(0), true);
    for (const auto& [level, rate] : d.achieved_bandwidth_bytes_per_s)
      row(d, level, rate, d.level_bandwidth(level).value_or(0), false);
  }
  return t;
}

Document devices_document(const std::vector<Device>& devices, const std::string& machine_note) {
  Table t{"devices", "", {}, {}, {}};
  t.columns = {{"id", "device", Unit::None}, {"aliases", "aliases", Unit::None}};
  for (const auto& p : precisions())
    t.columns.push_back({"peak_" + std::string(p.name) + "_flop_per_s", std::string(p.name), Unit::FlopPerSecond});
  t.columns.push_back({"dram_bytes_per_s", "DRAM BW", Unit::BytePerSecond});
  t.columns.push_back({"l2_bandwidth_bytes_per_s", "L2 BW", Unit::BytePerSecond});
  t.columns.push_back({"l1_bandwidth_bytes_per_s", "L1 BW", Unit::BytePerSecond});
  t.columns.push_back({"ridge_fp32_flop_per_byte", "ridge fp32", Unit::FlopPerByte});
  t.columns.push_back({"memory_bytes", "memory", Unit::Byte});
  t.columns.push_back({"sm_count", "SMs/CUs", Unit::Count});
  t.columns.push_back({"name", "name", Unit::None});
  nlohmann::json full = nlohmann::json::array();
  for (const Device& d : devices) {
    std::vector<Cell> row = {Cell::text(d.id), Cell::text(fmt::format("{}", fmt::join(d.aliases, ", ")))};
    for (const auto& p : precisions()) {
      auto v = d.peak(p.id);
      row.push_back(v ? Cell::real(*v, Unit::FlopPerSecond) : Cell::empty(Unit::FlopPerSecond));
    }
    const auto dram = d.level_bandwidth("dram");
    const auto fp32 = d.peak(Precision::FP32);
    row.push_back(dram ? Cell::real(*dram, Unit::BytePerSecond) : Cell::empty());
    for (const char* level : {"l2", "l1"}) {
      const auto bw = d.level_bandwidth(level);
      row.push_back(bw ? Cell::real(*bw, Unit::BytePerSecond) : Cell::empty(Unit::BytePerSecond));
    }
    row.push_back(fp32 && dram ? Cell::real(ridge_point(*fp32, *dram), Unit::FlopPerByte) : Cell::empty());
    row.push_back(d.memory_bytes > 0 ? Cell::count(d.memory_bytes, Unit::Byte) : Cell::empty(Unit::Byte));
    row.push_back(d.sm_count > 0 ? Cell::count(d.sm_count) : Cell::empty());
    row.push_back(Cell::text(d.name));
    t.add_row(std::move(row));
    full.push_back(device_to_json(d));
  }
  Document doc;
  doc.title = "Devices (dense peaks; every number's source is in its data file and in --format json)";
  doc.blocks.push_back(std::move(t));
  if (Table m = achieved_table(devices); !m.rows.empty()) doc.blocks.push_back(std::move(m));
  doc.extra["devices"] = full;  // JSON carries whole device records: peak_flops by precision, bandwidth by level
  doc.notes.push_back("built-in devices: " + builtin_devices_dir() + "; add your own with --devices DIR");
  if (!machine_note.empty()) doc.notes.push_back(machine_note);
  doc.notes.push_back("k80 is one GK210 die (one CUDA device), k80-board both dies; mi250x is one GCD");
  return doc;
}

}  // namespace

Document devices_report(const DevicesRequest& req) {
  std::vector<Device> devices = load_devices(req.device_dirs);
  std::string note;
  const std::string path = req.machine_profile.empty() ? machine_profile_path() : req.machine_profile;
  try {
    if (auto machine = load_machine_device(path)) devices.push_back(*machine);
    else note = "this machine: no profile at " + path + "; run `ridge machine` first to add it as device 'machine'";
  } catch (const Error& e) {
    note = std::string("this machine: not listed: ") + e.what();
  }
  return devices_document(devices, note);
}

}  // namespace ridge::report
