// Renderers of a snapshot's report: text for the terminal, JSON (a "schema" field; byte counts
// are integers), and a self-contained HTML page (charts as static SVG, no network). They return
// strings; only the CLI writes.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "core/snapshot/analysis.hpp"

namespace vramdoc::snapshot {

inline constexpr const char* kSnapshotSchema = "vramdoc.snapshot/1";

std::string render_snapshot_text(const SnapshotReport& r);
nlohmann::json snapshot_json(const SnapshotReport& r);
std::string render_snapshot_json(const SnapshotReport& r);
std::string render_snapshot_html(const SnapshotReport& r);

}  // namespace vramdoc::snapshot
