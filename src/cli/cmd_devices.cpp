// `ridge devices`: the device database (data/devices/*.json, --devices DIR, and this machine).
#include <memory>

#include "commands.hpp"
#include "ridge/api.hpp"

namespace ridge::cli {

CLI::App* add_devices_command(CLI::App& app) {
  struct DevicesArgs {
    report::DevicesRequest req;
    OutputOptions out;
  };
  auto args = std::make_shared<DevicesArgs>();
  CLI::App* cmd = app.add_subcommand("devices", "List the device database: peaks per precision, bandwidths, memory");
  cmd->add_option("--devices-dir,--devices", args->req.device_dirs, "Also load device files (*.json) from DIR")
      ->type_name("DIR");
  args->out.add_to(cmd);
  cmd->callback([args] { args->out.emit(report::devices_report(args->req)); });
  return cmd;
}

}  // namespace ridge::cli
