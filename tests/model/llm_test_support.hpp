// Shared by the LLM serving and training tests: a GPU with round numbers and serving options in fp16.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "ridge/error.hpp"
#include "ridge/llm_analysis.hpp"

namespace ridge::llm_test {

/// 1 PFLOP/s fp16 and bf16, 2 TB/s, `memory` bytes, NVLink 400 GB/s (2 us) and a 50 GB/s network (5 us).
inline Device test_gpu(Count memory = Count{80} << 30) {
  Device d;
  d.id = "test-gpu";
  d.peak_flops[Precision::FP16] = 1e15;
  d.peak_flops[Precision::BF16] = 1e15;
  d.bandwidth_bytes_per_s["dram"] = 2e12;
  d.memory_bytes = memory;
  d.interconnects.push_back({"nvlink", 4e11, 2e-6});
  d.interconnects.push_back({"network", 5e10, 5e-6});
  return d;
}

/// Serving `batch` sequences of `prompt` tokens generating `generate`, fp16 weights and KV cache.
inline ServeOptions opts(int64_t batch, int64_t prompt, int64_t generate) {
  ServeOptions o;
  o.batch = batch, o.prompt = prompt, o.generate = generate;
  o.weights = *parse_number_format("fp16");
  o.kv = *parse_number_format("fp16");
  return o;
}

/// Runs `f`, which must throw a ridge::Error whose message contains `want` (`what` names the case when it does not).
template <class F>
void expect_error(F&& f, const std::string& want, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << what << " accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
}

}  // namespace ridge::llm_test
