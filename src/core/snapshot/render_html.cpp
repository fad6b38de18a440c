// The snapshot's section of the job report as HTML: a fragment (its own <style> first), inline SVG, no script.
#include "core/snapshot/render.hpp"
#include "core/snapshot/render_svg.hpp"
#include "core/text.hpp"
#include "core/units.hpp"

namespace vramdoc::snapshot {

namespace {

std::string esc(const std::string& s) { return xml_escape(s); }

std::string sites_table(const std::vector<SiteRow>& rows, const char* cls, bool times) {
  if (rows.empty()) return "<p>None.</p>\n";
  std::string h = std::string("<table class='") + cls + "'><tr><th>#</th><th>bytes</th><th>blocks</th>" +
                  (times ? "<th>from</th><th>to</th>" : "") + "<th>call site</th><th>stack (innermost first)</th></tr>\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const SiteRow& r = rows[i];
    std::string stack;
    for (const auto& f : r.stack)
      stack += std::string(f.library ? "<span class='lib'>" : "<b>") + esc(trace::describe(f)) + (f.library ? "</span>" : "</b>") + "<br>";
    h += "<tr><td>" + std::to_string(i + 1) + "</td><td class='n'>" + format_bytes(r.bytes) + "</td><td class='n'>" +
         std::to_string(r.count) + "</td>" +
         (times ? "<td class='n'>" + fixed(r.first_seconds, 2) + " s</td><td class='n'>" + fixed(r.last_seconds, 2) + " s</td>" : "") +
         "<td>" + esc(r.where) + "</td><td class='stack'>" + stack + "</td></tr>\n";
  }
  return h + "</table>\n";
}

std::string oom_html(const OomReport& o) {
  std::string h = "<section class='oom'><h3>Out of memory</h3><p>Asked for <b>" + format_bytes(o.requested_bytes) + "</b>";
  if (o.device_free_bytes) h += "; the device had " + format_bytes(*o.device_free_bytes) + " free";
  if (o.allocated_bytes && o.reserved_bytes) h += "; the allocator held " + format_bytes(*o.allocated_bytes) + " allocated in " + format_bytes(*o.reserved_bytes) + " reserved";
  if (o.largest_free_bytes) h += "; its largest free block was " + format_bytes(*o.largest_free_bytes);
  h += ".</p>\n<h4>What held the memory then (" + format_bytes(o.alive_bytes) + ")</h4>\n";
  return h + sites_table(o.alive, "oom-alive", false) + "</section>\n";
}

std::string fragmentation_html(const Fragmentation& f) {
  std::string h = "<section class='fragmentation'><h3>Segments " + esc(f.when) + "</h3><p>" + format_bytes(f.reserved_bytes) +
                  " reserved in " + std::to_string(f.segments) + " segments: " + format_bytes(f.allocated_bytes) + " allocated, " +
                  format_bytes(f.free_bytes) + " free, of which " + format_bytes(f.stranded_bytes) + " in " +
                  std::to_string(f.partly_used_segments) + " partly used segments (empty_cache() cannot return it); largest free block " +
                  format_bytes(f.largest_free_bytes) + ".</p>\n<p class='legend'><span><i style='background:#4e79a7'></i>allocated</span>"
                  "<span><i style='background:#f4f4f4;border:1px solid #999'></i>free</span></p>\n";
  h += segment_map_html(f, 60);
  if (f.rows.size() > 60) h += "<p>" + std::to_string(f.segments - 60) + " smaller segments not drawn.</p>\n";
  return h + "</section>\n";
}

}  // namespace

std::string render_snapshot_html(const SnapshotReport& r, const std::string& id) {
  std::string h = "<style>"
      ".snapshot table{border-collapse:collapse;font-size:13px}.snapshot td,.snapshot th{padding:3px 8px;border-bottom:1px solid #eee;"
      "vertical-align:top;text-align:left}.snapshot td.n{text-align:right;white-space:nowrap}"
      ".snapshot .stack{font-family:monospace;font-size:11px}.snapshot .lib{color:#999}"
      ".snapshot .legend span{margin-right:14px;white-space:nowrap}.snapshot .legend i{display:inline-block;width:10px;height:10px;margin-right:4px}"
      "</style>\n<div class='snapshot'>\n";
  h += "<p>" + esc(r.source) + ": " + esc(r.format) + ", device " + std::to_string(r.device) + ": " + std::to_string(r.entries) +
       " trace entries, " + std::to_string(r.segments) + " segments, " + std::to_string(r.blocks) + " blocks, " +
       std::to_string(r.stacks) + " distinct stacks." + (verdict_is_reports(r) ? " In the verdict above, \"driver\" is the allocator's reserved bytes." : "") + "</p>\n";
  if (own_verdict_shown(r))
    h += "<p class='own-verdict' data-verdict='" + std::string(timeline::verdict_name(r.diagnosis->verdict)) + "'>Its allocator history, judged alone: " + esc(r.diagnosis->summary) + "</p>\n";
  if (r.history) h += "<h3>Allocated memory over time, by call site</h3>\n" + chart::render_figure(stacked_chart(r.chart, r.oom, id + "-stacked"));
  if (r.oom) h += oom_html(*r.oom);
  if (!dumped_at_oom(r))
    h += "<section class='alive'><h3>Alive at the dump (" + format_bytes(r.alive_bytes) + ")</h3>\n" + sites_table(r.alive, "alive-table", false) + "</section>\n";
  if (r.history)
    h += "<section class='growing'><h3>Growing across the recording</h3><p>Allocations made during the recording and alive at its end, from call sites that kept " +
         std::to_string(kMinGrowingAllocations) + " or more over at least half of it.</p>\n" + sites_table(r.growing, "growing-table", true) + "</section>\n";
  h += fragmentation_html(r.fragmentation);
  if (!r.notes.empty()) {
    h += "<h3>Notes</h3><ul>";
    for (const auto& n : r.notes) h += "<li>" + esc(n) + "</li>";
    h += "</ul>\n";
  }
  return h + "</div>\n";
}

}  // namespace vramdoc::snapshot
