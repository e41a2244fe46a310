// libFuzzer target: the torch.profiler Chrome trace reader (scripts/fuzz-ingest.sh builds and runs it).
#include "ingest_fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz_ingest(data, size, {ridge::ingest::Format::TorchTrace});
}
