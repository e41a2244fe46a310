// ridge run: execute a model once on this CPU (ONNX files with their real weights) on given inputs and compare
// the outputs with expected tensors, e.g. an ONNX test_data_set (input_0.pb -> output_0.pb).
#include <fmt/format.h>

#include <filesystem>

#include "commands.hpp"
#include "ridge/error.hpp"
#include "ridge/load.hpp"
#include "ridge/measure.hpp"

namespace ridge::cli {
namespace {

using report::Cell;
using report::Unit;

struct RunArgs {
  std::string model, save_dir;
  std::vector<std::string> inputs, expected;
  double rtol = 1e-3, atol = 1e-7;
  int64_t batch = 1;
  int threads = 0;
  uint64_t seed = 42;
  OutputOptions out;
};

/// Pairs tensors read from files with graph values: by the proto's name when it names one, else by position.
std::vector<std::pair<std::string, HostTensor>> bind_by_name_or_order(const std::vector<std::string>& files,
                                                                      const std::vector<std::string>& names) {
  std::vector<std::pair<std::string, HostTensor>> out;
  for (size_t i = 0; i < files.size(); ++i) {
    auto [name, t] = read_tensor_pb(files[i]);
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      if (i >= names.size())
        throw UsageError(fmt::format("{}: the model has only {} such value(s)", files[i], names.size()));
      name = names[i];
    }
    out.emplace_back(name, std::move(t));
  }
  return out;
}

std::vector<std::string> value_names(const Graph& g, const std::vector<int>& ids) {
  std::vector<std::string> names;
  for (int id : ids) names.push_back(g.value(id).name);
  return names;
}

void run(const RunArgs& a) {
  LoadOptions lo;
  lo.batch = a.batch;
  ExecOptions eo;
  eo.threads = a.threads;
  eo.seed = a.seed;
  std::vector<std::string> notes;
  if (!a.inputs.empty()) {  // bind the inputs' shapes; the names come from a first import
    const Graph probe = load_model(a.model, lo);
    for (auto& [name, t] : bind_by_name_or_order(a.inputs, value_names(probe, probe.inputs))) {
      lo.input_shapes.emplace_back(name, t.shape);
      eo.inputs[name] = std::move(t);
    }
  }
  const Graph g = load_model(a.model, lo);
  if (is_model_file(a.model)) eo.weights = read_onnx_weights(a.model, &notes);
  else notes.push_back("zoo model: weights are random (seed " + std::to_string(a.seed) + ")");
  const ExecResult r = execute(g, eo);

  report::Document doc;
  doc.title = fmt::format("{} run on this CPU", g.name);
  report::Table outs{"outputs", "Outputs", {{"name", "output", Unit::None}, {"shape", "shape", Unit::None},
                                            {"expected_shape", "expected shape", Unit::None},
                                            {"max_abs_diff", "max |diff|", Unit::None},
                                            {"max_rel_diff", "max rel diff", Unit::None},
                                            {"mismatches", "outside tolerance", Unit::Count},
                                            {"status", "status", Unit::None}}, {}, {}};
  std::vector<std::string> failures;
  auto expected = bind_by_name_or_order(a.expected, value_names(g, g.outputs));
  for (const auto& [name, t] : r.outputs) {
    auto e = std::find_if(expected.begin(), expected.end(), [&](const auto& x) { return x.first == name; });
    if (e == expected.end()) {
      outs.add_row({Cell::text(name), Cell::text(to_string(t.shape)), Cell::empty(), Cell::empty(), Cell::empty(),
                    Cell::empty(), Cell::text("computed")});
      continue;
    }
    const Comparison c = compare_tensors(t, e->second, a.rtol, a.atol);
    const std::string status = !c.shape_matches ? "shape mismatch" : c.passed ? "pass" : "FAIL";
    outs.add_row({Cell::text(name), Cell::text(to_string(t.shape)), Cell::text(to_string(e->second.shape)),
                  Cell::real(c.max_abs_diff), Cell::real(c.max_rel_diff), Cell::count(c.mismatches),
                  Cell::text(status)});
    if (!c.passed)
      failures.push_back(fmt::format("output '{}': {} ({} of {} elements outside rtol {} atol {}, max |diff| {:.3g})",
                                     name, status, to_string(c.mismatches), to_string(c.elements), a.rtol, a.atol,
                                     c.max_abs_diff));
  }
  report::Table steps{"steps", "Steps", {{"name", "step", Unit::None}, {"op", "op", Unit::None},
                                         {"status", "status", Unit::None}, {"kernel", "kernel", Unit::None},
                                         {"reason", "reason", Unit::None}}, {}, {}};
  int not_executed = 0;
  for (const auto& s : r.steps) {
    not_executed += s.status == StepStatus::NotExecuted;
    steps.add_row({Cell::text(s.name), Cell::text(s.op), Cell::text(std::string(step_status_name(s.status))),
                   Cell::text(s.kernel), Cell::text(s.reason)});
  }
  doc.blocks.push_back(std::move(outs));
  doc.blocks.push_back(std::move(steps));
  doc.notes = g.notes;
  doc.notes.insert(doc.notes.end(), notes.begin(), notes.end());
  doc.notes.insert(doc.notes.end(), r.notes.begin(), r.notes.end());
  if (not_executed > 0) doc.notes.push_back(fmt::format("{} step(s) not executed: outputs are not meaningful", not_executed));
  doc.extra["not_executed"] = not_executed;
  doc.extra["passed"] = failures.empty() && not_executed == 0;
  a.out.emit(doc);

  if (!a.save_dir.empty()) {
    std::filesystem::create_directories(a.save_dir);
    int i = 0;
    for (int id : g.outputs)
      write_tensor_pb(a.save_dir + "/output_" + std::to_string(i++) + ".pb", g.value(id).name,
                      r.outputs.at(g.value(id).name));
  }
  if (!failures.empty()) throw Error(failures.front() + (failures.size() > 1 ? fmt::format(" (and {} more)", failures.size() - 1) : ""));
  if (not_executed > 0 && !expected.empty())
    throw Error(fmt::format("{}: {} step(s) not executed, outputs cannot be compared", a.model, not_executed));
}

}  // namespace

CLI::App* add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Execute a model once (ONNX with its real weights) and compare outputs");
  auto a = std::make_shared<RunArgs>();
  cmd->add_option("MODEL", a->model, "Path to an .onnx file (weights read from it) or a zoo name")->required();
  cmd->add_option("--input,-i", a->inputs, "Input tensor file (ONNX TensorProto .pb), in graph-input order")
      ->check(CLI::ExistingFile);
  cmd->add_option("--output,-o", a->expected, "Expected output tensor file (.pb), in graph-output order")
      ->check(CLI::ExistingFile);
  cmd->add_option("--rtol", a->rtol, "Relative tolerance of the comparison")->capture_default_str();
  cmd->add_option("--atol", a->atol, "Absolute tolerance of the comparison")->capture_default_str();
  cmd->add_option("--batch,-b", a->batch, "Batch size when no input file binds the shapes")->check(CLI::PositiveNumber);
  cmd->add_option("--threads,-t", a->threads, "oneDNN threads (0 = runtime default)")->check(CLI::Range(0, 4096));
  cmd->add_option("--seed", a->seed, "Seed of random inputs/weights that no file provides")->capture_default_str();
  cmd->add_option("--save", a->save_dir, "Write the outputs as DIR/output_N.pb")->type_name("DIR");
  a->out.add_to(cmd);
  cmd->callback([a] { run(*a); });
  return cmd;
}

}  // namespace ridge::cli
