// torch.profiler's Chrome trace JSON (`prof.export_chrome_trace(path)`, `tensorboard_trace_handler`): kineto's
// object with "deviceProperties" and "traceEvents", or the legacy autograd profiler's top-level list. Read with a
// SAX handler that keeps only the fields used and every number as printed, so "dur": 85.123 (microseconds) becomes
// exactly 85123 ns and a trace of hundreds of MB never becomes a DOM. GPU kernels, memcpys and memsets become
// records; each kernel is tied to the cpu_op that launched it (args "External id", else the launching runtime call's
// "correlation"), the outermost enclosing cpu_op names it (`KernelRecord::op`) and the user_annotation ranges
// around it (record_function, ProfilerStep#N) play the part of NVTX ranges. An operator's "flops" (with_flops=True)
// are counted once, on its longest kernel, in the precision of its first tensor input.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "internal.hpp"
#include "ridge/text.hpp"

namespace ridge::ingest::detail {
namespace {

using json = nlohmann::json;

/// A JSON value as printed: its kind and its text (a number's lexeme, a string's contents, compact JSON of a list).
struct Field {
  enum class Kind : uint8_t { Absent, Null, Bool, Number, String, List } kind = Kind::Absent;
  std::string text;
  bool present() const { return kind != Kind::Absent; }
};

/// The fields of one trace event that ridge uses.
struct Event {
  size_t index = 0;  ///< position in traceEvents
  Field ph, cat, name, pid, tid, ts, dur;
  Field external_id, correlation, device, stream, flops, bytes, input_type;
};

Field* event_field(Event& e, std::string_view key) {
  static const std::map<std::string_view, Field Event::*> kTop = {
      {"ph", &Event::ph}, {"cat", &Event::cat}, {"name", &Event::name}, {"pid", &Event::pid},
      {"tid", &Event::tid}, {"ts", &Event::ts}, {"dur", &Event::dur}};
  auto it = kTop.find(key);
  return it == kTop.end() ? nullptr : &(e.*(it->second));
}

Field* arg_field(Event& e, std::string_view key) {
  static const std::map<std::string_view, Field Event::*> kArgs = {
      {"External id", &Event::external_id}, {"external id", &Event::external_id},
      {"correlation", &Event::correlation}, {"device", &Event::device},
      {"stream", &Event::stream},           {"flops", &Event::flops},
      {"bytes", &Event::bytes},             {"Input type", &Event::input_type}};
  auto it = kArgs.find(key);
  return it == kArgs.end() ? nullptr : &(e.*(it->second));
}

/// SAX handler: walks the document keeping events (with the fields above) and device names.
class TraceReader : public nlohmann::json_sax<json> {
 public:
  std::vector<Event> events;
  std::map<std::string, std::string> device_names;  ///< deviceProperties id -> name
  size_t seen = 0;                                  ///< events in traceEvents, kept or not
  bool root_ok = false;                             ///< the document is an object or a list
  bool events_found = false;                        ///< a traceEvents list (or a top-level list) was seen
  std::string error;                                ///< JSON syntax error, with its byte offset

  bool null() override { return value(Field::Kind::Null, "null"); }
  bool boolean(bool v) override { return value(Field::Kind::Bool, v ? "true" : "false"); }
  bool number_integer(number_integer_t v) override { return value(Field::Kind::Number, std::to_string(v)); }
  bool number_unsigned(number_unsigned_t v) override { return value(Field::Kind::Number, std::to_string(v)); }
  bool number_float(number_float_t, const string_t& s) override { return value(Field::Kind::Number, s); }
  bool string(string_t& v) override { return value(Field::Kind::String, v); }
  bool binary(binary_t&) override { return value(Field::Kind::Null, ""); }
  bool key(string_t& k) override {
    if (!stack_.empty()) stack_.back().key = k;
    if (!stack_.empty() && stack_.back().ctx == Ctx::Capture) capture_ += (separator() + ("\"" + k + "\":"));
    return true;
  }
  bool start_object(std::size_t) override { return open(true); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_object() override { return close(true); }
  bool end_array() override { return close(false); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override {
    std::string what = ex.what();
    size_t colon = what.rfind(": ");
    error = fmt::format("not valid JSON at byte {} ({})", position,
                        colon == std::string::npos ? what : what.substr(colon + 2));
    return false;
  }

 private:
  enum class Ctx : uint8_t { Root, Events, Event, Args, Devices, Device, Capture, Skip };
  struct Frame {
    Ctx ctx;
    std::string key;  ///< last key seen in this object
  };
  std::vector<Frame> stack_;
  Event current_;
  std::string capture_;  ///< compact JSON of the list or object being captured into an arg
  std::string device_id_, device_name_;

  std::string separator() const {
    return capture_.empty() || capture_.back() == '[' || capture_.back() == '{' || capture_.back() == ':' ? "" : ",";
  }

  bool value(Field::Kind kind, std::string text) {
    if (stack_.empty()) return true;  // a bare scalar document: reported as "not a trace"
    Frame& f = stack_.back();
    switch (f.ctx) {
      case Ctx::Event:
        if (Field* slot = event_field(current_, f.key)) *slot = Field{kind, std::move(text)};
        break;
      case Ctx::Args:
        if (Field* slot = arg_field(current_, f.key)) *slot = Field{kind, std::move(text)};
        break;
      case Ctx::Device:
        if (f.key == "id") device_id_ = text;
        if (f.key == "name") device_name_ = text;
        break;
      case Ctx::Capture:
        capture_ += separator() + (kind == Field::Kind::String ? "\"" + text + "\"" : text);
        break;
      case Ctx::Events: ++seen; break;  // a scalar where an event belongs
      default: break;
    }
    return true;
  }

  bool open(bool object) {
    Ctx ctx = Ctx::Skip;
    if (stack_.empty()) {
      root_ok = true;
      ctx = object ? Ctx::Root : Ctx::Events;
      events_found |= !object;
    } else {
      const Frame& parent = stack_.back();
      switch (parent.ctx) {
        case Ctx::Root:
          if (parent.key == "traceEvents") ctx = object ? Ctx::Event : Ctx::Events, events_found = true;
          else if (parent.key == "deviceProperties" && !object) ctx = Ctx::Devices;
          break;
        case Ctx::Events: ctx = object ? Ctx::Event : Ctx::Skip; break;
        case Ctx::Event: ctx = object && parent.key == "args" ? Ctx::Args : Ctx::Skip; break;
        case Ctx::Args: ctx = parent.key == "Input type" ? Ctx::Capture : Ctx::Skip; break;
        case Ctx::Devices: ctx = object ? Ctx::Device : Ctx::Skip; break;
        case Ctx::Capture: ctx = Ctx::Capture; break;
        default: break;
      }
    }
    if (ctx == Ctx::Event) current_ = Event{}, current_.index = seen++;
    if (ctx == Ctx::Capture) {
      if (stack_.back().ctx != Ctx::Capture) capture_.clear();
      capture_ += separator() + (object ? "{" : "[");
    }
    if (ctx == Ctx::Device) device_id_.clear(), device_name_.clear();
    stack_.push_back(Frame{ctx, ""});
    return true;
  }

  bool close(bool object) {
    if (stack_.empty()) return true;
    const Ctx ctx = stack_.back().ctx;
    stack_.pop_back();
    if (ctx == Ctx::Event && keep(current_)) events.push_back(std::move(current_));
    if (ctx == Ctx::Device && !device_id_.empty() && !device_name_.empty()) device_names[device_id_] = device_name_;
    if (ctx == Ctx::Capture) {
      capture_ += object ? "}" : "]";
      if (!stack_.empty() && stack_.back().ctx == Ctx::Args)
        if (Field* slot = arg_field(current_, stack_.back().key)) *slot = Field{Field::Kind::List, capture_};
    }
    return true;
  }

  // Complete events ("ph": "X") of the categories read below; flow arrows, metadata and instants are dropped.
  static bool keep(const Event& e) { return e.ph.kind == Field::Kind::String && e.ph.text == "X"; }
};

enum class EventKind : uint8_t { Kernel, Memcpy, Memset, Op, Annotation, Runtime, Other };

// Category names of kineto (lower-case since 2021; "Kernel", "Memcpy", "Operator", "Runtime" before) and the
// legacy profiler's "CPU functions" / "CUDA functions" process names.
EventKind kind_of(const Event& e) {
  const std::string cat = ascii_lower(e.cat.text);
  if (cat == "kernel") return EventKind::Kernel;
  if (cat == "gpu_memcpy" || cat == "memcpy") return EventKind::Memcpy;
  if (cat == "gpu_memset" || cat == "memset") return EventKind::Memset;
  if (cat == "cpu_op" || cat == "operator") return EventKind::Op;
  if (cat == "user_annotation") return EventKind::Annotation;
  if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "runtime") return EventKind::Runtime;
  if (!e.cat.present() && e.pid.kind == Field::Kind::String) {
    if (e.pid.text == "CUDA functions") return EventKind::Kernel;
    if (e.pid.text == "CPU functions") return EventKind::Op;
  }
  return EventKind::Other;
}

std::string_view kind_label(EventKind k) {
  switch (k) {
    case EventKind::Kernel: return "kernel";
    case EventKind::Memcpy: return "memcpy";
    case EventKind::Memset: return "memset";
    default: return "event";
  }
}

// A whole number of a field (ids, FLOPs, bytes): nullopt unless it is a non-negative integer below 10^30.
std::optional<Count> whole_number(const Field& f) {
  if (f.kind != Field::Kind::Number) return std::nullopt;
  auto d = parse_decimal(f.text, NumberLocale::Dot);
  if (!d) return std::nullopt;
  auto v = d->exact();
  if (!v || *v < 0 || *v >= Count(1000000000000000LL) * Count(1000000000000000LL)) return std::nullopt;
  return v;
}

// A time in microseconds (ts, dur) as a value in nanoseconds; the reason when it cannot be used.
constexpr double kMaxMicroseconds = 1e15;  // ~31 years: anything longer is corrupt
std::optional<Value> microseconds(const Field& f, std::string* why) {
  if (!f.present()) return *why = "no duration", std::nullopt;
  if (f.kind != Field::Kind::Number) return *why = "duration is not a number", std::nullopt;
  auto d = parse_decimal(f.text, NumberLocale::Dot);
  if (!d) return *why = "unreadable duration", std::nullopt;
  if (d->mantissa < 0) return *why = "negative duration", std::nullopt;
  Value v = to_base(*d, "us");
  if (!std::isfinite(v.real) || v.real > kMaxMicroseconds * 1e3) return *why = "implausibly long duration", std::nullopt;
  return v;
}

std::optional<double> timestamp(const Field& f) {
  if (f.kind != Field::Kind::Number) return std::nullopt;
  auto d = parse_decimal(f.text, NumberLocale::Dot);
  if (!d) return std::nullopt;
  double v = d->to_double();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

// Precision of an operator from its first tensor input's dtype ("float", "c10::Half", ...).
std::string_view precision_of(const std::string& input_types) {
  static const std::vector<std::pair<std::string_view, std::string_view>> kTypes = {
      {"\"float\"", "fp32"}, {"\"double\"", "fp64"}, {"\"c10::Half\"", "fp16"}, {"\"Half\"", "fp16"},
      {"\"c10::BFloat16\"", "bf16"}, {"\"BFloat16\"", "bf16"}};
  size_t best = std::string::npos;
  std::string_view out;
  for (const auto& [spelling, precision] : kTypes) {
    size_t at = input_types.find(spelling);
    if (at < best) best = at, out = precision;
  }
  return out;
}

/// Problems of one kind, reported once with a count and the first event.
struct Skips {
  std::map<std::string, std::pair<int, std::string>> by_reason;
  void add(const std::string& reason, const Event& e, EventKind k) {
    auto& [n, first] = by_reason[reason];
    if (n++ == 0)
      first = fmt::format("traceEvents[{}] {} '{}'", e.index, kind_label(k), e.name.text.substr(0, 60));
  }
  void report(Profile& out, const Source& s) const {
    for (const auto& [reason, v] : by_reason)
      warn(out, s, 0, fmt::format("torch trace: {} event{} skipped: {} (first: {})", v.first, v.first == 1 ? "" : "s",
                                  reason, v.second));
  }
};

/// CPU-side spans (cpu_op, user_annotation) of one thread, nested by time.
struct Span {
  size_t event;           ///< index into the kept events
  bool op;                ///< cpu_op (else user_annotation)
  double begin, end;      ///< microseconds
  int parent = -1;        ///< enclosing span (index into spans)
};

std::vector<Span> nest(const std::vector<Event>& events, const std::vector<EventKind>& kinds, Skips& skips) {
  std::vector<Span> spans;
  std::map<std::pair<std::string, std::string>, std::vector<size_t>> by_thread;
  for (size_t i = 0; i < events.size(); ++i) {
    if (kinds[i] != EventKind::Op && kinds[i] != EventKind::Annotation) continue;
    std::string why;
    auto ts = timestamp(events[i].ts);
    auto dur = microseconds(events[i].dur, &why);
    if (!ts || !dur) {
      skips.add(ts ? why + " on a CPU-side event" : "CPU-side event without a numeric ts", events[i], kinds[i]);
      continue;
    }
    spans.push_back(Span{i, kinds[i] == EventKind::Op, *ts, *ts + dur->real / 1e3});
    by_thread[{events[i].pid.text, events[i].tid.text}].push_back(spans.size() - 1);
  }
  for (auto& [thread, members] : by_thread) {
    std::stable_sort(members.begin(), members.end(), [&](size_t a, size_t b) {
      return spans[a].begin != spans[b].begin ? spans[a].begin < spans[b].begin : spans[a].end > spans[b].end;
    });
    std::vector<size_t> open;
    for (size_t m : members) {
      while (!open.empty() && spans[open.back()].end <= spans[m].begin && spans[open.back()].end < spans[m].end)
        open.pop_back();
      if (!open.empty()) spans[m].parent = static_cast<int>(open.back());
      open.push_back(m);
    }
  }
  return spans;
}

}  // namespace

void parse_torch_trace(const Source& s, Profile& out) {
  TraceReader r;
  std::string_view text = s.text;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  try {
    json::sax_parse(text.begin(), text.end(), &r);
  } catch (const std::exception& e) {  // the SAX parser reports through parse_error; this is a safety net
    r.error = e.what();
  }
  if (!r.error.empty())
    warn(out, s, 0, fmt::format("torch trace: {}; {} events read before it are used", r.error, r.seen));
  if (!r.root_ok || !r.events_found) {
    warn(out, s, 0, "torch trace: no \"traceEvents\" list (not a torch.profiler Chrome trace)");
    return;
  }
  std::vector<EventKind> kinds;
  kinds.reserve(r.events.size());
  std::map<std::string, int> other;
  for (const Event& e : r.events) {
    kinds.push_back(kind_of(e));
    if (kinds.back() == EventKind::Other) ++other[e.cat.present() ? e.cat.text : "(no category)"];
  }
  Skips skips;
  std::vector<Span> spans = nest(r.events, kinds, skips);
  std::map<std::string, size_t> span_of_external;     // External id -> span
  std::map<std::string, const Event*> runtime_of;      // correlation -> runtime call
  std::vector<int> span_of_event(r.events.size(), -1);
  for (size_t i = 0; i < spans.size(); ++i) {
    span_of_event[spans[i].event] = static_cast<int>(i);
    const Field& ext = r.events[spans[i].event].external_id;
    if (ext.kind == Field::Kind::Number) span_of_external.emplace(ext.text, i);
  }
  for (size_t i = 0; i < r.events.size(); ++i)
    if (kinds[i] == EventKind::Runtime && r.events[i].correlation.kind == Field::Kind::Number)
      runtime_of.emplace(r.events[i].correlation.text, &r.events[i]);

  // the span that launched a GPU event: its External id, else the External id of the runtime call it correlates to
  auto launcher = [&](const Event& e) -> int {
    const Field* ext = &e.external_id;
    if (ext->kind != Field::Kind::Number && e.correlation.kind == Field::Kind::Number) {
      auto rt = runtime_of.find(e.correlation.text);
      if (rt != runtime_of.end()) ext = &rt->second->external_id;
    }
    if (ext->kind != Field::Kind::Number) return -1;
    auto it = span_of_external.find(ext->text);
    return it == span_of_external.end() ? -1 : static_cast<int>(it->second);
  };

  // operators carrying FLOPs; an operator inside another one with FLOPs is left out (counted by its parent)
  std::vector<bool> has_flops(spans.size(), false);
  int nested_flops = 0, bad_flops = 0;
  for (size_t i = 0; i < spans.size(); ++i) {
    const Field& f = r.events[spans[i].event].flops;
    if (!spans[i].op || !f.present()) continue;
    auto v = whole_number(f);
    if (!v) {
      if (bad_flops++ == 0) skips.add("'flops' is not a whole number", r.events[spans[i].event], EventKind::Op);
      continue;
    }
    has_flops[i] = *v > 0;
  }
  auto flops_owner = [&](int span) {  // outermost operator with FLOPs around `span`
    int owner = -1;
    for (int p = span; p >= 0; p = spans[p].parent)
      if (has_flops[p]) owner = p;
    return owner;
  };
  for (size_t i = 0; i < spans.size(); ++i)
    if (has_flops[i] && flops_owner(static_cast<int>(i)) != static_cast<int>(i)) has_flops[i] = false, ++nested_flops;

  const size_t first = out.kernels.size();
  std::map<int, size_t> longest;  // operator with FLOPs -> its longest kernel (index into out.kernels)
  int kernels = 0, linked = 0;
  for (size_t i = 0; i < r.events.size(); ++i) {
    const EventKind k = kinds[i];
    if (k != EventKind::Kernel && k != EventKind::Memcpy && k != EventKind::Memset) continue;
    const Event& e = r.events[i];
    std::string why;
    auto dur = microseconds(e.dur, &why);
    if (!dur) {
      skips.add(why, e, k);
      continue;
    }
    if (e.name.kind != Field::Kind::String || e.name.text.empty()) {
      skips.add("no name", e, k);
      continue;
    }
    KernelRecord rec = new_record(s, 0);
    rec.name = e.name.text;
    rec.memop = k != EventKind::Kernel;
    const Field& dev = e.device.present() ? e.device : e.pid;
    auto named = r.device_names.find(dev.text);
    rec.device = named != r.device_names.end() ? named->second : dev.text;
    if (auto c = whole_number(e.correlation); c && *c < (Count(1) << 62)) rec.launch_id = static_cast<int64_t>(*c);
    add_counter(rec, "Duration", *dur);
    if (auto b = whole_number(e.bytes); b && rec.memop) add_counter(rec, "Bytes transferred", Value{to_double(*b), b, "byte"});
    const int span = launcher(e);
    if (k == EventKind::Kernel) ++kernels, linked += span >= 0;
    std::vector<std::string> ranges;
    for (int p = span; p >= 0; p = spans[p].parent) {
      const Event& owner = r.events[spans[p].event];
      if (spans[p].op) rec.op = owner.name.text;  // ends at the outermost operator
      else ranges.push_back(owner.name.text);
    }
    for (auto it = ranges.rbegin(); it != ranges.rend(); ++it) rec.nvtx += (rec.nvtx.empty() ? "" : "/") + *it;
    out.kernels.push_back(std::move(rec));
    if (k != EventKind::Kernel) continue;
    const int owner = flops_owner(span);
    if (owner < 0) continue;
    auto [it, fresh] = longest.try_emplace(owner, out.kernels.size() - 1);
    if (!fresh && out.kernels[it->second].counters.at("Duration").real < dur->real) it->second = out.kernels.size() - 1;
  }

  // each operator's FLOPs on its longest kernel, under the precision of its first tensor input
  Count unplaced_flops = 0;
  int unplaced = 0, untyped = 0;
  for (size_t i = 0; i < spans.size(); ++i) {
    if (!has_flops[i]) continue;
    const Event& op = r.events[spans[i].event];
    const Count flops = *whole_number(op.flops);
    auto it = longest.find(static_cast<int>(i));
    if (it == longest.end()) {
      unplaced_flops += flops, ++unplaced;
      continue;
    }
    std::string_view precision = precision_of(op.input_type.text);
    if (precision.empty()) ++untyped, precision = "fp32";
    add_counter(out.kernels[it->second], fmt::format("torch.flops.{}", precision), Value{to_double(flops), flops, ""});
  }

  skips.report(out, s);
  const int records = static_cast<int>(out.kernels.size() - first);
  if (records == 0) {
    warn(out, s, 0, fmt::format("torch trace: no GPU kernel, memcpy or memset among {} events (CPU-only profile? "
                                "add ProfilerActivity.CUDA)", r.seen));
    return;
  }
  out.notes.push_back(fmt::format("{}: torch trace with {} kernels and {} memcpy/memset; {} of the kernels tied to "
                                  "the operator that launched them", s.file, kernels, records - kernels, linked));
  if (!longest.empty() || unplaced > 0)
    out.notes.push_back(fmt::format("{}: operator FLOPs (with_flops) counted once per operator, on its longest kernel; "
                                    "per-operator and total FLOPs are exact, per-kernel FLOP/s are not", s.file));
  if (nested_flops > 0)
    out.notes.push_back(fmt::format("{}: {} operators with FLOPs inside another operator with FLOPs not added again",
                                    s.file, nested_flops));
  if (unplaced > 0)
    warn(out, s, 0, fmt::format("torch trace: {} operators with {} FLOPs launched no GPU kernel (CPU-side); their "
                                "FLOPs are not in the totals", unplaced, to_string(unplaced_flops)));
  if (untyped > 0)
    warn(out, s, 0, fmt::format("torch trace: {} operators with FLOPs have no float/double/Half/BFloat16 input "
                                "(record_shapes=False?); their FLOPs are counted as fp32", untyped));
  if (!other.empty()) {
    std::string list;
    for (const auto& [cat, n] : other) list += fmt::format("{}{} {}", list.empty() ? "" : ", ", n, cat);
    out.notes.push_back(fmt::format("{}: events not about GPU work ignored: {}", s.file, list));
  }
}

}  // namespace ridge::ingest::detail
