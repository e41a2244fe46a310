// Weight payloads and test tensors from ONNX files (the importer keeps shapes only), and output comparison.
#include <onnx/onnx_pb.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ridge/error.hpp"
#include "ridge/measure.hpp"

namespace ridge {

namespace {

std::string slurp(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(what + " '" + path + "': cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

float half_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float f;
  if (exp == 0) f = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31) f = mant ? NAN : INFINITY;
  else f = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  return sign ? -f : f;
}

/// Element values of a TensorProto as floats; `bytes` is its raw payload (raw_data or external data).
std::vector<float> decode(const onnx::TensorProto& t, const std::string& bytes, int64_t count, const std::string& what) {
  std::vector<float> out;
  auto from_raw = [&](auto sample) {
    using T = decltype(sample);
    if (bytes.size() / sizeof(T) != static_cast<uint64_t>(count) || bytes.size() % sizeof(T) != 0)
      throw Error(what + ": payload has " + std::to_string(bytes.size()) + " bytes, expected " +
                  std::to_string(count) + " x " + std::to_string(sizeof(T)));
    out.reserve(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      T v;
      std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
      if constexpr (std::is_same_v<T, uint16_t>) out.push_back(half_to_float(v));
      else out.push_back(static_cast<float>(v));
    }
  };
  using TP = onnx::TensorProto;
  const bool raw = !bytes.empty() || count == 0;
  switch (t.data_type()) {
    case TP::FLOAT:
      if (raw) from_raw(float{});
      else out.assign(t.float_data().begin(), t.float_data().end());
      break;
    case TP::DOUBLE:
      if (raw) from_raw(double{});
      else for (double v : t.double_data()) out.push_back(static_cast<float>(v));
      break;
    case TP::INT64:
      if (raw) from_raw(int64_t{});
      else for (int64_t v : t.int64_data()) out.push_back(static_cast<float>(v));
      break;
    case TP::UINT64:
      if (raw) from_raw(uint64_t{});
      else for (uint64_t v : t.uint64_data()) out.push_back(static_cast<float>(v));
      break;
    case TP::INT32: case TP::INT16: case TP::INT8: case TP::UINT8: case TP::UINT16: case TP::BOOL: case TP::FLOAT16:
      if (raw) {
        switch (t.data_type()) {
          case TP::INT32: from_raw(int32_t{}); break;
          case TP::INT16: from_raw(int16_t{}); break;
          case TP::INT8: from_raw(int8_t{}); break;
          case TP::UINT16: from_raw(uint16_t{}); break;
          case TP::FLOAT16: from_raw(uint16_t{}); break;
          default: from_raw(uint8_t{}); break;
        }
        if (t.data_type() == TP::UINT16)  // from_raw treated uint16 as half; undo for plain integers
          for (int64_t i = 0; i < count; ++i) {
            uint16_t v;
            std::memcpy(&v, bytes.data() + i * 2, 2);
            out[i] = v;
          }
      } else {
        for (int32_t v : t.int32_data())
          out.push_back(t.data_type() == TP::FLOAT16 ? half_to_float(static_cast<uint16_t>(v)) : static_cast<float>(v));
      }
      break;
    default:
      throw Error(what + ": tensor data type " + std::to_string(t.data_type()) + " is not supported");
  }
  if (static_cast<int64_t>(out.size()) != count)
    throw Error(what + ": has " + std::to_string(out.size()) + " values, its dims say " + std::to_string(count));
  return out;
}

/// Decodes a TensorProto, reading external data relative to `dir`. nullopt when external data is missing.
std::optional<HostTensor> to_host(const onnx::TensorProto& t, const std::string& dir, const std::string& what) {
  HostTensor h;
  int64_t count = 1;
  for (auto d : t.dims()) {
    if (d < 0) throw Error(what + ": negative dim");
    if (__builtin_mul_overflow(count, d, &count)) throw Error(what + ": its dims hold more than 2^63 elements");
    h.shape.dims.push_back(d);
  }
  std::string bytes = t.raw_data();
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    int64_t offset = 0, length = -1;
    auto number = [&](const std::string& key, const std::string& text) {  // a byte count: digits only
      int64_t v = -1;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || end != text.data() + text.size() || v < 0)
        throw Error(what + ": external data " + key + " '" + text + "' is not a byte count");
      return v;
    };
    for (const auto& e : t.external_data()) {
      if (e.key() == "location") location = e.value();
      else if (e.key() == "offset") offset = number("offset", e.value());
      else if (e.key() == "length") length = number("length", e.value());
    }
    const std::filesystem::path file = std::filesystem::path(dir) / location;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) return std::nullopt;  // a directory reads as endless
    std::ifstream in(file, std::ios::binary);
    if (!in) return std::nullopt;
    in.seekg(0, std::ios::end);
    const int64_t size = in.tellg();
    if (offset > size) return count == 0 ? std::optional(h) : std::nullopt;
    if (length < 0) length = size - offset;
    if (length > size - offset || length == 0) return count == 0 ? std::optional(h) : std::nullopt;
    // Read no more than the dims can use (8 bytes per element at most); decode() checks the exact size.
    if (length / 8 > count) throw Error(what + ": external data of " + std::to_string(length) +
                                        " bytes for " + std::to_string(count) + " elements");
    bytes.resize(length);
    in.seekg(offset);
    in.read(bytes.data(), length);
  }
  h.data = decode(t, bytes, count, what);
  return h;
}

/// The payloads of a graph's initializers and Constant nodes, and of those in its nodes' bodies (If, Loop: the
/// importer unrolls known loops, and their copies read the body's payloads under the body's names).
void read_graph_payloads(const onnx::GraphProto& graph, const std::string& dir, const std::string& path,
                         TensorMap& out, int& missing) {
  for (const auto& init : graph.initializer()) {
    auto h = to_host(init, dir, "model '" + path + "' initializer '" + init.name() + "'");
    if (h) out.emplace(init.name(), std::move(*h));  // an outer graph's name wins over a body's
    else ++missing;
  }
  for (const auto& node : graph.node()) {
    if (node.op_type() != "Constant" || node.output_size() != 1) continue;
    for (const auto& a : node.attribute()) {
      const std::string what = "model '" + path + "' Constant '" + node.output(0) + "'";
      if (a.name() == "value") {
        if (auto h = to_host(a.t(), dir, what)) out.emplace(node.output(0), std::move(*h));
      } else if (a.name() == "value_float") {
        out.emplace(node.output(0), HostTensor{Shape{}, {a.f()}});
      } else if (a.name() == "value_int") {
        out.emplace(node.output(0), HostTensor{Shape{}, {static_cast<float>(a.i())}});
      } else if (a.name() == "value_floats") {
        out.emplace(node.output(0), HostTensor{Shape{{a.floats_size()}}, {a.floats().begin(), a.floats().end()}});
      } else if (a.name() == "value_ints") {
        HostTensor h{Shape{{a.ints_size()}}, {}};
        for (auto v : a.ints()) h.data.push_back(static_cast<float>(v));
        out.emplace(node.output(0), std::move(h));
      }
    }
  }
  for (const auto& node : graph.node())  // bodies after the graph around them
    for (const auto& a : node.attribute()) {
      if (a.has_g()) read_graph_payloads(a.g(), dir, path, out, missing);
      for (const auto& g : a.graphs()) read_graph_payloads(g, dir, path, out, missing);
    }
}

}  // namespace

TensorMap read_onnx_weights(const std::string& path, std::vector<std::string>* notes) {
  onnx::ModelProto model;
  const std::string text = slurp(path, "model");
  if (!model.ParseFromString(text)) throw Error("model '" + path + "': not a valid ONNX protobuf");
  const std::string dir = std::filesystem::path(path).parent_path().string();
  TensorMap out;
  int missing = 0;
  read_graph_payloads(model.graph(), dir, path, out, missing);
  if (missing > 0 && notes)
    notes->push_back(std::to_string(missing) + " initializers of " + path +
                     " have no payload (external data missing or empty): they are random");
  return out;
}

std::pair<std::string, HostTensor> read_tensor_pb(const std::string& path) {
  onnx::TensorProto t;
  if (!t.ParseFromString(slurp(path, "tensor file")))
    throw Error("tensor file '" + path + "': not an ONNX TensorProto");
  auto h = to_host(t, std::filesystem::path(path).parent_path().string(), "tensor file '" + path + "'");
  if (!h) throw Error("tensor file '" + path + "': external data is missing");
  return {t.name(), std::move(*h)};
}

void write_tensor_pb(const std::string& path, const std::string& name, const HostTensor& t) {
  onnx::TensorProto p;
  p.set_name(name);
  p.set_data_type(onnx::TensorProto::FLOAT);
  for (auto d : t.shape.dims) p.add_dims(d);
  p.set_raw_data(std::string(reinterpret_cast<const char*>(t.data.data()), t.data.size() * sizeof(float)));
  std::ofstream out(path, std::ios::binary);
  if (!out || !p.SerializeToOstream(&out)) throw Error("tensor file '" + path + "': cannot write");
}

}  // namespace ridge
