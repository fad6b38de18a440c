#include "core/snapshot/render.hpp"
#include "core/table.hpp"
#include "core/terminal_safe.hpp"
#include "core/text.hpp"
#include "core/units.hpp"

namespace vramdoc::snapshot {

namespace {

std::string bytes(std::uint64_t b) { return format_bytes(b); }

std::string sites_table(const std::vector<SiteRow>& rows, bool times) {
  TextTable t(times ? std::vector<std::string>{"#", "bytes", "blocks", "from", "to", "call site"}
                    : std::vector<std::string>{"#", "bytes", "blocks", "call site"},
              times ? std::vector<TextTable::Align>{TextTable::Align::Right, TextTable::Align::Right, TextTable::Align::Right,
                                                    TextTable::Align::Right, TextTable::Align::Right, TextTable::Align::Left}
                    : std::vector<TextTable::Align>{TextTable::Align::Right, TextTable::Align::Right, TextTable::Align::Right,
                                                    TextTable::Align::Left});
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    if (times) t.add_row({std::to_string(i + 1), bytes(r.bytes), std::to_string(r.count), fixed(r.first_seconds, 2) + " s",
                          fixed(r.last_seconds, 2) + " s", r.where});
    else t.add_row({std::to_string(i + 1), bytes(r.bytes), std::to_string(r.count), r.where});
  }
  return t.render("    ");
}

std::string stacks(const std::vector<SiteRow>& rows, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < rows.size() && i < n; ++i) {
    if (rows[i].stack.empty()) continue;
    out += "    " + std::to_string(i + 1) + "  " + rows[i].where + "\n";
    for (const auto& f : rows[i].stack) out += std::string("        ") + (f.library ? "  " : "> ") + trace::describe(f) + "\n";
  }
  return out.empty() ? out : "  their stacks (innermost first; > the user's code):\n" + out;
}

std::string oom_text(const OomReport& o, const Fragmentation& f) {
  std::string out = "out of memory" + (o.t_seconds ? " at " + fixed(*o.t_seconds, 2) + " s" : std::string(" (the snapshot taken at it)")) +
                    ": asked for " + bytes(o.requested_bytes);
  if (o.device_free_bytes) out += ", the device had " + bytes(*o.device_free_bytes) + " free";
  out += "\n";
  if (o.allocated_bytes && o.reserved_bytes) {
    out += "  the allocator then: " + bytes(*o.allocated_bytes) + " allocated, " + bytes(*o.reserved_bytes) + " reserved";
    if (*o.reserved_bytes > *o.allocated_bytes) out += " (" + bytes(*o.reserved_bytes - *o.allocated_bytes) + " reserved but free)";
    out += "\n";
  }
  if (o.largest_free_bytes) {
    out += "  largest free block then: " + bytes(*o.largest_free_bytes) +
           (*o.largest_free_bytes >= o.requested_bytes ? " (the request would have fit)" : " (smaller than the request)") + "\n";
  } else if (f.when != "at the OOM") {
    out += "  the segments were dumped after the OOM: the free blocks of that moment are not known\n";
  }
  if (o.ooms > 1) out += "  " + std::to_string(o.ooms) + " OOM entries in the trace; this is the first\n";
  out += "  what held the memory then (" + bytes(o.alive_bytes) + "):\n" + sites_table(o.alive, false) + stacks(o.alive, 3);
  return out;
}

std::string fragmentation_text(const Fragmentation& f) {
  std::string out = "segments " + f.when + ": " + bytes(f.reserved_bytes) + " reserved in " + std::to_string(f.segments) +
                    " segment(s), " + bytes(f.allocated_bytes) + " allocated, " + bytes(f.free_bytes) + " free\n";
  out += "  free in partly used segments (empty_cache() cannot give it back): " + bytes(f.stranded_bytes) + " in " +
         std::to_string(f.partly_used_segments) + " segment(s); largest free block " + bytes(f.largest_free_bytes) + "\n";
  if (f.expandable_segments > 0) out += "  " + std::to_string(f.expandable_segments) + " expandable segment(s): they grow in place, free space at their end is not stranded\n";
  return out;
}

}  // namespace

std::string render_snapshot_text(const SnapshotReport& r) {
  std::string out = r.format + ": " + terminal_safe(r.source) + "\n  device " + std::to_string(r.device) + "; " + std::to_string(r.entries) +
                    " trace entries; " + std::to_string(r.segments) + " segments, " + std::to_string(r.blocks) + " blocks; " +
                    std::to_string(r.frames) + " distinct frames in " + std::to_string(r.stacks) + " distinct stacks\n";
  if (verdict_is_reports(r)) out += "  (the verdict's \"driver's number\" is the caching allocator's reserved bytes, without the CUDA context)\n";
  if (own_verdict_shown(r)) out += "  its allocator history, judged alone: " + r.diagnosis->summary + "\n";
  out += "\n";
  if (!dumped_at_oom(r))
    out += "alive at the dump: " + bytes(r.alive_bytes) + " allocated\n" + sites_table(r.alive, false) + stacks(r.alive, 3) + "\n";
  if (r.history) {
    if (r.growing.empty()) out += "growing across the recording: no call site kept " + std::to_string(kMinGrowingAllocations) + " or more allocations made over at least half of it\n\n";
    else out += "growing across the recording (allocations made during it and alive at its end):\n" + sites_table(r.growing, true) + stacks(r.growing, 3) + "\n";
  }
  if (r.oom) out += oom_text(*r.oom, r.fragmentation) + "\n";
  out += fragmentation_text(r.fragmentation);
  if (!r.notes.empty()) {
    out += "\nnotes:\n";
    for (const auto& n : r.notes) out += "  - " + terminal_safe(n) + "\n";
  }
  return out;
}

}  // namespace vramdoc::snapshot
