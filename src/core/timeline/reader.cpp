#include "core/timeline/reader.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/input_file.hpp"
#include "core/line_match.hpp"
#include "core/redact.hpp"
#include "core/timeline/marker.hpp"
#include "core/timeline/oom_message.hpp"

namespace vramdoc::timeline {

using nlohmann::json;

std::optional<long> step_number(const std::string& label) {
  static const LineMatcher kStep = LineMatcher::fixed(R"((?i)^\s*(?:step|iter|iteration)\s*[:=#]?\s*([0-9]{1,12})\b)");
  const auto m = kStep.groups(label);  // RE2: a label of a million spaces is no deeper than one
  if (!m || m->empty() || !(*m)[0]) return std::nullopt;
  return std::stol(std::string(*(*m)[0]));
}

const char* outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::Ok: return "ok";
    case Outcome::Oom: return "oom";
    case Outcome::Failed: return "failed";
    case Outcome::Detached: return "detached";
    case Outcome::Unknown: break;
  }
  return "unknown";
}

namespace {

// Bounds on the header's command and env: a corrupt file cannot make the reader hold megabytes.
constexpr std::size_t kMaxHeaderItems = 256;
constexpr std::size_t kMaxHeaderText = 4096;

// Thrown inside this file only, turned into an Error at the public boundary.
struct BadInput {
  std::string what;
};

double number(const json& v, const std::string& where) {
  if (!v.is_number()) throw BadInput{where + " is not a number"};
  double d = v.get<double>();
  if (!std::isfinite(d)) throw BadInput{where + " is not a finite number"};
  return d;
}

std::uint64_t bytes(const json& v, const std::string& where) {
  double d = number(v, where);
  if (d < 0 || d > kMaxBytes) throw BadInput{where + " = " + v.dump() + " bytes is out of range"};
  return static_cast<std::uint64_t>(d);
}

std::optional<std::uint64_t> optional_bytes(const json& v, const std::string& where) {
  if (v.is_null()) return std::nullopt;
  return bytes(v, where);
}

// Where `text` holds NaN or Infinity outside a string (Python's json.dumps writes them; JSON has
// neither), and which; npos when it does not. Only called on text that failed to parse.
std::pair<std::size_t, std::string_view> non_number(std::string_view text) {
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else {
      for (std::string_view word : {"NaN", "Infinity"})
        if (text.substr(i, word.size()) == word) return {i, word};
    }
  }
  return {std::string_view::npos, {}};
}

std::string non_number_error(std::string_view word) {
  return std::string(word) + " is not a number of bytes (JSON has no NaN or Infinity: write null for a value not measured)";
}

std::uint32_t pid_number(const json& v, const std::string& where) {
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() == 0 || v.get<std::uint64_t>() > 0xFFFFFFFFu)
    throw BadInput{where + " = " + v.dump() + " is not a process id"};
  return static_cast<std::uint32_t>(v.get<std::uint64_t>());
}

Outcome parse_outcome(const json& v) {
  if (!v.is_string()) return Outcome::Unknown;
  const auto s = v.get<std::string>();
  return s == "ok"       ? Outcome::Ok
         : s == "oom"      ? Outcome::Oom
         : s == "failed"   ? Outcome::Failed
         : s == "detached" ? Outcome::Detached
                           : Outcome::Unknown;
}

// Column positions; t and process_used are required.
struct Columns {
  int t = -1, process_used = -1, device_used = -1, allocated = -1, reserved = -1;
  std::size_t count = 0;
  int series = -1, gpu_used = -1;  // version 2: per-process and per-GPU arrays
};

Columns parse_columns(const json& v) {
  if (!v.is_array()) throw BadInput{"\"columns\" is missing or not a list"};
  Columns c;
  c.count = v.size();
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) throw BadInput{"column " + std::to_string(i) + " is not a name"};
    const auto name = v[i].get<std::string>();
    const int k = static_cast<int>(i);
    if (name == "t") c.t = k;
    else if (name == "process_used") c.process_used = k;
    else if (name == "device_used") c.device_used = k;
    else if (name == "torch_allocated" || name == "allocated") c.allocated = k;
    else if (name == "torch_reserved" || name == "reserved") c.reserved = k;
    else if (name == "series") c.series = k;
    else if (name == "gpu_used") c.gpu_used = k;
  }
  if ((c.series < 0) != (c.gpu_used < 0)) throw BadInput{"\"columns\" must name both \"series\" and \"gpu_used\", or neither"};
  if (c.t < 0 || c.process_used < 0) throw BadInput{"\"columns\" must name \"t\" and \"process_used\""};
  return c;
}

Sample parse_sample(const json& row, const Columns& c, const std::string& where) {
  if (!row.is_array() || row.size() != c.count)
    throw BadInput{where + " is not a list of " + std::to_string(c.count) + " values"};
  Sample s;
  s.t_seconds = number(row[c.t], where + " t");
  // Up to 1e11 s: Unix times in seconds still read; beyond is a corrupt file.
  if (s.t_seconds < 0 || s.t_seconds > 1e11) throw BadInput{where + " t = " + row[c.t].dump() + " is out of range"};
  s.process_used_bytes = bytes(row[c.process_used], where + " process_used");
  if (c.device_used >= 0) s.device_used_bytes = optional_bytes(row[c.device_used], where + " device_used");
  if (c.allocated >= 0) s.allocated_bytes = optional_bytes(row[c.allocated], where + " torch_allocated");
  if (c.reserved >= 0) s.reserved_bytes = optional_bytes(row[c.reserved], where + " torch_reserved");
  return s;
}

Mark parse_mark(const json& v, const std::string& where) {
  Mark m;
  if (v.is_array() && v.size() >= 2 && v[1].is_string()) {  // shared: [t, label, allocated, reserved]
    m.t_seconds = number(v[0], where + " t");
    m.label = v[1].get<std::string>();
    if (v.size() > 2) m.allocated_bytes = optional_bytes(v[2], where + " allocated");
    if (v.size() > 3) m.reserved_bytes = optional_bytes(v[3], where + " reserved");
  } else if (v.is_object() && v.contains("mark") && v["mark"].is_string()) {  // ours
    m.t_seconds = number(v.value("t", json()), where + " t");
    m.label = v["mark"].get<std::string>();
    if (v.contains("allocated")) m.allocated_bytes = optional_bytes(v["allocated"], where + " allocated");
    if (v.contains("reserved")) m.reserved_bytes = optional_bytes(v["reserved"], where + " reserved");
    if (v.contains("pid") && !v["pid"].is_null()) m.pid = pid_number(v["pid"], where + " pid");
  } else {
    throw BadInput{where + " is not a mark [t, label, ...]"};
  }
  // Version 1 kept the marks file's line as the label: "step 12 allocated=1048576 reserved=...".
  // Its fields are the framework's figures at the step end; they are read, not left as text.
  if (!m.allocated_bytes && m.label.find('=') != std::string::npos) {
    if (auto fields = parse_marker_line(m.label); fields && fields->allocated_bytes) {
      m.label = fields->label;
      m.allocated_bytes = fields->allocated_bytes;
      if (!m.reserved_bytes) m.reserved_bytes = fields->reserved_bytes;
      if (!m.pid) m.pid = fields->pid;
    }
  }
  if (m.label.size() > 200) m.label.resize(200);
  return m;
}

void check_order(const Timeline& tl) {
  for (std::size_t i = 1; i < tl.samples.size(); ++i)
    if (tl.samples[i].t_seconds < tl.samples[i - 1].t_seconds)
      throw BadInput{"sample " + std::to_string(i) + " goes back in time"};
}

Timeline read_shared(const json& doc) {
  if (!doc.is_object()) throw BadInput{"not a timeline: a JSON object with \"samples\" was expected"};
  if (!doc.contains("samples") || !doc["samples"].is_array()) throw BadInput{"\"samples\" is missing or not a list"};
  Timeline tl;
  if (doc.contains("name") && doc["name"].is_string()) tl.name = doc["name"].get<std::string>();
  if (doc.contains("device") && doc["device"].is_string()) tl.device = doc["device"].get<std::string>();
  if (doc.contains("total") && !doc["total"].is_null()) tl.total_bytes = bytes(doc["total"], "\"total\"");
  if (doc.contains("outcome")) tl.outcome = parse_outcome(doc["outcome"]);
  if (doc.contains("message") && doc["message"].is_string()) tl.messages.push_back(doc["message"].get<std::string>());
  const Columns c = doc.contains("columns") ? parse_columns(doc["columns"]) : Columns{0, 1, -1, -1, -1, 2};
  const auto& rows = doc["samples"];
  tl.samples.reserve(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) tl.samples.push_back(parse_sample(rows[i], c, "sample " + std::to_string(i)));
  if (doc.contains("marks") && doc["marks"].is_array())
    for (std::size_t i = 0; i < doc["marks"].size(); ++i)
      tl.marks.push_back(parse_mark(doc["marks"][i], "mark " + std::to_string(i)));
  return tl;
}

// The most series (a process on a GPU) a file may declare: far more than a job has.
constexpr std::size_t kMaxSeries = 4096;

std::optional<std::string> optional_string(const json& o, const char* key) {
  if (o.contains(key) && o[key].is_string()) return o[key].get<std::string>();
  return std::nullopt;
}

std::optional<long> optional_rank(const json& o, const char* key, const std::string& where) {
  if (!o.contains(key) || o[key].is_null()) return std::nullopt;
  if (!o[key].is_number_integer() || o[key].get<long>() < 0) throw BadInput{where + " \"" + key + "\" is not a rank"};
  return o[key].get<long>();
}

// Version 2's header fields: host, wall-clock start, the machine's GPUs.
void read_header_v2(const json& header, Timeline& tl) {
  tl.host = optional_string(header, "host").value_or("");
  if (header.contains("start_unix_s") && !header["start_unix_s"].is_null()) {
    tl.start_unix_seconds = number(header["start_unix_s"], "header \"start_unix_s\"");
    if (*tl.start_unix_seconds < 0 || *tl.start_unix_seconds > 1e11) throw BadInput{"header \"start_unix_s\" is out of range"};
  }
  const json gpus = header.value("gpus", json::array());
  if (!gpus.is_array() || gpus.size() > 1024) throw BadInput{"header \"gpus\" is not a list of GPUs"};
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const std::string where = "header GPU " + std::to_string(i);
    if (!gpus[i].is_object() || !gpus[i].contains("index") || !gpus[i]["index"].is_number_unsigned())
      throw BadInput{where + " has no \"index\""};
    GpuInfo g;
    g.index = gpus[i]["index"].get<unsigned>();
    g.uuid = optional_string(gpus[i], "uuid");
    g.pci_bus_id = optional_string(gpus[i], "pci_bus_id");
    g.name = optional_string(gpus[i], "name");
    if (gpus[i].contains("total")) g.total_bytes = optional_bytes(gpus[i]["total"], where + " total");
    tl.gpus.push_back(std::move(g));
  }
}

// {"series": {"id", "pid", "gpu", "rank", "local_rank", "command"}}: ids count up from 0.
void read_series(const json& v, Timeline& tl, const std::string& where) {
  const json& s = v["series"];
  if (!s.is_object()) throw BadInput{where + " is not a series"};
  if (tl.processes.size() >= kMaxSeries) throw BadInput{where + ": more than " + std::to_string(kMaxSeries) + " series"};
  if (!s.contains("id") || s["id"] != tl.processes.size())
    throw BadInput{where + ": series id " + s.value("id", json()).dump() + " where " + std::to_string(tl.processes.size()) + " was next"};
  ProcessSeries p;
  p.who.host = tl.host;
  p.who.pid = pid_number(s.value("pid", json()), where + " pid");
  if (s.contains("gpu") && !s["gpu"].is_null()) {
    if (!s["gpu"].is_number_unsigned()) throw BadInput{where + " gpu is not a GPU index"};
    p.who.gpu = s["gpu"].get<unsigned>();
  }
  p.who.rank = optional_rank(s, "rank", where);
  p.who.local_rank = optional_rank(s, "local_rank", where);
  p.who.command = optional_string(s, "command").value_or("");
  if (p.who.command.size() > 200) p.who.command.resize(200);
  p.who.command = redact_text(p.who.command);
  tl.processes.push_back(std::move(p));
}

// A version 2 sample's arrays: one value per series declared so far, one per header GPU.
void read_series_values(const json& row, const Columns& c, const Sample& total, Timeline& tl, const std::string& where) {
  const json &values = row[c.series], &gpu_used = row[c.gpu_used];
  if (!values.is_array() || values.size() != tl.processes.size())
    throw BadInput{where + " series is not a list of " + std::to_string(tl.processes.size()) + " values"};
  if (!gpu_used.is_array() || gpu_used.size() != tl.gpus.size())
    throw BadInput{where + " gpu_used is not a list of " + std::to_string(tl.gpus.size()) + " values"};
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (values[k].is_null()) continue;  // unknown at this tick
    Sample s;
    s.t_seconds = total.t_seconds;
    s.process_used_bytes = bytes(values[k], where + " series " + std::to_string(k));
    auto& series = tl.processes[k];
    for (std::size_t g = 0; g < tl.gpus.size(); ++g)
      if (series.who.gpu && tl.gpus[g].index == *series.who.gpu)
        s.device_used_bytes = optional_bytes(gpu_used[g], where + " gpu_used " + std::to_string(g));
    series.samples.push_back(s);
  }
}

void read_end(const json& end, Timeline& tl, const std::string& where) {
  tl.outcome = parse_outcome(end.value("outcome", json()));
  if (end.contains("exit_status") && end["exit_status"].is_number_integer()) tl.exit_status = end["exit_status"].get<int>();
  if (end.contains("total") && !end["total"].is_null()) tl.total_bytes = bytes(end["total"], where + " end total");
}

// The header's "command" (strings) and optional "env" ({name: value}, allocator settings): bounded.
void read_command_and_env(const json& header, Timeline& tl) {
  if (header.contains("command") && header["command"].is_array())
    for (const auto& arg : header["command"])
      if (arg.is_string() && tl.command.size() < kMaxHeaderItems) tl.command.push_back(arg.get<std::string>().substr(0, kMaxHeaderText));
  if (!header.contains("env") || header["env"].is_null()) return;
  if (!header["env"].is_object()) throw BadInput{"header \"env\" is not an object of names and values"};
  for (const auto& [name, value] : header["env"].items()) {
    if (!value.is_string()) throw BadInput{"header \"env\" " + name + " is not a string"};
    if (tl.environment.size() < kMaxHeaderItems) tl.environment[name.substr(0, kMaxHeaderText)] = value.get<std::string>().substr(0, kMaxHeaderText);
  }
}

// Our format's header line: version, name, device, capacity, interval, columns, command, env.
void read_header(const json& header, Timeline& tl, int& version, Columns& c) {
  const json v = header["vramdoc_timeline"];
  if (v != 1 && v != 2) throw BadInput{"timeline format version " + v.dump() + " is not supported (this vramdoc reads versions 1 and 2)"};
  version = v.get<int>();
  tl.name = header.value("name", "");
  if (header.contains("device") && header["device"].is_string()) tl.device = header["device"].get<std::string>();
  if (header.contains("total") && !header["total"].is_null()) tl.total_bytes = bytes(header["total"], "header \"total\"");
  if (header.contains("interval_s") && header["interval_s"].is_number()) {
    const double interval = header["interval_s"].get<double>();
    if (interval > 0 && interval <= 3600) tl.interval_seconds = interval;  // else unknown: no regular grid
  }
  if (version == 2) read_header_v2(header, tl);
  c = parse_columns(header.value("columns", json()));
  read_command_and_env(header, tl);
}

// One line after the header: a sample, a series, a mark, an OOM message or the end.
void read_body_line(const json& v, const Columns& c, int version, Timeline& tl, const std::string& where) {
  if (v.is_array()) {
    tl.samples.push_back(parse_sample(v, c, where));
    if (c.series >= 0) read_series_values(v, c, tl.samples.back(), tl, where);
  } else if (v.is_object() && v.contains("mark")) tl.marks.push_back(parse_mark(v, where));
  else if (v.is_object() && v.contains("series") && version == 2) read_series(v, tl, where);
  else if (v.is_object() && v.contains("oom_message") && v["oom_message"].is_string()) tl.messages.push_back(v["oom_message"].get<std::string>());
  else if (v.is_object() && v.contains("end") && v["end"].is_object()) read_end(v["end"], tl, where);
  else throw BadInput{where + " is neither a sample, a series, a mark, an oom_message nor the end"};
}

// What every reader does last: samples in order, secrets redacted, a name, the outcome an OOM message implies.
void finish_timeline(Timeline& tl, const std::string& source) {
  check_order(tl);
  // A timeline from elsewhere (another tool, an older vramdoc) may carry secrets: reports do not.
  tl.name = redact_text(tl.name);
  for (auto& m : tl.messages) m = redact_text(m);
  for (auto& m : tl.marks) m.label = redact_text(m.label);
  tl.command = redact_argv(tl.command);
  for (auto& [variable, value] : tl.environment) value = is_secret_name(variable) ? std::string(kRedacted) : redact_text(value);
  if (tl.name.empty()) tl.name = source;
  for (const auto& m : tl.messages)
    if (parse_oom_message(m) && tl.outcome == Outcome::Unknown) tl.outcome = Outcome::Oom;
}

}  // namespace

struct LineReader::State {
  std::string source;
  Timeline tl;
  Columns c;
  int version = 0;
  bool header = false;
  std::size_t line_no = 0;
  std::optional<std::string> error;
};

LineReader::LineReader(std::string source) : state_(std::make_unique<State>()) { state_->source = std::move(source); }
LineReader::~LineReader() = default;
LineReader::LineReader(LineReader&&) noexcept = default;
LineReader& LineReader::operator=(LineReader&&) noexcept = default;

void LineReader::add(std::string_view line, bool complete) {
  State& s = *state_;
  if (s.error) return;
  const std::string where = "line " + std::to_string(++s.line_no);
  try {
    if (!s.header) {
      json header = json::parse(line, nullptr, false);
      if (header.is_discarded() || !header.is_object() || !header.contains("vramdoc_timeline"))
        throw BadInput{"line 1 is not a vramdoc timeline header"};
      read_header(header, s.tl, s.version, s.c);
      s.header = true;
      return;
    }
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
    json v = json::parse(line, nullptr, false);
    if (v.is_discarded()) {
      if (!complete) return;  // the last line of a file still being written
      if (auto [at, word] = non_number(line); at != std::string_view::npos) throw BadInput{where + ": " + non_number_error(word)};
      throw BadInput{where + " is not JSON"};
    }
    read_body_line(v, s.c, s.version, s.tl, where);
  } catch (const BadInput& e) {
    s.error = e.what;
  } catch (const std::exception& e) {  // a wrongly typed field nlohmann rejects
    s.error = "not a valid timeline (" + std::string(e.what()) + ")";
  }
}

Result<Timeline> LineReader::finish() {
  State& s = *state_;
  if (s.error) return make_error(s.source + ": " + *s.error);
  if (!s.header) return make_error(s.source + ": the file is empty");
  try {
    Timeline tl = std::move(s.tl);
    finish_timeline(tl, s.source);
    return tl;
  } catch (const BadInput& e) {
    return make_error(s.source + ": " + e.what);
  }
}

Result<Timeline> read_timeline(std::string_view text, const std::string& source) {
  try {
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return make_error(source + ": the file is empty");
    const auto first_end = text.find('\n');
    json first = json::parse(text.substr(0, first_end), nullptr, false);
    if (!first.is_discarded() && first.is_object() && first.contains("vramdoc_timeline")) {
      LineReader reader(source);
      for (std::size_t pos = 0; pos < text.size();) {
        const std::size_t next = text.find('\n', pos);
        reader.add(text.substr(pos, next == std::string_view::npos ? std::string_view::npos : next - pos), next != std::string_view::npos);
        pos = next == std::string_view::npos ? text.size() : next + 1;
      }
      return reader.finish();
    }
    json doc = json::parse(text, nullptr, false);
    if (doc.is_discarded()) {
      if (auto [at, word] = non_number(text); at != std::string_view::npos) {
        const auto line_no = 1 + std::count(text.begin(), text.begin() + static_cast<long>(at), '\n');
        return make_error(source + ": line " + std::to_string(line_no) + ": " + non_number_error(word));
      }
      return make_error(source + ": not a timeline (not JSON, or cut short)");
    }
    Timeline tl = read_shared(doc);
    finish_timeline(tl, source);
    return tl;
  } catch (const BadInput& e) {
    return make_error(source + ": " + e.what);
  } catch (const std::exception& e) {  // a wrongly typed field nlohmann rejects
    return make_error(source + ": not a valid timeline (" + std::string(e.what()) + ")");
  }
}

Result<Timeline> read_timeline_file(const std::string& path) {
  auto text = read_input_file(path, kMaxTimelineFileBytes);
  if (!text) return make_error(text.error());
  return read_timeline(*text, input_name(path));
}

}  // namespace vramdoc::timeline
