// ridge list: the built-in zoo with input shapes and parameter counts.
#include "commands.hpp"
#include "ridge/cost.hpp"
#include "ridge/load.hpp"

namespace ridge::cli {

CLI::App* add_list_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("list", "List the built-in model zoo with input shapes and parameter counts");
  auto out = std::make_shared<OutputOptions>();
  out->add_to(cmd);
  cmd->callback([out] {
    report::Table t;
    t.key = "models";
    t.title = "Built-in models (MODEL argument of every command; or pass a path to an .onnx file or a Hugging Face config.json)";
    t.columns = {{"name", "name"},
                 {"family", "family"},
                 {"input", "input (per sample)"},
                 {"params", "params", report::Unit::Param, true},
                 {"reference", "reference"}};
    for (const auto& e : zoo_entries()) {
      Graph g = build_zoo_model(e.name, LoadOptions{});
      Count params = estimate(g).total.params;
      std::string input = e.sequence_input ? "tokens x " + std::to_string(e.input[0]) : to_string(e.input);
      t.add_row({report::Cell::text(e.name), report::Cell::text(e.family), report::Cell::text(input),
                 report::Cell::count(params, report::Unit::Param), report::Cell::text(e.reference)});
    }
    report::Document d;
    d.title = "ridge model zoo";
    d.blocks.push_back(std::move(t));
    out->emit(d);
  });
  return cmd;
}

}  // namespace ridge::cli
