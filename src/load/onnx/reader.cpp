// Reading ONNX files: streaming parse, payload dropping, model-level checks, tensor helpers.
#include <fcntl.h>
#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/defs/schema.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <algorithm>
#include <set>

#include "load/onnx/onnx_internal.hpp"
#include "ridge/error.hpp"

namespace ridge::onnx_in {
namespace {

int64_t element_count_or_max(const onnx::TensorProto& t) {
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || d > kMaxDim) return INT64_MAX;
    if (d != 0 && n > INT64_MAX / d) return INT64_MAX;
    n *= d;
  }
  return n;
}

bool is_small(const onnx::TensorProto& t) { return element_count_or_max(t) <= kMaxFoldElements; }

/// Weight payloads are never needed: keep small tensors (shape constants), empty the rest in place.
void drop_payload(onnx::TensorProto& t) {
  if (is_small(t)) return;
  t.clear_raw_data();
  t.clear_float_data();
  t.clear_double_data();
  t.clear_int32_data();
  t.clear_int64_data();
  t.clear_uint64_data();
  t.clear_string_data();
}

void drop_payloads(onnx::GraphProto& g) {
  for (auto& t : *g.mutable_initializer()) drop_payload(t);
  for (auto& n : *g.mutable_node())
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_t()) drop_payload(*a.mutable_t());
      if (a.has_g()) drop_payloads(*a.mutable_g());
      for (auto& sub : *a.mutable_graphs()) drop_payloads(sub);
    }
}

onnx::ModelProto parse_stream(google::protobuf::io::ZeroCopyInputStream& in, const std::string& label) {
  onnx::ModelProto m;
  google::protobuf::io::CodedInputStream coded(&in);
  coded.SetTotalBytesLimit(INT32_MAX);
  if (!m.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
    throw Error(fmt::format("{}: not an ONNX model (protobuf parse failed: truncated or not a ModelProto)", label));
  if (m.has_graph()) drop_payloads(*m.mutable_graph());
  return m;
}

bool is_standard_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

}  // namespace

onnx::ModelProto parse_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(fmt::format("{}: cannot open ({})", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw Error(fmt::format("{}: not a regular file", path));
  }
  if (st.st_size >= INT32_MAX) {
    ::close(fd);
    throw Error(fmt::format("{}: {} bytes is beyond protobuf's 2 GB message limit (store weights as external data)",
                            path, static_cast<long long>(st.st_size)));
  }
  google::protobuf::io::FileInputStream in(fd, 1 << 20);
  in.SetCloseOnDelete(true);
  return parse_stream(in, path);
}

onnx::ModelProto parse_bytes(std::string_view bytes, const std::string& label) {
  if (bytes.size() >= INT32_MAX) throw Error(fmt::format("{}: beyond protobuf's 2 GB message limit", label));
  google::protobuf::io::ArrayInputStream in(bytes.data(), static_cast<int>(bytes.size()));
  return parse_stream(in, label);
}

int check_model(const onnx::ModelProto& m, const std::string& label) {
  if (!m.has_graph() || m.graph().node_size() == 0)
    throw Error(fmt::format("{}: not an ONNX model (no graph or no nodes)", label));
  const auto& known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  std::set<std::string> imported;
  int opset = -1;
  for (const auto& op : m.opset_import()) {
    std::string domain = is_standard_domain(op.domain()) ? "" : op.domain();
    imported.insert(domain);
    auto it = known.find(domain);
    // ai.onnx: up to kMaxOpset, beyond the ONNX library's own schemas (ridge's rules cover what it lacks).
    const int64_t max = domain.empty() ? std::max<int64_t>(kMaxOpset, it == known.end() ? 0 : it->second.second)
                                       : (it == known.end() ? INT64_MAX : it->second.second);
    if (op.version() > max)
      throw Error(fmt::format("{}: opset {} of domain '{}' is newer than ridge knows (max {})", label, op.version(),
                              domain.empty() ? "ai.onnx" : domain, max));
    if (domain.empty()) {
      if (op.version() < 1) throw Error(fmt::format("{}: invalid ai.onnx opset version {}", label, op.version()));
      opset = static_cast<int>(op.version());
    }
  }
  if (m.ir_version() > kMaxIrVersion)
    throw Error(fmt::format("{}: IR version {} is newer than ridge knows (max {})", label, m.ir_version(),
                            kMaxIrVersion));
  if (m.opset_import_size() == 0) opset = 1;  // IR v1/v2 models predate opset_import
  if (opset < 0) opset = 1;
  for (const auto& n : m.graph().node()) {
    std::string domain = is_standard_domain(n.domain()) ? "" : n.domain();
    if (!imported.count(domain) && !(domain.empty() && m.opset_import_size() == 0))
      throw Error(fmt::format("{}: node '{}' ({}) uses domain '{}' that the model does not import", label, n.name(),
                              n.op_type(), domain));
    if (n.op_type().empty()) throw Error(fmt::format("{}: node '{}' has no op_type", label, n.name()));
    if (std::all_of(n.output().begin(), n.output().end(), [](const std::string& o) { return o.empty(); }))
      throw Error(fmt::format("{}: node '{}' ({}) has no output", label, n.name(), n.op_type()));
    // Inputs and outputs the op's schema requires (not optional, not variadic) must be named: the rules and kernels
    // read and write them (the executor fuzzer fed a ReduceMax without its output).
    const onnx::OpSchema* schema = domain.empty() ? onnx::OpSchemaRegistry::Schema(n.op_type(), opset, "") : nullptr;
    if (!schema) continue;
    auto check = [&](const auto& formal, const auto& actual, const char* what) {
      for (size_t i = 0; i < formal.size(); ++i)
        if (formal[i].GetOption() == onnx::OpSchema::Single &&
            (static_cast<int>(i) >= actual.size() || actual.Get(static_cast<int>(i)).empty()))
          throw Error(fmt::format("{}: node '{}' ({}): required {} {} ({}) is missing", label, n.name(), n.op_type(),
                                  what, i, formal[i].GetName()));
    };
    check(schema->inputs(), n.input(), "input");
    check(schema->outputs(), n.output(), "output");
  }
  return opset;
}

DType to_dtype(int t) { return dtype_from_onnx(t); }  // TensorProto.DataType numbers are the ONNX spec's

Shape tensor_shape(const onnx::TensorProto& t, const std::string& what) {
  Shape s;
  for (int64_t d : t.dims()) {
    if (d < 0 || d > kMaxDim)
      throw Error(fmt::format("{}: dim {} is {}", what, d, d < 0 ? "negative" : "absurdly large"));
    s.dims.push_back(d);
  }
  return s;
}

std::optional<std::vector<int64_t>> int_payload(const onnx::TensorProto& t) {
  using TP = onnx::TensorProto;
  if (t.data_location() == TP::EXTERNAL || !is_small(t)) return std::nullopt;
  const int64_t n = element_count_or_max(t);
  std::vector<int64_t> v;
  const std::string& raw = t.raw_data();
  auto from_raw = [&](size_t width, auto decode) -> bool {
    if (raw.size() != static_cast<size_t>(n) * width) return false;
    for (int64_t i = 0; i < n; ++i) v.push_back(decode(raw.data() + i * width));
    return true;
  };
  switch (t.data_type()) {
    case TP::INT64:
      if (!raw.empty()) {
        if (!from_raw(8, [](const char* p) { int64_t x; std::memcpy(&x, p, 8); return x; })) return std::nullopt;
      } else {
        v.assign(t.int64_data().begin(), t.int64_data().end());
      }
      break;
    case TP::INT32: case TP::INT8: case TP::UINT8: case TP::BOOL: case TP::INT16: case TP::UINT16: {
      if (!raw.empty()) {
        bool ok = false;
        if (t.data_type() == TP::INT32)
          ok = from_raw(4, [](const char* p) { int32_t x; std::memcpy(&x, p, 4); return int64_t(x); });
        else if (t.data_type() == TP::INT8)
          ok = from_raw(1, [](const char* p) { return int64_t(static_cast<int8_t>(*p)); });
        else if (t.data_type() == TP::INT16)
          ok = from_raw(2, [](const char* p) { int16_t x; std::memcpy(&x, p, 2); return int64_t(x); });
        else if (t.data_type() == TP::UINT16)
          ok = from_raw(2, [](const char* p) { uint16_t x; std::memcpy(&x, p, 2); return int64_t(x); });
        else
          ok = from_raw(1, [](const char* p) { return int64_t(static_cast<uint8_t>(*p)); });
        if (!ok) return std::nullopt;
      } else {
        v.assign(t.int32_data().begin(), t.int32_data().end());
      }
      break;
    }
    default: return std::nullopt;
  }
  if (static_cast<int64_t>(v.size()) != n) return std::nullopt;
  return v;
}

std::optional<std::vector<double>> float_payload(const onnx::TensorProto& t) {
  using TP = onnx::TensorProto;
  if (t.data_location() == TP::EXTERNAL || !is_small(t)) return std::nullopt;
  const int64_t n = element_count_or_max(t);
  std::vector<double> v;
  const std::string& raw = t.raw_data();
  if (t.data_type() == TP::FLOAT) {
    if (!raw.empty()) {
      if (raw.size() != static_cast<size_t>(n) * 4) return std::nullopt;
      for (int64_t i = 0; i < n; ++i) {
        float x;
        std::memcpy(&x, raw.data() + i * 4, 4);
        v.push_back(x);
      }
    } else {
      v.assign(t.float_data().begin(), t.float_data().end());
    }
  } else if (t.data_type() == TP::DOUBLE) {
    if (!raw.empty()) {
      if (raw.size() != static_cast<size_t>(n) * 8) return std::nullopt;
      for (int64_t i = 0; i < n; ++i) {
        double x;
        std::memcpy(&x, raw.data() + i * 8, 8);
        v.push_back(x);
      }
    } else {
      v.assign(t.double_data().begin(), t.double_data().end());
    }
  } else if (auto ints = int_payload(t)) {
    v.assign(ints->begin(), ints->end());
  } else {
    return std::nullopt;
  }
  if (static_cast<int64_t>(v.size()) != n) return std::nullopt;
  return v;
}

}  // namespace ridge::onnx_in
