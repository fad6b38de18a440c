// The per-process section of a report (JobVerdicts, job.hpp): text, JSON and HTML. They return
// strings / values; only the CLI writes.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "core/timeline/job.hpp"

namespace vramdoc::timeline {

// "processes (N; the job's verdict is the worst of theirs):" and a table: each process, its
// GPU, verdict, peak against its GPU's capacity, growth per step, steps; then the notes.
std::string render_processes_text(const JobVerdicts& j);
// {"verdict", "summary", "worst", "notes", "processes": [{"host", "pid", "rank", "local_rank",
// "gpu", "gpu_uuid", "command", "verdict", "summary", "peak_bytes", "capacity_bytes",
// "growth_bytes_per_step", "growth_bytes_per_s", "steps", "samples"}]}; unknown figures are null.
nlohmann::json processes_json(const JobVerdicts& j);
// An HTML section (id='processes') with the same table, escaped.
std::string render_processes_html(const JobVerdicts& j);

}  // namespace vramdoc::timeline
