// Where ridge's shipped data lives (device, interconnect, calibration and GPU architecture files).
#pragma once
#include <string>

namespace ridge {

/// A built-in data folder ("devices", "interconnects", "calibrations", "gpu"): $RIDGE_DATA_DIR/FOLDER when set, else
/// the source tree's data/FOLDER when it exists, else the installed share/ridge/FOLDER.
std::string builtin_data_dir(const std::string& folder);

}  // namespace ridge
