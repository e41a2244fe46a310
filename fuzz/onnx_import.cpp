// libFuzzer target for the ONNX importer: any bytes either import or fail with ridge::Error. A crash, a
// sanitizer report, a hang or any other exception escaping import_onnx_bytes is a bug. ONNX's own inference
// runs in a forked child (slow under the fuzzer), so only one input in eight goes through it; the rest
// exercise ridge's rules alone.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ridge/error.hpp"
#include "ridge/onnx_import.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ridge::LoadOptions opts;
  opts.batch = 2;
  opts.seq_len = 16;
  try {
    const ridge::OnnxImportOptions engines{size % 8 == 0, true};
    ridge::import_onnx_bytes(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz-input", opts, engines);
  } catch (const ridge::Error&) {
  }
  return 0;
}
