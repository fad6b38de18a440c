#include "core/timeline/reader.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/input_file.hpp"
#include "core/line_match.hpp"
#include "core/redact.hpp"
#include "core/timeline/marker.hpp"
#include "core/timeline/oom_message.hpp"
#include "core/timeline/sample_row.hpp"
#include "core/timeline/thinning.hpp"

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
    if (v.contains("peak")) m.allocated_peak_bytes = optional_bytes(v["peak"], where + " peak");
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
      if (!m.allocated_peak_bytes) m.allocated_peak_bytes = fields->allocated_peak_bytes;
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

// A version 2 sample's arrays: one value per series declared so far, one per header GPU, into
// `out` as (series index, sample).
void read_series_values(const json& row, const Columns& c, const Sample& total, const Timeline& tl,
                        std::vector<std::pair<std::size_t, Sample>>& out, const std::string& where) {
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
    const auto& series = tl.processes[k];
    for (std::size_t g = 0; g < tl.gpus.size(); ++g)
      if (series.who.gpu && tl.gpus[g].index == *series.who.gpu)
        s.device_used_bytes = optional_bytes(gpu_used[g], where + " gpu_used " + std::to_string(g));
    out.emplace_back(k, s);
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

// One line after the header other than a sample: a series, a mark, an OOM message or the end.
void read_body_line(const json& v, int version, Timeline& tl, const std::string& where) {
  if (v.is_object() && v.contains("mark")) tl.marks.push_back(parse_mark(v, where));
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
  Window window;
  Timeline tl;
  Columns c;
  int version = 0;
  bool header = false;
  std::size_t line_no = 0;
  std::optional<std::string> error;
  // The samples, kept within a fixed size: the job's, and each series'.
  SampleKeeper total;
  std::vector<SampleKeeper> series;
  std::vector<int> gpu_column;  // per series: its GPU's place in gpu_used, -1 when none
  std::vector<std::pair<std::size_t, Sample>> series_values;  // one line's, reused
  SampleRow row;                                               // one line's, reused
  std::size_t samples_read = 0;
  std::optional<double> last_t;
  std::optional<std::size_t> back_in_time;  // the first sample earlier than the one before it
  bool after_window = false;                // samples after the window's end were left out
};

namespace {

using State = LineReader::State;

// A sample read (the job's, and its series' values in state.series_values): order checked, the
// window applied, kept.
void keep_sample(State& s, const Sample& total) {
  const std::size_t index = s.samples_read++;
  if (s.last_t && total.t_seconds < *s.last_t && !s.back_in_time) s.back_in_time = index;
  s.last_t = total.t_seconds;
  if (!s.window.contains(total.t_seconds)) {
    if (s.window.until_seconds && total.t_seconds > *s.window.until_seconds) s.after_window = true;
    return;
  }
  s.total.add(total);
  for (const auto& [k, sample] : s.series_values) s.series[k].add(sample);
}

// A series declared: its keeper, every series' share of the budget, its GPU's column.
void add_series_keepers(State& s) {
  while (s.series.size() < s.tl.processes.size()) {
    const auto& who = s.tl.processes[s.series.size()].who;
    int column = -1;
    for (std::size_t g = 0; g < s.tl.gpus.size(); ++g)
      if (who.gpu && s.tl.gpus[g].index == *who.gpu) column = static_cast<int>(g);
    s.gpu_column.push_back(column);
    s.series.emplace_back();
  }
  const std::size_t cap = kept_samples_per_series(s.series.size() + 1);
  s.total.set_cap(cap);
  for (auto& k : s.series) k.set_cap(cap);
}

bool plain_bytes(const RowCell& cell) { return cell.kind == RowCell::Kind::Number && cell.number <= kMaxBytes; }
bool plain_optional_bytes(const RowCell& cell) { return cell.kind == RowCell::Kind::Null || plain_bytes(cell); }
std::optional<std::uint64_t> cell_bytes(const RowCell& cell) {
  if (cell.kind == RowCell::Kind::Null) return std::nullopt;
  return static_cast<std::uint64_t>(cell.number);
}

// The fast path of a sample line (sample_row.hpp): true when it was a plain, valid sample and is
// kept; false leaves the line to the JSON reader, which gives the same sample or the error.
bool fast_sample(State& s, std::string_view line) {
  if (!parse_sample_row(line, s.row)) return false;
  const Columns& c = s.c;
  const auto& cells = s.row.cells;
  if (cells.size() != c.count) return false;
  const RowCell& t = cells[static_cast<std::size_t>(c.t)];
  if (t.kind != RowCell::Kind::Number || t.number > 1e11 || !plain_bytes(cells[static_cast<std::size_t>(c.process_used)])) return false;
  for (int k : {c.device_used, c.allocated, c.reserved})
    if (k >= 0 && !plain_optional_bytes(cells[static_cast<std::size_t>(k)])) return false;
  const RowCell* values = nullptr;
  const RowCell* gpus = nullptr;
  if (c.series >= 0) {
    values = &cells[static_cast<std::size_t>(c.series)];
    gpus = &cells[static_cast<std::size_t>(c.gpu_used)];
    if (values->kind != RowCell::Kind::List || values->end - values->begin != s.tl.processes.size()) return false;
    if (gpus->kind != RowCell::Kind::List || gpus->end - gpus->begin != s.tl.gpus.size()) return false;
    for (const RowCell* list : {values, gpus})
      for (std::uint32_t i = list->begin; i < list->end; ++i)
        if (!plain_optional_bytes(s.row.items[i])) return false;
  }
  Sample total;
  total.t_seconds = t.number;
  total.process_used_bytes = static_cast<std::uint64_t>(cells[static_cast<std::size_t>(c.process_used)].number);
  if (c.device_used >= 0) total.device_used_bytes = cell_bytes(cells[static_cast<std::size_t>(c.device_used)]);
  if (c.allocated >= 0) total.allocated_bytes = cell_bytes(cells[static_cast<std::size_t>(c.allocated)]);
  if (c.reserved >= 0) total.reserved_bytes = cell_bytes(cells[static_cast<std::size_t>(c.reserved)]);
  s.series_values.clear();
  if (values) {
    for (std::size_t k = 0; k < s.tl.processes.size(); ++k) {
      const RowCell& v = s.row.items[values->begin + k];
      if (v.kind == RowCell::Kind::Null) continue;  // unknown at this tick
      Sample p;
      p.t_seconds = total.t_seconds;
      p.process_used_bytes = static_cast<std::uint64_t>(v.number);
      if (s.gpu_column[k] >= 0) p.device_used_bytes = cell_bytes(s.row.items[gpus->begin + static_cast<std::uint32_t>(s.gpu_column[k])]);
      s.series_values.emplace_back(k, p);
    }
  }
  keep_sample(s, total);
  return true;
}

// One line after the header through the JSON reader.
void read_line(State& s, std::string_view line, bool complete) {
  const std::string where = "line " + std::to_string(s.line_no);
  json v = json::parse(line, nullptr, false);
  if (v.is_discarded()) {
    if (!complete) return;  // the last line of a file still being written
    if (auto [at, word] = non_number(line); at != std::string_view::npos) throw BadInput{where + ": " + non_number_error(word)};
    throw BadInput{where + " is not JSON"};
  }
  if (v.is_array()) {
    const Sample total = parse_sample(v, s.c, where);
    s.series_values.clear();
    if (s.c.series >= 0) read_series_values(v, s.c, total, s.tl, s.series_values, where);
    keep_sample(s, total);
    return;
  }
  const std::size_t marks = s.tl.marks.size();
  read_body_line(v, s.version, s.tl, where);
  if (s.tl.marks.size() > marks && !s.window.contains(s.tl.marks.back().t_seconds)) s.tl.marks.pop_back();
  if (s.series.size() < s.tl.processes.size()) add_series_keepers(s);
}

// What the window leaves of a timeline read whole (the shared JSON).
void apply_window(Timeline& tl, const Window& w) {
  if (!w.since_seconds && !w.until_seconds) return;
  const bool after = w.until_seconds && !tl.samples.empty() && tl.samples.back().t_seconds > *w.until_seconds;
  std::erase_if(tl.samples, [&](const Sample& x) { return !w.contains(x.t_seconds); });
  std::erase_if(tl.marks, [&](const Mark& m) { return !w.contains(m.t_seconds); });
  if (after) tl.outcome = Outcome::Unknown, tl.messages.clear(), tl.oom.reset();
}

}  // namespace

LineReader::LineReader(std::string source, Window window) : state_(std::make_unique<State>()) {
  state_->source = std::move(source);
  state_->window = window;
}
LineReader::~LineReader() = default;
LineReader::LineReader(LineReader&&) noexcept = default;
LineReader& LineReader::operator=(LineReader&&) noexcept = default;

void LineReader::add(std::string_view line, bool complete) {
  State& s = *state_;
  if (s.error) return;
  ++s.line_no;
  try {
    if (!s.header) {
      json header = json::parse(line, nullptr, false);
      if (header.is_discarded() || !header.is_object() || !header.contains("vramdoc_timeline"))
        throw BadInput{"line 1 is not a vramdoc timeline header"};
      read_header(header, s.tl, s.version, s.c);
      s.header = true;
      return;
    }
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) return;
    if (line[first] == '[' && fast_sample(s, line)) return;
    read_line(s, line, complete);
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
  if (s.back_in_time) return make_error(s.source + ": sample " + std::to_string(*s.back_in_time) + " goes back in time");
  try {
    Timeline tl = std::move(s.tl);
    tl.samples = s.total.take();
    tl.thinned = s.total.thinning();
    for (std::size_t k = 0; k < tl.processes.size() && k < s.series.size(); ++k) {
      tl.processes[k].thinned = s.series[k].thinning();
      tl.processes[k].samples = s.series[k].take();
    }
    if (s.after_window) tl.outcome = Outcome::Unknown, tl.messages.clear(), tl.oom.reset();
    finish_timeline(tl, s.source);
    return tl;
  } catch (const BadInput& e) {
    return make_error(s.source + ": " + e.what);
  }
}

Result<Timeline> read_timeline(std::string_view text, const std::string& source, const Window& window) {
  try {
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return make_error(source + ": the file is empty");
    const auto first_end = text.find('\n');
    json first = json::parse(text.substr(0, first_end), nullptr, false);
    if (!first.is_discarded() && first.is_object() && first.contains("vramdoc_timeline")) {
      LineReader reader(source, window);
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
    apply_window(tl, window);
    return tl;
  } catch (const BadInput& e) {
    return make_error(source + ": " + e.what);
  } catch (const std::exception& e) {  // a wrongly typed field nlohmann rejects
    return make_error(source + ": not a valid timeline (" + std::string(e.what()) + ")");
  }
}

Result<Timeline> read_timeline_file(const std::string& path, const Window& window) {
  // The first line tells the format: ours is given to a LineReader line by line as the file is
  // read; the shared JSON (one document) is gathered whole and read at the end.
  const std::string name = input_name(path);
  std::string pending;          // a line not yet ended; the whole text for the shared JSON
  std::optional<bool> ours;     // told by the first line
  LineReader reader(name, window);
  std::optional<std::string> too_long;
  auto take_lines = [&]() {
    std::size_t pos = 0;
    for (std::size_t nl; (nl = pending.find('\n', pos)) != std::string::npos; pos = nl + 1)
      reader.add(std::string_view(pending).substr(pos, nl - pos), true);
    pending.erase(0, pos);
  };
  auto read = read_input_pieces(path, kMaxTimelineFileBytes, [&](std::string_view piece) {
    pending.append(piece);
    if (!ours) {
      const std::size_t nl = pending.find('\n');
      if (nl == std::string::npos) return true;
      const json first = json::parse(std::string_view(pending).substr(0, nl), nullptr, false);
      ours = !first.is_discarded() && first.is_object() && first.contains("vramdoc_timeline");
    }
    if (!*ours) return true;
    take_lines();
    if (pending.size() > kMaxTimelineLineBytes) {
      too_long = name + ": a line longer than " + std::to_string(kMaxTimelineLineBytes >> 20) + " MiB: not a timeline vramdoc reads";
      return false;
    }
    return true;
  });
  if (!read) return make_error(read.error());
  if (too_long) return make_error(*too_long);
  if (!ours || !*ours) return read_timeline(pending, name, window);  // the shared JSON, or a single line
  if (!pending.empty()) reader.add(pending, false);
  return reader.finish();
}

}  // namespace vramdoc::timeline
