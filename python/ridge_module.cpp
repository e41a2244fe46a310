// The C++ extension `ridge._ridge`: loads models (zoo name, file, ONNX bytes, Hugging Face config) and calls the
// same one-call-per-command library functions as the CLI (include/ridge/api.hpp), returning their
// report::Document. Argument checking in Python terms lives in ridge/__init__.py; this file only converts values.
// ridge::UsageError becomes ValueError, every other ridge::Error becomes ridge.Error.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ridge/api.hpp"
#include "ridge/chart.hpp"
#include "ridge/cost.hpp"
#include "ridge/precision_mode.hpp"
#include "ridge/error.hpp"
#include "ridge/llm.hpp"
#include "ridge/llm_analysis.hpp"
#include "ridge/load.hpp"
#include "ridge/onnx_import.hpp"
#include "ridge/report.hpp"

namespace py = pybind11;

namespace ridge::python {
namespace {

// ---- loading ------------------------------------------------------------------------------------------------

Shape shape_of(const std::vector<int64_t>& dims) {
  Shape s;
  s.dims = dims;
  return s;
}

LoadOptions load_options(int64_t batch, const std::optional<std::vector<int64_t>>& input_size,
                         std::optional<int64_t> seq_len,
                         const std::vector<std::pair<std::string, std::vector<int64_t>>>& inputs,
                         const std::string& dtype, bool training) {
  LoadOptions o;
  o.refuse_unused = true;  // an input_size or seq_len the caller gave must be used, as on the command line
  o.batch = batch;
  if (input_size) o.input_size = shape_of(*input_size);
  o.seq_len = seq_len;
  for (const auto& [name, dims] : inputs) o.input_shapes.push_back({name, shape_of(dims)});
  auto dt = parse_dtype(dtype);
  if (!dt || !is_float(*dt)) throw UsageError("dtype: '" + dtype + "' is not one of fp32, fp16, bf16, fp64");
  o.dtype = *dt;
  o.training = training;
  return o;
}

/// A model as Python hands it over: kind "name" (zoo name, path or descriptor), "onnx_bytes" or "hf_config" (JSON
/// text), with the label that names it in titles and errors.
ModelSource source_of(const std::string& kind, std::string payload, std::string label) {
  ModelSource m(std::move(label));
  if (kind == "onnx_bytes") m.onnx_bytes = std::move(payload);
  else if (kind == "hf_config") m.hf_config = std::move(payload);
  else if (kind != "name") throw UsageError("model: unknown kind " + kind);
  else m.name = std::move(payload);
  return m;
}

/// torch.onnx.export(..., export_params=False) leaves the weights out and lists them as graph inputs. This turns
/// every input but the user's (`keep`, the names given to torch.onnx.export) into initializers with their element
/// type and shape and no payload (marked external), so that ridge counts them as parameters and buffers like any
/// exported file's; `buffers` (the module's named_buffers()) are declared buffers (kDeclaredBufferDoc).
/// Exporting without weights is about twice as fast.
/// `parameters` (the module's named_parameters(): name -> elements) are declared parameters
/// (kDeclaredParameterDoc); those the graph does not take are listed under kParametersNotInGraphKey, so that every
/// result notes them.
py::bytes params_to_initializers(const std::string& bytes, const std::set<std::string>& keep,
                                 const std::string& label, const std::set<std::string>& buffers,
                                 const std::vector<std::pair<std::string, int64_t>>& parameters) {
  onnx::ModelProto m;
  if (!m.ParseFromString(bytes)) throw Error(label + ": torch.onnx.export wrote something that is not an ONNX model");
  onnx::GraphProto* g = m.mutable_graph();
  std::set<std::string> in_graph;
  for (const auto& in : g->input()) in_graph.insert(in.name());
  for (const auto& t : g->initializer()) in_graph.insert(t.name());
  std::set<std::string> in_module;
  for (const auto& [name, elements] : parameters) in_module.insert(name);
  std::string unused;
  for (const auto& [name, elements] : parameters)
    if (!in_graph.count(name)) unused += (unused.empty() ? "" : ",") + name + ":" + std::to_string(elements);
  if (!unused.empty()) {
    auto* prop = m.add_metadata_props();
    prop->set_key(kParametersNotInGraphKey);
    prop->set_value(unused);
  }
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> inputs;
  for (const auto& in : g->input()) {
    if (keep.count(in.name())) {
      *inputs.Add() = in;
      continue;
    }
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(in.name());
    if (buffers.count(in.name())) t->set_doc_string(kDeclaredBufferDoc);
    else if (in_module.count(in.name())) t->set_doc_string(kDeclaredParameterDoc);
    t->set_data_type(in.type().tensor_type().elem_type());
    for (const auto& d : in.type().tensor_type().shape().dim()) {
      if (!d.has_dim_value()) throw Error(label + ": parameter " + in.name() + " has a symbolic dimension");
      t->add_dims(d.dim_value());
    }
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* where = t->add_external_data();
    where->set_key("location");
    where->set_value("(not exported: ridge reads shapes only)");
  }
  g->mutable_input()->Swap(&inputs);
  return py::bytes(m.SerializeAsString());
}

std::optional<DType> dtype_of(const std::optional<std::string>& name) {
  if (!name) return std::nullopt;
  return load_options(1, {}, {}, {}, *name, false).dtype;
}

/// What predict and roofline requests share: load options, element type, device folders, precision and memory level.
template <class Request>
Request request_of(const LoadOptions& load, const std::optional<std::string>& dtype,
                   const std::vector<std::string>& device_dirs, const std::string& precision, const std::string& level) {
  Request r;
  r.load = load;
  r.dtype = dtype_of(dtype);
  r.device_dirs = device_dirs;
  r.precision = precision;
  r.level = level;
  return r;
}

std::optional<Convention> convention_of(const std::optional<std::string>& name) {
  if (!name) return std::nullopt;
  auto c = parse_convention(*name);
  if (!c) throw UsageError("convention: unknown convention '" + *name + "'");
  return c;
}

// ---- LLM options ----------------------------------------------------------------------------------------------

void set_formats(ServeOptions& o, const std::string& weights, const std::string& kv) {
  const auto weights_format = parse_number_format(weights), kv_format = parse_number_format(kv);
  if (!weights_format) throw UsageError("weights: '" + weights + "' is not int4, int8, fp8, fp16, bf16 or fp32");
  if (!kv_format || kv_format->group > 0) throw UsageError("kv: '" + kv + "' is not fp8, fp16, bf16 or fp32");
  o.weights = *weights_format;
  o.kv = *kv_format;
}

Precision precision_of(const std::string& name, const std::string& what) {
  const auto p = parse_llm_compute(name);
  if (!p) throw UsageError(what + ": '" + name + "' is not a precision (fp16, bf16, fp32)");
  return *p;
}

bool latent_kv(const std::string& mla) {
  const auto latent = parse_mla(mla);
  if (!latent) throw UsageError("mla: use 'hf' or 'latent'");
  return *latent;
}

bool grouped_experts(const std::string& moe) {
  const auto grouped = parse_moe(moe);
  if (!grouped) throw UsageError("moe: use 'eager' or 'grouped'");
  return *grouped;
}

AttentionChoice attention_choice(const std::string& attention) {
  const auto a = parse_attention(attention);
  if (!a) throw UsageError("attention: use 'eager', 'fused', 'flash2' or 'flash1'");
  return *a;
}

// ---- documents ----------------------------------------------------------------------------------------------

/// What a command returns to Python: its document and the charts it draws beside it (roofline).
struct Output {
  report::Document doc;
  std::vector<chart::Chart> charts;
};
Output out(report::Document d) { return {std::move(d), {}}; }

std::string written(const report::Document& d, const std::string& format) {
  std::ostringstream os;
  report::write(d, format, os);
  return os.str();
}

std::string text_of(const report::Document& d, int width) {
  std::ostringstream os;
  report::write_text(d, os, report::TextOptions{width});
  return os.str();
}

/// The document laid out by the HTML report's renderer as one self-contained page: its tables and values in a
/// section named after the command, the per-layer table (sortable) with `charts` in section "layers".
std::string html_of(const report::Document& d, const std::vector<chart::Chart>& charts) {
  chart::ReportData data;
  data.title = d.title;
  chart::ReportSection main, layers;
  main.id = d.command.empty() ? "result" : d.command;
  main.title = main.id;
  main.title[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(main.title[0])));
  layers.id = "layers";
  layers.title = "Layers";
  layers.charts = charts;
  for (const auto& b : d.blocks) {
    auto* t = std::get_if<report::Table>(&b);
    (t && t->key == "layers" ? layers : main).blocks.push_back(b);
  }
  if (!main.blocks.empty()) data.sections.push_back(std::move(main));
  if (!layers.blocks.empty()) data.sections.push_back(std::move(layers));
  data.notes = d.notes;
  return chart::render_html(data);
}

/// The shares chart of a document's per-layer table (what `ridge COMMAND --plot` draws): `metrics` are (column key,
/// title) pairs; none when the document has no such table.
std::vector<chart::Chart> share_charts(const report::Document& d,
                                       const std::vector<std::pair<std::string, std::string>>& metrics) {
  for (const auto& b : d.blocks)
    if (auto* t = std::get_if<report::Table>(&b); t && t->key == "layers" && !metrics.empty())
      return {chart::layer_share_chart(d.title + ": share per layer",
                                       chart::layer_shares_from_table(*t, "name", metrics))};
  return {};
}

}  // namespace
}  // namespace ridge::python

PYBIND11_MODULE(_ridge, m) {
  using namespace ridge;
  using namespace ridge::python;
  m.doc() = "ridge's C++ library (use the `ridge` package, not this module)";

  static py::exception<Error> error(m, "Error", PyExc_RuntimeError);
  error.attr("__module__") = "ridge";  // shown as ridge.Error
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const UsageError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const Error& e) {
      error(e.what());
    }
  });

  py::class_<ModelSource>(m, "ModelSource")
      .def(py::init([](const std::string& kind, py::bytes payload, std::string label) {
             return source_of(kind, std::string(payload), std::move(label));
           }),
           py::arg("kind"), py::arg("payload"), py::arg("label"));

  py::class_<Graph>(m, "Graph")
      .def_readonly("name", &Graph::name)
      .def_property_readonly("node_count", [](const Graph& g) { return g.nodes.size(); })
      .def_property_readonly("inputs", [](const Graph& g) {
        std::vector<std::pair<std::string, std::vector<int64_t>>> out;
        for (int id : g.inputs) out.push_back({g.value(id).name, g.value(id).shape.dims});
        return out;
      });

  m.def("params_to_initializers", &params_to_initializers, py::arg("onnx_bytes"), py::arg("keep"), py::arg("label"),
        py::arg("buffers") = std::set<std::string>{},
        py::arg("parameters") = std::vector<std::pair<std::string, int64_t>>{});
  m.def(
      "activation_dtype",
      [](const std::string& precision) {
        return std::string(dtype_name(require_precision_mode(precision, "precision").activation_dtype));
      },
      py::arg("precision"));
  m.def("load_options", &load_options, py::arg("batch"), py::arg("input_size"), py::arg("seq_len"),
        py::arg("inputs"), py::arg("dtype"), py::arg("training"));
  py::class_<LoadOptions>(m, "LoadOptions");
  m.def("load", &load_source, py::arg("model"),
        py::arg("options"), py::call_guard<py::gil_scoped_release>());

  py::class_<Output>(m, "Document")
      .def_property("title", [](const Output& o) { return o.doc.title; }, [](Output& o, std::string t) { o.doc.title = std::move(t); })
      .def_property("command", [](const Output& o) { return o.doc.command; },
                    [](Output& o, std::string c) { o.doc.command = std::move(c); })
      .def("set_inputs",
           [](Output& o, const std::string& json) {  // as the CLI: what the library recorded as used wins
             nlohmann::json in = nlohmann::json::parse(json);
             in.merge_patch(o.doc.inputs);
             o.doc.inputs = std::move(in);
           })
      .def("json", [](const Output& o) { return written(o.doc, "json"); })
      .def("markdown", [](const Output& o) { return written(o.doc, "md"); })
      .def("csv", [](const Output& o) { return written(o.doc, "csv"); })
      .def("text", [](const Output& o, int width) { return text_of(o.doc, width); }, py::arg("width") = 0)
      .def(
          "html",
          [](const Output& o, const std::vector<std::pair<std::string, std::string>>& share_metrics) {
            std::vector<chart::Chart> charts = o.charts;
            for (auto& c : share_charts(o.doc, share_metrics)) charts.push_back(std::move(c));
            return html_of(o.doc, charts);
          },
          py::arg("share_metrics"));

  // ---- one function per command (include/ridge/api.hpp) ----------------------------------------------------
  m.def(
      "summary",
      [](const Graph& g, int depth, std::optional<std::string> convention, const std::string& optimizer,
         std::optional<std::string> precision) {
        report::SummaryOptions so;
        so.depth = depth;
        so.convention = convention_of(convention);
        auto opt = parse_optimizer(optimizer);
        if (!opt) throw UsageError("optimizer: '" + optimizer + "' is not sgd, momentum or adam");
        so.optimizer = *opt;
        if (precision) so.precision = require_precision_mode(*precision, "precision");
        return out(report::summary_report(g, so));
      },
      py::arg("graph"), py::arg("depth"), py::arg("convention"), py::arg("optimizer"), py::arg("precision"));
  m.def(
      "flops",
      [](const Graph& g, bool all, std::optional<std::string> convention, const ModelSource& model) {
        // As `ridge flops --all-conventions`: an LLM also gets the published LLM formulas.
        const std::optional<LlmConfig> llm = all ? llm_config_of_source(model) : std::nullopt;
        return out(report::flops_report(g, report::flops_conventions(all, convention_of(convention)), llm ? &*llm : nullptr));
      },
      py::arg("graph"), py::arg("all"), py::arg("convention"), py::arg("model"));
  m.def(
      "predict",
      [](const ModelSource& model, const LoadOptions& load, std::optional<std::string> dtype, const std::string& device,
         const std::vector<std::string>& device_dirs, const std::string& precision, bool train,
         const std::string& combine, const std::string& level, const std::string& calibration, bool force,
         std::optional<double> ppp, std::optional<double> ppp_mem, std::optional<double> launch_overhead_s,
         std::optional<std::string> flops, int devices_count, std::optional<int> gpus_per_node,
         const std::string& intra_node, const std::string& inter_node, std::optional<int> nics_per_node,
         const std::string& allreduce, const std::string& allreduce_fit, double bucket_mib,
         const std::string& optimizer) {
        auto r = request_of<report::PredictRequest>(load, dtype, device_dirs, precision, level);
        r.model = model;
        r.device = device;
        r.train = train;
        r.optimizer = optimizer;
        r.combine = combine;
        r.calibration = calibration;
        r.force = force;
        r.ppp = ppp;
        r.ppp_mem = ppp_mem;
        r.kernel_launch_s = launch_overhead_s;
        if (flops) r.flops = parse_count(*flops);
        r.data_parallel.cluster = {devices_count, gpus_per_node, intra_node, inter_node, nics_per_node};
        r.data_parallel.allreduce = allreduce;
        r.data_parallel.allreduce_fit = allreduce_fit;
        r.data_parallel.bucket_mib = bucket_mib;
        py::gil_scoped_release unlocked;
        return out(report::predict_report(r));
      },
      py::arg("model"), py::arg("load"), py::arg("dtype"), py::arg("device"), py::arg("device_dirs"),
      py::arg("precision"), py::arg("train"), py::arg("combine"), py::arg("level"), py::arg("calibration"),
      py::arg("force"), py::arg("ppp"), py::arg("ppp_mem"), py::arg("launch_overhead_s"), py::arg("flops"),
      py::arg("devices_count"), py::arg("gpus_per_node"), py::arg("intra_node"), py::arg("inter_node"),
      py::arg("nics_per_node"), py::arg("allreduce"), py::arg("allreduce_fit"), py::arg("bucket_mib"),
      py::arg("optimizer"));
  m.def(
      "serve",
      [](const ModelSource& model, const std::string& device, const std::vector<std::string>& device_dirs,
         const std::string& calibration, int64_t batch, int64_t prompt, int64_t generate, int tp,
         const std::optional<std::string>& weights, const std::optional<std::string>& kv,
         const std::optional<std::string>& compute, const std::string& attention, const std::string& moe,
         const std::string& mla, int dp, const std::optional<std::string>& precision) {
        report::ServeRequest r{model, device, device_dirs, calibration, {}};
        r.options.batch = batch;
        r.options.prompt = prompt;
        r.options.generate = generate;
        r.options.tp = tp;
        r.options.dp = dp;
        set_formats(r.options, weights.value_or("fp16"), kv.value_or("fp16"));
        r.options.compute = precision_of(compute.value_or("fp16"), "compute");
        if (precision)
          r.options = with_serving_precision(r.options, *precision, weights.has_value(), kv.has_value(), compute.has_value());
        r.options = with_attention(r.options, attention_choice(attention));
        r.options.grouped_experts = grouped_experts(moe);
        r.options.latent_kv = latent_kv(mla);
        py::gil_scoped_release unlocked;
        return out(report::serve_report(r));
      },
      py::arg("model"), py::arg("device"), py::arg("device_dirs"), py::arg("calibration"), py::arg("batch"),
      py::arg("prompt"), py::arg("generate"), py::arg("tp"), py::arg("weights"), py::arg("kv"), py::arg("compute"),
      py::arg("attention"), py::arg("moe"), py::arg("mla"), py::arg("dp"), py::arg("precision"));
  m.def(
      "devices",
      [](const std::vector<std::string>& device_dirs, const std::string& machine_profile) {
        return out(report::devices_report({device_dirs, machine_profile}));
      },
      py::arg("device_dirs"), py::arg("machine_profile"));
  m.def(
      "roofline",
      [](const std::vector<std::string>& models, const LoadOptions& load, std::optional<std::string> dtype,
         const std::vector<std::string>& devices, const std::vector<std::string>& device_dirs,
         const std::string& precision, const std::string& level, const std::vector<std::string>& measured_files,
         bool summary_only) {
        auto r = request_of<report::RooflineRequest>(load, dtype, device_dirs, precision, level);
        r.models = models;
        r.devices = devices;
        r.measured_files = measured_files;
        r.summary_only = summary_only;
        py::gil_scoped_release unlocked;
        report::RooflineResult res = report::roofline_report(r);
        return Output{std::move(res.doc), std::move(res.charts)};
      },
      py::arg("models"), py::arg("load"), py::arg("dtype"), py::arg("devices"), py::arg("device_dirs"),
      py::arg("precision"), py::arg("level"), py::arg("measured_files"), py::arg("summary_only"));
  m.def(
      "measure",
      [](const Graph& g, int threads, uint64_t seed, bool train, int repeat, double max_seconds,
         const std::string& machine, bool end_to_end) {
        report::MeasureRequest r;
        r.options.exec.threads = threads;
        r.options.exec.seed = seed;
        r.options.exec.train = train;
        r.options.max_repeats = repeat;
        r.options.min_repeats = std::min(repeat, r.options.min_repeats);
        r.options.max_seconds = max_seconds;
        r.machine_profile = machine;
        r.options.end_to_end = end_to_end;
        py::gil_scoped_release unlocked;
        return out(report::measure_report(g, report::measure_model(g, r)));
      },
      py::arg("graph"), py::arg("threads"), py::arg("seed"), py::arg("train"), py::arg("repeat"),
      py::arg("max_seconds"), py::arg("machine"), py::arg("end_to_end"));
  m.def(
      "ingest",
      [](const std::vector<std::pair<std::string, std::string>>& files, const std::string& input_format,
         const std::string& join, const std::string& arch, std::optional<int64_t> tensor_factor,
         std::optional<size_t> run, const std::string& group, std::optional<size_t> top, const std::string& model,
         int64_t batch, int64_t steps, bool train, const std::string& device,
         const std::vector<std::string>& device_dirs, const std::string& precision, bool force,
         const std::string& calibration) {
        report::IngestRequest r;
        r.files = files, r.input_format = input_format, r.join = join, r.arch = arch, r.tensor_factor = tensor_factor;
        r.run = run, r.group = group, r.top = top, r.model = model, r.batch = batch, r.steps = steps, r.train = train;
        r.device = device, r.device_dirs = device_dirs;
        r.precision = precision;
        r.calibration = calibration;
        r.force = force;
        py::gil_scoped_release unlocked;
        return out(report::ingest_report(report::ingest_profile(r), r, true));
      },
      py::arg("files"), py::arg("input_format"), py::arg("join"), py::arg("arch"), py::arg("tensor_factor"),
      py::arg("run"), py::arg("group"), py::arg("top"), py::arg("model"), py::arg("batch"), py::arg("steps"),
      py::arg("train"), py::arg("device"), py::arg("device_dirs"), py::arg("precision"), py::arg("force"),
      py::arg("calibration"));
  m.def(
      "train",
      [](const ModelSource& model, const std::string& device, const std::vector<std::string>& device_dirs,
         const std::string& calibration, int gpus, int tp, int pp, std::optional<int> dp, const std::string& zero,
         int interleave, int ep, int cp, bool sequence_parallel, const std::string& recompute, int64_t seq,
         std::optional<int64_t> global_batch, int64_t micro_batch, const std::optional<std::string>& compute,
         std::optional<double> tokens, const std::string& attention, const std::string& moe,
         const std::optional<std::string>& precision) {
        report::TrainRequest r{model, device, device_dirs, calibration, {}};
        TrainOptions& t = r.options;
        t.gpus = gpus;
        t.tp = tp;
        t.pp = pp;
        t.dp = dp.value_or(0);
        const auto stage = parse_zero_stage(zero);
        if (!stage) throw UsageError("zero: '" + zero + "' is not 0, 1, 2, 3 or fsdp");
        t.zero = *stage;
        t.interleave = interleave;
        t.ep = ep;
        t.cp = cp;
        t.sequence_parallel = sequence_parallel;
        const auto rc = parse_recompute(recompute);
        if (!rc) throw UsageError("recompute: '" + recompute + "' is not none, selective or full");
        t.recompute = *rc;
        t.seq = seq;
        t.global_batch = global_batch.value_or(0);
        t.micro_batch = micro_batch;
        t.compute = precision_of(compute.value_or("bf16"), "compute");
        if (precision) t = with_training_precision(t, *precision, compute.has_value());
        t.token_budget = tokens.value_or(0);
        t = with_attention(t, attention_choice(attention));
        t.grouped_experts = grouped_experts(moe);
        py::gil_scoped_release unlocked;
        return out(report::train_report(r));
      },
      py::arg("model"), py::arg("device"), py::arg("device_dirs"), py::arg("calibration"), py::arg("gpus"),
      py::arg("tp"), py::arg("pp"), py::arg("dp"), py::arg("zero"), py::arg("interleave"), py::arg("ep"),
      py::arg("cp"), py::arg("sequence_parallel"), py::arg("recompute"), py::arg("seq"), py::arg("global_batch"),
      py::arg("micro_batch"), py::arg("compute"), py::arg("tokens"), py::arg("attention"), py::arg("moe"),
      py::arg("precision"));
  m.def(
      "report",
      [](const ModelSource& model, const LoadOptions& load, std::optional<std::string> dtype, bool strict,
         const std::string& precision, bool train, const std::string& optimizer, const std::vector<std::string>& devices,
         const std::vector<std::string>& device_dirs, bool measure, const std::vector<std::string>& profiles,
         bool force, const std::vector<int64_t>& sweep, int depth, size_t top, bool serve, int64_t prompt,
         int64_t generate, int tp, const std::string& weights, const std::string& kv, const std::string& path,
         bool end_to_end, const std::string& attention, const std::string& moe, const std::string& mla, int dp,
         bool weights_given, bool kv_given) {
        report::ReportRequest r;
        r.model = model;
        r.strict = strict;
        r.load = load;
        r.dtype = dtype_of(dtype);
        r.precision = precision;
        r.train = train;
        r.optimizer = optimizer;
        r.devices = devices;
        r.device_dirs = device_dirs;
        r.measure = measure;
        r.profiles = profiles;
        r.force = force;
        r.sweep = sweep;
        r.depth = depth;
        r.top = top;
        r.serve = serve;
        r.serve_options.batch = load.batch;
        r.serve_options.prompt = prompt;
        r.serve_options.generate = generate;
        r.serve_options.tp = tp;
        r.serve_options.dp = dp;
        r.end_to_end = end_to_end;
        if (serve) {
          set_formats(r.serve_options, weights, kv);
          r.serve_weights_given = weights_given;
          r.serve_kv_given = kv_given;
          r.serve_options = with_attention(r.serve_options, attention_choice(attention));
          r.serve_options.grouped_experts = grouped_experts(moe);
          r.serve_options.latent_kv = latent_kv(mla);
        } else if (attention != "eager" || moe != "eager" || mla != "hf") {
          throw UsageError("attention, moe and mla: they need serve=True");
        }
        py::gil_scoped_release unlocked;
        report::HtmlReport page = report::html_report(r);
        chart::write_html(page.page, path);
        return out(std::move(page.doc));
      },
      py::arg("model"), py::arg("load"), py::arg("dtype"), py::arg("strict"), py::arg("precision"), py::arg("train"),
      py::arg("optimizer"), py::arg("devices"), py::arg("device_dirs"), py::arg("measure"), py::arg("profiles"),
      py::arg("force"), py::arg("sweep"), py::arg("depth"), py::arg("top"), py::arg("serve"), py::arg("prompt"),
      py::arg("generate"), py::arg("tp"), py::arg("weights"), py::arg("kv"), py::arg("path"), py::arg("end_to_end"),
      py::arg("attention"), py::arg("moe"), py::arg("mla"), py::arg("dp"), py::arg("weights_given"), py::arg("kv_given"));
}
