#include "model_options.hpp"

#include <fmt/format.h>

#include "ridge/error.hpp"

namespace ridge::cli {

Convention convention_flag(const std::string& value) {
  if (auto c = parse_convention(value)) return *c;
  std::string names;
  for (const auto& i : conventions()) names += (names.empty() ? "" : "|") + std::string(i.name);
  throw UsageError(fmt::format("--convention: unknown convention '{}' (use {})", value, names));
}

void ModelOptions::add_to(CLI::App* cmd, bool with_batch) {
  if (with_batch)
    cmd->add_option("--batch,-b", batch, "Batch size (binds the batch axis of zoo and ONNX models)")
        ->capture_default_str();
  cmd->add_option("--input-size", input_size, "Per-sample input size of zoo CNNs, CxHxW (default: the model's)")
      ->type_name("CxHxW");
  cmd->add_option("--seq-len", seq_len, "Sequence length of language models (default: the model's)")
      ->type_name("N")
      ->check(CLI::PositiveNumber);  // 0 was taken silently as "the model's"
  cmd->add_option("--input", inputs, "Full shape of a named ONNX input, NAME=1x3x224x224 (repeatable)")
      ->type_name("NAME=SHAPE");
  dtype_flag = cmd->add_option("--dtype", dtype, "Element type of weights and activations: fp32|fp16|bf16|fp64")
      ->capture_default_str();
  cmd->add_flag("--strict", strict, "Fail (exit 1) when any node cannot be costed instead of reporting lower bounds");
}

LoadOptions ModelOptions::load_options(int64_t batch_override) const {
  LoadOptions o;
  o.refuse_unused = true;  // what the user typed must be used
  if (batch_override < 1) throw UsageError(fmt::format("--batch: {} is not a positive batch size", batch_override));
  o.batch = batch_override;
  auto dt = parse_dtype(dtype);
  if (!dt || !is_float(*dt))
    throw UsageError(fmt::format("--dtype: '{}' is not one of fp32, fp16, bf16, fp64", dtype));
  o.dtype = *dt;
  if (!input_size.empty()) {
    try {
      o.input_size = parse_shape(input_size, "--input-size");
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
  }
  if (seq_len < 0) throw UsageError(fmt::format("--seq-len: {} is not a positive length", seq_len));
  if (seq_len > 0) o.seq_len = seq_len;
  for (const auto& spec : inputs) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError(fmt::format("--input: '{}' is not NAME=SHAPE (e.g. input=1x3x224x224)", spec));
    try {
      o.input_shapes.push_back({spec.substr(0, eq), parse_shape(spec.substr(eq + 1), "--input " + spec)});
    } catch (const UsageError&) {
      throw;
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
  }
  return o;
}

LoadOptions ModelOptions::load_options() const { return load_options(batch); }

std::vector<int64_t> parse_batch_list(const std::string& text, const std::string& flag) {
  auto num = [&](const std::string& s) -> int64_t {
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos)
      throw UsageError(fmt::format("{}: '{}' is not a positive integer (in '{}')", flag, s, text));
    if (s.size() > 12)
      throw UsageError(fmt::format("{}: batch size {} is too large (at most 999,999,999,999; in '{}')", flag, s, text));
    int64_t v = std::stoll(s);
    if (v < 1) throw UsageError(fmt::format("{}: batch sizes must be positive (got {} in '{}')", flag, v, text));
    return v;
  };
  std::vector<int64_t> out;
  if (text.find(':') != std::string::npos) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
      size_t c = text.find(':', start);
      parts.push_back(text.substr(start, c == std::string::npos ? std::string::npos : c - start));
      if (c == std::string::npos) break;
      start = c + 1;
    }
    if (parts.size() < 2 || parts.size() > 3)
      throw UsageError(fmt::format("{}: '{}' is not START:STOP[:STEP]", flag, text));
    int64_t a = num(parts[0]), b = num(parts[1]), step = parts.size() == 3 ? num(parts[2]) : 1;
    if (b < a) throw UsageError(fmt::format("{}: '{}' stops before it starts", flag, text));
    if ((b - a) / step > 10000) throw UsageError(fmt::format("{}: '{}' has more than 10000 points", flag, text));
    for (int64_t v = a; v <= b; v += step) out.push_back(v);
  } else {
    size_t start = 0;
    while (true) {
      size_t c = text.find(',', start);
      out.push_back(num(text.substr(start, c == std::string::npos ? std::string::npos : c - start)));
      if (c == std::string::npos) break;
      start = c + 1;
    }
  }
  return out;
}

}  // namespace ridge::cli
