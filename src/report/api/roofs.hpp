// The ceilings of a device on a roofline chart, built one way for every chart that draws them (`ridge roofline`,
// the HTML report, `ridge ingest`'s kernel and hierarchical rooflines).
#pragma once

#include <string>
#include <string_view>

#include "ridge/chart.hpp"
#include "ridge/device.hpp"

namespace ridge::report {

/// A precision as charts and titles print it: "FP16", "TF32".
std::string precision_label(Precision p);

/// The roofs of `d`. Compute: `headline` first (it defines the ridge point), then every other precision the device
/// has, labelled upper case ("FP16 tensor" where the rate is at least 4x the fp32 rate: CUDA cores do at most 2x
/// fp32 in fp16). Memory: `first_level` first, then DRAM and, with `caches`, the cache levels the device file has
/// (L3, L2, L1, outermost first), labelled upper case ("DRAM", "L2").
chart::RoofDevice roof_device(const Device& d, Precision headline, bool caches = true,
                              std::string_view first_level = "dram");

}  // namespace ridge::report
