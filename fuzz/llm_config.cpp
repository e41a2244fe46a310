// libFuzzer target for the Hugging Face config.json reader (scripts/fuzz-llm-config.sh builds and runs it): any
// bytes give an LlmConfig or a one-line ridge::Error, and a small accepted config builds its training-style and
// serving graphs (or refuses with ridge::Error). A crash, a sanitizer report, a hang or any other exception
// escaping is a bug.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "ridge/cost.hpp"
#include "ridge/error.hpp"
#include "ridge/llm.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  try {
    ridge::LlmConfig c = ridge::parse_llm_config(j, "fuzz-input");
    // Graphs have one node group per layer, head and expert: only small configs are built.
    if (c.num_layers > 3 || c.hidden_size > 128 || c.vocab_size > 1024 || c.num_experts > 8 || c.num_heads > 16 ||
        c.intermediate_size > 256 || c.dense_intermediate_size > 256 || c.kv_lora_rank > 64 || c.q_lora_rank > 64)
      return 0;
    c.name = "fuzz";
    ridge::LlmShape s;
    s.tokens = 3;
    (void)ridge::estimate(ridge::build_llm(c, s));
    s.serving = true;
    s.tokens = 1;
    s.past = 4;
    s.latent_kv = size % 2 == 0;
    (void)ridge::estimate(ridge::build_llm(c, s));
    (void)ridge::llm_params(c);
  } catch (const ridge::Error&) {
  }
  return 0;
}
