// The chart of a snapshot's report: allocated bytes over time stacked by the top call sites,
// one column per time bucket (at the moment of the bucket's highest total), so the picture
// stays a few polygons however many allocations the trace holds.
#include <algorithm>

#include "core/snapshot/analysis_parts.hpp"

namespace vramdoc::snapshot::detail {

namespace {

struct Tracked {
  std::uint64_t size = 0;
  std::uint32_t site = 0;
};

// Replays the trace from the blocks alive at its start: change(site, bytes) for every block
// allocated (+) or freed (-), after(i) once entry i is applied.
template <class Change, class After>
void replay(const Trace& trace, const LiveSet& start, Sites& sites, Change&& change, After&& after) {
  std::unordered_map<std::uint64_t, Tracked> live;
  for (const auto& [addr, b] : start) {
    live[addr] = {b.size, sites.site_of_stack(b.stack)};
    change(live[addr].site, static_cast<std::int64_t>(b.size));
  }
  for (std::size_t i = 0; i < trace.size(); ++i) {
    const TraceEntry& e = trace[i];
    if (e.action == Action::Alloc) {
      const std::uint32_t site = sites.site_of_stack(e.stack);
      auto [it, added] = live.try_emplace(e.addr, Tracked{e.size, site});
      if (!added) change(it->second.site, -static_cast<std::int64_t>(it->second.size)), it->second = {e.size, site};
      change(site, static_cast<std::int64_t>(e.size));
    } else if (e.action == Action::FreeRequested) {
      if (auto it = live.find(e.addr); it != live.end()) {
        change(it->second.site, -static_cast<std::int64_t>(it->second.size));
        live.erase(it);
      }
    }
    after(i);
  }
}

// The call sites with the highest bytes at any moment, highest first.
std::vector<std::uint32_t> top_sites(const Trace& trace, const LiveSet& start, Sites& sites, std::size_t n) {
  std::unordered_map<std::uint32_t, std::int64_t> now, peak;
  replay(trace, start, sites, [&](std::uint32_t site, std::int64_t bytes) {
    const std::int64_t v = now[site] += bytes;
    if (bytes > 0) peak[site] = std::max(peak[site], v);
  }, [](std::size_t) {});
  std::vector<std::pair<std::int64_t, std::uint32_t>> order;
  for (const auto& [site, bytes] : peak) order.emplace_back(bytes, site);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < order.size() && i < n; ++i) out.push_back(order[i].second);
  return out;
}

}  // namespace

Chart build_chart(const Trace& trace, const LiveSet& live_at_start, Sites& sites, const Totals& start,
                  std::size_t buckets, std::size_t sites_shown) {
  Chart c;
  if (trace.empty() || buckets == 0) return c;
  std::unordered_map<std::uint32_t, std::size_t> band;
  for (std::uint32_t site : top_sites(trace, live_at_start, sites, sites_shown))
    band[site] = c.sites.size(), c.sites.push_back(sites.where(site));
  c.sites.push_back("other");
  const std::size_t rows = c.sites.size();
  const double span = double(trace.back().time_us - trace[0].time_us) / 1e6;
  c.bytes.assign(rows, std::vector<std::uint64_t>(buckets, 0));
  c.reserved.assign(buckets, 0);
  for (std::size_t b = 0; b < buckets; ++b) c.t.push_back(span * double(b + 1) / double(buckets));
  std::vector<std::int64_t> now(rows, 0), best(buckets, -1);
  std::int64_t total = 0, reserved = start.reserved;
  auto record = [&](std::size_t b) {  // the bands now, if this is the bucket's highest total so far
    c.reserved[b] = std::max(c.reserved[b], reserved > 0 ? std::uint64_t(reserved) : 0);
    if (total <= best[b]) return;
    best[b] = total;
    for (std::size_t k = 0; k < rows; ++k) c.bytes[k][b] = now[k] > 0 ? std::uint64_t(now[k]) : 0;
  };
  std::size_t current = 0;
  replay(trace, live_at_start, sites, [&](std::uint32_t site, std::int64_t bytes) {
    const auto it = band.find(site);
    now[it == band.end() ? rows - 1 : it->second] += bytes;
    total += bytes;
  }, [&](std::size_t i) {
    reserved = wrap_add(reserved, delta_of(trace[i]).reserved);
    const double t = double(trace[i].time_us - trace[0].time_us) / 1e6;
    const std::size_t b = span > 0 ? std::min(buckets - 1, static_cast<std::size_t>(t / span * double(buckets))) : 0;
    for (; current < b; ++current) record(current + 1);  // buckets without entries keep the state
    record(b);
  });
  for (; current + 1 < buckets; ++current) record(current + 1);
  return c;
}

}  // namespace vramdoc::snapshot::detail
