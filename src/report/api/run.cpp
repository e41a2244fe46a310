// One execution of a model on this CPU, compared with expected outputs (`ridge run`).
#include <fmt/format.h>

#include <algorithm>

#include "ridge/api.hpp"
#include "ridge/error.hpp"

namespace ridge::report {
namespace {

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

}  // namespace

RunResult run_model(const RunRequest& a) {
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
  if (is_onnx_file(a.model)) eo.weights = read_onnx_weights(a.model, &notes);
  else notes.push_back("zoo model: weights are random (seed " + std::to_string(a.seed) + ")");
  RunResult out{g, execute(g, eo), {}, std::nullopt};
  const ExecResult& r = out.exec;

  Document& doc = out.doc;
  doc.title = fmt::format("{} run on this CPU", g.name);
  Table outs{"outputs", "Outputs", {{"name", "output", Unit::None}, {"shape", "shape", Unit::None},
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
  Table steps{"steps", "Steps", {{"name", "step", Unit::None}, {"op", "op", Unit::None},
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
  if (!failures.empty())
    out.failure = failures.front() + (failures.size() > 1 ? fmt::format(" (and {} more)", failures.size() - 1) : "");
  else if (not_executed > 0 && !expected.empty())
    out.failure = fmt::format("{}: {} step(s) not executed, outputs cannot be compared", a.model, not_executed);
  return out;
}

}  // namespace ridge::report
