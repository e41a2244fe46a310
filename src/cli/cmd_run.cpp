// ridge run: execute a model once on this CPU (ONNX files with their real weights) on given inputs and compare
// the outputs with expected tensors, e.g. an ONNX test_data_set (input_0.pb -> output_0.pb).
#include <filesystem>

#include "commands.hpp"
#include "ridge/api.hpp"
#include "ridge/error.hpp"
#include "ridge/load.hpp"
#include "ridge/measure.hpp"

namespace ridge::cli {
namespace {

struct RunArgs {
  report::RunRequest req;
  std::string save_dir;
  OutputOptions out;
};

void run(const RunArgs& a) {
  const report::RunResult r = report::run_model(a.req);
  a.out.emit(r.doc);
  if (!a.save_dir.empty()) {
    std::filesystem::create_directories(a.save_dir);
    int i = 0;
    for (int id : r.graph.outputs)
      write_tensor_pb(a.save_dir + "/output_" + std::to_string(i++) + ".pb", r.graph.value(id).name,
                      r.exec.outputs.at(r.graph.value(id).name));
  }
  if (r.failure) throw Error(*r.failure);
}

}  // namespace

CLI::App* add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Execute a model once (ONNX with its real weights) and compare outputs");
  auto a = std::make_shared<RunArgs>();
  cmd->add_option("MODEL", a->req.model, "Path to an .onnx file (weights read from it) or a zoo name")->required();
  cmd->add_option("--input,-i", a->req.inputs, "Input tensor file (ONNX TensorProto .pb), in graph-input order")
      ->check(CLI::ExistingFile);
  cmd->add_option("--output,-o", a->req.expected, "Expected output tensor file (.pb), in graph-output order")
      ->check(CLI::ExistingFile);
  cmd->add_option("--rtol", a->req.rtol, "Relative tolerance of the comparison")->capture_default_str();
  cmd->add_option("--atol", a->req.atol, "Absolute tolerance of the comparison")->capture_default_str();
  cmd->add_option("--batch,-b", a->req.batch, "Batch size when no input file binds the shapes")->check(CLI::PositiveNumber);
  cmd->add_option("--threads,-t", a->req.threads, "oneDNN threads (0 = runtime default)")->check(CLI::Range(0, 4096));
  cmd->add_option("--seed", a->req.seed, "Seed of random inputs/weights that no file provides")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--save", a->save_dir, "Write the outputs as DIR/output_N.pb")->type_name("DIR");
  a->out.add_to(cmd);
  cmd->callback([a] { run(*a); });
  return cmd;
}

}  // namespace ridge::cli
