// The `ridge` binary's definitions of the heavy functions: each loads libridge_backends.so on first use (next to
// the executable, or $RIDGE_BACKENDS) and forwards to it. Failures are one-line ridge::Errors.
#include <dlfcn.h>

#include <filesystem>
#include <mutex>

#include "backends/backend_api.hpp"
#include "ridge/error.hpp"

namespace ridge {
namespace {

std::string module_path() {
  if (const char* env = std::getenv("RIDGE_BACKENDS"); env && *env) return env;
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ((ec ? std::filesystem::path(".") : exe.parent_path()) / "libridge_backends.so").string();
}

const backends::Api& api() {
  static const backends::Api* table = nullptr;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string path = module_path();
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      failure = "cannot load ridge's ONNX/oneDNN backends (" + std::string(why ? why : path) +
                "); they ship next to the ridge binary, or set RIDGE_BACKENDS to libridge_backends.so";
      return;
    }
    auto entry = reinterpret_cast<const backends::Api* (*)()>(dlsym(handle, "ridge_backends_api"));
    const backends::Api* t = entry ? entry() : nullptr;
    if (!t || t->version != backends::kApiVersion) {
      failure = path + ": not a ridge backends module of this version (rebuild ridge)";
      return;
    }
    table = t;
  });
  if (!table) throw Error(failure);
  return *table;
}

}  // namespace

Graph import_onnx(const std::string& path, const LoadOptions& opts) { return api().import_onnx(path, opts, {}); }
Graph import_onnx(const std::string& path, const LoadOptions& opts, const OnnxImportOptions& engines) {
  return api().import_onnx(path, opts, engines);
}
Graph import_onnx_bytes(std::string_view bytes, const std::string& label, const LoadOptions& opts,
                        const OnnxImportOptions& engines) {
  return api().import_onnx_bytes(bytes, label, opts, engines);
}
ExecResult execute(const Graph& g, const ExecOptions& opts) { return api().execute(g, opts); }
TensorMap parameter_gradients(const Graph& g, const ExecOptions& opts) { return api().parameter_gradients(g, opts); }
ModelMeasurement measure_graph(const Graph& g, const MeasureOptions& opts) { return api().measure_graph(g, opts); }
TensorMap read_onnx_weights(const std::string& path, std::vector<std::string>* notes) {
  return api().read_onnx_weights(path, notes);
}
std::pair<std::string, HostTensor> read_tensor_pb(const std::string& path) { return api().read_tensor_pb(path); }
void write_tensor_pb(const std::string& path, const std::string& name, const HostTensor& t) {
  api().write_tensor_pb(path, name, t);
}

}  // namespace ridge
