// Renderers for one snapshot: the one-shot text table, JSON, and the CSV / JSONL log lines.
// They return strings; only the CLI writes. Unknown values are "n/a" in text, null in JSON and
// an empty cell in CSV: never 0.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "core/style.hpp"
#include "core/watch/model.hpp"

namespace vramdoc::watch {

// `vramdoc watch --once`: a GPU table, a process table, then hints and errors, "\n"-ended lines.
// With colour, a GPU's USED turns yellow from 75 % of its memory and red from 90 %.
std::string render_text(const Snapshot& snapshot, const Style& style = {});

// The snapshot's members as JSON (docs/watch.md), for the documents below.
nlohmann::ordered_json to_json(const Snapshot& snapshot);
// `watch --once --json`: the JSON document vramdoc.watch/1, pretty-printed.
std::string render_json(const Snapshot& snapshot);
// One line of a `--log FILE.jsonl`: the same document on one line, "\n"-ended.
std::string render_jsonl_line(const Snapshot& snapshot);

// The CSV header line ("\n"-ended); the columns render_csv_rows fills.
std::string csv_header();
// One row per GPU (kind "gpu") and one per process on it (kind "process"), "\n"-ended; a GPU
// whose sample failed gets a row with only its identity and the error.
std::string render_csv_rows(const Snapshot& snapshot);
// Quotes a CSV cell when it holds a comma, quote, CR or LF (RFC 4180).
std::string csv_escape(const std::string& cell);

}  // namespace vramdoc::watch
