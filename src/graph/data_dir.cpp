// The shipped data folders, found at run time in the source tree (build-tree runs) or in the installed share/ridge.
#include "ridge/data_dir.hpp"

#include <cstdlib>
#include <filesystem>

namespace ridge {

std::string builtin_data_dir(const std::string& folder) {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("RIDGE_DATA_DIR"); env && *env) return (fs::path(env) / folder).string();
  if (fs::is_directory(fs::path(RIDGE_SOURCE_DATA_DIR) / folder))
    return (fs::path(RIDGE_SOURCE_DATA_DIR) / folder).string();
  return (fs::path(RIDGE_INSTALL_DATA_DIR) / folder).string();
}

}  // namespace ridge
