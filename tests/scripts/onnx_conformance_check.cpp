// Checks ridge's ONNX import against ONNX's backend node tests (generated at test time by
// onnx_conformance.sh): for every case whose ops ridge supports, the inferred shapes of the graph outputs
// equal the shapes of the expected outputs. Runs the importer twice: ONNX inference + ridge's rules (the
// normal mode) and ridge's rules alone. Prints how many cases ran and passed; exit 1 on any failure.
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "ridge/error.hpp"
#include "ridge/onnx_import.hpp"

namespace fs = std::filesystem;

namespace {

struct Case {
  fs::path dir;
  std::vector<ridge::Shape> expected;  ///< one per graph output
};

/// Op types of a model's top-level graph that ridge does not support (empty: the case is in scope).
std::set<std::string> unsupported_ops(const onnx::ModelProto& m) {
  std::set<std::string> out;
  for (const auto& n : m.graph().node()) {
    const bool standard = n.domain().empty() || n.domain() == "ai.onnx";
    auto op = ridge::parse_op(n.op_type());
    if (!standard || !op || *op == ridge::OpKind::AdaptiveAvgPool || *op == ridge::OpKind::Unknown)
      out.insert(n.op_type());
  }
  return out;
}

bool read_proto(const fs::path& p, google::protobuf::Message& msg) {
  std::ifstream in(p, std::ios::binary);
  return in && msg.ParseFromIstream(&in);
}

/// Returns "" when every output shape matches, else what differs.
std::string check(const Case& c, const ridge::OnnxImportOptions& engines) {
  try {
    ridge::Graph g = ridge::import_onnx((c.dir / "model.onnx").string(), ridge::LoadOptions{}, engines);
    if (g.outputs.size() != c.expected.size()) return "output count differs";
    for (size_t i = 0; i < c.expected.size(); ++i) {
      const ridge::Shape& got = g.value(g.outputs[i]).shape;
      if (!(got == c.expected[i]))
        return "output " + std::to_string(i) + ": got " + ridge::to_string(got) + ", expected " +
               ridge::to_string(c.expected[i]) + (got.known() ? "" : " (" + g.value(g.outputs[i]).shape_note + ")");
    }
    return "";
  } catch (const ridge::Error& e) {
    return std::string("import failed: ") + e.what();
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: onnx_conformance_check GENERATED_DIR/node\n";
    return 2;
  }
  std::vector<Case> cases;
  std::map<std::string, int> excluded_ops;
  int total = 0, excluded = 0;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(argv[1]))
    if (e.is_directory()) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  for (const auto& dir : dirs) {
    ++total;
    onnx::ModelProto m;
    if (!read_proto(dir / "model.onnx", m)) {
      ++excluded;
      continue;
    }
    auto unsupported = unsupported_ops(m);
    Case c{dir, {}};
    for (int i = 0; i < m.graph().output_size() && unsupported.empty(); ++i) {
      onnx::TensorProto t;
      if (!m.graph().output(i).type().has_tensor_type() ||
          !read_proto(dir / "test_data_set_0" / ("output_" + std::to_string(i) + ".pb"), t)) {
        unsupported.insert("(non-tensor output)");
        break;
      }
      c.expected.push_back(ridge::Shape{{t.dims().begin(), t.dims().end()}});
    }
    if (!unsupported.empty()) {
      ++excluded;
      for (const auto& op : unsupported) ++excluded_ops[op];
      continue;
    }
    cases.push_back(std::move(c));
  }

  int failures = 0;
  for (const auto& [label, engines] : {std::pair{"ONNX inference + ridge rules", ridge::OnnxImportOptions{true, true}},
                                       std::pair{"ridge rules alone", ridge::OnnxImportOptions{false, true}}}) {
    int passed = 0;
    for (const Case& c : cases) {
      std::string why = check(c, engines);
      if (why.empty()) ++passed;
      else std::cout << "FAIL [" << label << "] " << c.dir.filename().string() << ": " << why << "\n";
    }
    std::cout << "onnx conformance (" << label << "): " << total << " generated cases, " << cases.size()
              << " ran (all ops supported by ridge), " << passed << " passed, " << cases.size() - passed
              << " failed\n";
    failures += static_cast<int>(cases.size()) - passed;
  }
  std::cout << excluded << " cases excluded: they use ops ridge does not list as supported (";
  bool first = true;
  for (const auto& [op, n] : excluded_ops) {
    std::cout << (first ? "" : ", ") << op << " " << n;
    first = false;
  }
  std::cout << ")\n";
  return failures == 0 ? 0 : 1;
}
