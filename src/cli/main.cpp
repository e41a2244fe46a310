// ridge: what a neural network costs and why. One choke point for errors: ridge::Error -> one line, exit 1;
// usage errors -> exit 2; anything unexpected -> one line, exit 1 (never a stack trace).
#include <csignal>
#include <cstring>
#include <iostream>
#include <new>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.hpp"
#include "ridge/error.hpp"
#include "ridge/text.hpp"

namespace {

// The visible commands, as `ridge --help` lists them.
std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::App* sub : app.get_subcommands({}))
    if (!sub->get_group().empty()) out.push_back(sub->get_name());
  return out;
}
// "list, summary, ...".
std::string command_list(const CLI::App& app) { return fmt::format("{}", fmt::join(command_names(app), ", ")); }

// The subcommand argv names (argv[1]), else the app itself.
const CLI::App& command_of(const CLI::App& app, char** argv) {
  for (const CLI::App* sub : app.get_subcommands({}))
    if (sub->check_name(argv[1])) return *sub;
  return app;
}

// A command line CLI11 could not parse: one line, the complaint, then where the options of the command in argv
// are explained; exit status 2.
int parse_error(const std::string& message, char** argv) {
  const std::string help = argv[1][0] != '-' ? "ridge " + std::string(argv[1]) + " --help" : "ridge --help";
  std::cerr << "ridge: usage error: " << ridge::printable(message) << " (run `" << ridge::printable(help) << "`)\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // A closed stdout (`ridge ... | head -1`) must not kill ridge before it writes its files: writes to it fail
  // quietly instead, and the exit status stays 0.
  std::signal(SIGPIPE, SIG_IGN);
  const std::string version = "ridge " + std::string(ridge::report::ridge_version());
  CLI::App app{
      "ridge — FLOPs, parameters and memory of neural networks, layer by layer; measured next to estimated;\n"
      "placed on the hardware's roofline with a time prediction.\n\n"
      "MODEL is a built-in zoo name (see `ridge list`), a path to an .onnx file, or a Hugging Face config.json."};
  app.name("ridge");
  app.require_subcommand(1);
  app.set_version_flag("--version", version);
  app.footer("Run `ridge COMMAND --help` for the options of one command.");
  for (const auto& c : ridge::cli::commands()) c.add(app);
  for (CLI::App* sub : app.get_subcommands({})) sub->set_version_flag("--version", version);
  if (argc < 2) {
    std::cerr << "ridge: usage error: no command given (commands: " << command_list(app)
              << "; run `ridge --help`)\n";
    return 2;
  }
  auto known = [&](const char* name) {
    for (const CLI::App* sub : app.get_subcommands({}))
      if (sub->check_name(name)) return true;
    return false;
  };
  if (argv[1][0] != '-' && !known(argv[1])) {
    std::cerr << "ridge: usage error: unknown command '" << ridge::printable(argv[1]) << "'"
              << ridge::cli::meant_hint(argv[1], command_names(app), "", 2) << "; commands: " << command_list(app)
              << "; run `ridge --help`\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    std::cout << e.what() << "\n";
    return 0;
  } catch (const CLI::ConversionError& e) {
    return parse_error(ridge::cli::conversion_message(command_of(app, argv), e.what()), argv);
  } catch (const CLI::ExtrasError& e) {
    // Arguments the command did not take: name the first unknown option and the ones it may have meant.
    const CLI::App& cmd = command_of(app, argv);
    std::vector<std::string> extras = cmd.remaining();
    if (extras.empty()) extras = app.remaining();
    return parse_error(extras.empty() ? ridge::cli::usage_message(e.what())
                                      : ridge::cli::unexpected_arguments_message(cmd, extras),
                       argv);
  } catch (const CLI::ParseError& e) {
    return parse_error(ridge::cli::usage_message(e.what()), argv);
  } catch (const ridge::UsageError& e) {
    std::cerr << "ridge: usage error: " << ridge::printable(e.what()) << "\n";
    return 2;
  } catch (const ridge::Error& e) {
    std::cerr << "ridge: error: " << ridge::printable(e.what()) << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "ridge: error: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "ridge: error: " << ridge::printable(e.what()) << "\n";
    return 1;
  }
  return 0;
}
