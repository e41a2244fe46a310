// libFuzzer target: format sniffing plus every parser it selects (the path `ridge ingest FILE` takes).
#include "ingest_fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  ridge::ingest::Profile p = ridge::ingest::parse_text(text, "fuzz-input");
  ridge::ingest::derive(p);
  ridge::ingest::totals(p);
  return 0;
}
