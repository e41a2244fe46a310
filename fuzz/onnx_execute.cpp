// libFuzzer target for the executor (`ridge run`, `ridge measure`): any bytes that import either run or fail with
// ridge::Error. The file's payloads are read as `ridge run` reads them (read_onnx_weights, from a file written for
// it); each input runs the per-layer program; one in three also the end-to-end (fused) program, and one in three a
// training step (forward, backward). A crash, a sanitizer report, a hang, or any other exception escaping (a
// dnnl::error, std::bad_alloc, ...) is a bug: the CLI would print an internal error.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

#include "ridge/error.hpp"
#include "ridge/measure.hpp"
#include "ridge/onnx_import.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ridge::LoadOptions load;
  load.batch = 1;
  load.seq_len = 4;
  ridge::Graph g;
  try {
    g = ridge::import_onnx_bytes(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz-input", load,
                                 ridge::OnnxImportOptions{false, true});
  } catch (const ridge::Error&) {
    return 0;
  }
  ridge::ExecOptions opts;
  static const std::string file = "/tmp/ridge-fuzz-exec-" + std::to_string(getpid()) + ".onnx";
  std::ofstream(file, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), size);
  try {
    opts.weights = ridge::read_onnx_weights(file);
  } catch (const ridge::Error&) {
  }
  opts.threads = 1;
  opts.available_bytes = ridge::Count(int64_t{256} << 20);  // the memory check refuses what the fuzzer cannot hold
  try {
    ridge::execute(g, opts);
    if (size % 3 == 1) {
      ridge::ExecOptions fused = opts;
      fused.fuse = true;
      ridge::execute(g, fused);
    } else if (size % 3 == 2) {
      ridge::parameter_gradients(g, opts);
    }
  } catch (const ridge::Error&) {
  }
  return 0;
}
