// ridge: what a neural network costs and why. One choke point for errors: ridge::Error -> one line, exit 1;
// usage errors -> exit 2; anything unexpected -> one line, exit 1 (never a stack trace).
#include <iostream>
#include <new>

#include "commands.hpp"
#include "ridge/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "ridge — FLOPs, parameters and memory of neural networks, layer by layer; measured next to estimated;\n"
      "placed on the hardware's roofline with a time prediction.\n\n"
      "MODEL is a built-in zoo name (see `ridge list`) or a path to an .onnx file."};
  app.name("ridge");
  app.require_subcommand(1);
  app.set_version_flag("--version", "ridge 0.1.0");
  app.footer("Run `ridge COMMAND --help` for the options of one command.");
  for (const auto& c : ridge::cli::commands()) c.add(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "ridge: usage error: " << e.what() << "\n(run `ridge --help`)\n";
    return 2;
  } catch (const ridge::UsageError& e) {
    std::cerr << "ridge: usage error: " << e.what() << "\n";
    return 2;
  } catch (const ridge::Error& e) {
    std::cerr << "ridge: error: " << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "ridge: error: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "ridge: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
