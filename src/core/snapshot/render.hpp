// Renderers of a snapshot's sections of the job report (core/report/job_report.hpp): text for
// the terminal, JSON (a "schema" field; byte counts are integers), an HTML fragment (charts as
// static SVG, no network). The diagnosis is the report's own; these render what only a snapshot
// shows. They return strings; only the CLI writes.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "core/snapshot/analysis.hpp"

namespace vramdoc::snapshot {

inline constexpr const char* kSnapshotSchema = "vramdoc.snapshot/1";

// What was read, who holds the memory, what grew, the OOM, segments, notes.
std::string render_snapshot_text(const SnapshotReport& r);
// The same as one object, with "schema".
nlohmann::json snapshot_json(const SnapshotReport& r);
// The same as HTML: the stacked chart, the tables, the segment map (its own <style> first).
std::string render_snapshot_html(const SnapshotReport& r, const std::string& id = "snapshot");

}  // namespace vramdoc::snapshot
