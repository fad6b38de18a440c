// The suites: each runs its launchers and turns their samples into table rows and curves.
#include <algorithm>
#include <thread>

#include "kernels/runner.hpp"
#include "core/units.hpp"

namespace vramdoc::bench {

namespace {

Measure bandwidth(const char* level, std::string name, const Result<Timed>& r, std::optional<double> peak,
                  const char* counted) {
  Measure m;
  m.level = level;
  m.name = std::move(name);
  m.unit = Unit::GBps;
  m.peak = peak;
  m.bytes_counted = counted;
  if (!r) {
    m.error = r.error();
    return m;
  }
  m.result = rate_gbps(r->bytes_per_sample, r->seconds);
  m.config = r->config;
  m.variants = r->variants;
  return m;
}

Measure waived(const char* level, std::string name, std::string why) {
  Measure m;
  m.level = level;
  m.name = std::move(name);
  m.waived = std::move(why);
  return m;
}

// L1 and shared memory deliver 128 bytes per clock per SM (Volta to Hopper).
std::optional<double> on_chip_peak(const SuiteContext& ctx) {
  if (!ctx.sm_mhz) return std::nullopt;
  return 128.0 * ctx.props.sm_count * *ctx.sm_mhz * 1e6 / 1e9;
}

// Pinned copies: a few transfer shapes (size, chunk) are tried, three samples each, and the
// fastest median is then timed, as the stream kernels are tuned. Both directions at once: how the
// copy engines and the link share out between the directions varies with the shape the most.
Result<Timed> tuned_pinned_copy(CopyKind kind, std::uint64_t bytes, int samples, bool quick) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> shapes = {{bytes, bytes / 4}, {bytes, bytes}};
  if (!quick) shapes.insert(shapes.end(), {{bytes / 2, bytes / 16}, {bytes / 4, bytes / 32}});
  std::pair<std::uint64_t, std::uint64_t> best{0, 0};
  double best_rate = 0;
  std::string tried;
  // At least 4 GiB per sample (1 GiB quick): tens of milliseconds on a PCIe 5 link.
  const std::uint64_t per_sample = quick ? GiB : 4 * GiB;
  auto loops_for = [&](std::uint64_t size) { return static_cast<int>(std::max<std::uint64_t>(1, per_sample / size)); };
  for (auto [size, chunk] : shapes) {
    if (size < MiB || chunk < MiB) continue;
    auto t = host_copy(kind, true, size, chunk, 1, 3, loops_for(size));
    if (!t) return t;
    const double rate = rate_gbps(t->bytes_per_sample, t->seconds).median;
    tried += (tried.empty() ? "" : "; ") + format_bytes(size, 0) + " in " + format_bytes(chunk, 0) + " chunks: " +
             std::to_string(static_cast<int>(rate));
    if (rate > best_rate) best_rate = rate, best = {size, chunk};
  }
  if (best_rate == 0) return make_error("pinned copy: no transfer shape fits the budget");
  auto out = host_copy(kind, true, best.first, best.second, 1, samples, loops_for(best.first));
  if (out) out->variants = tried;
  return out;
}

}  // namespace

void run_device_suite(SuiteContext& ctx, BenchReport& report) {
  const std::pair<StreamOp, const char*> ops[] = {
      {StreamOp::Read, "read"}, {StreamOp::Write, "write"}, {StreamOp::Copy, "copy"}, {StreamOp::Triad, "triad"}};
  for (const auto& [op, name] : ops) {
    ctx.progress(std::string("device memory: ") + name);
    const char* counted = op == StreamOp::Read ? "bytes read" : op == StreamOp::Write ? "bytes written" : "read + write";
    report.measures.push_back(bandwidth("device", name, device_stream(op, ctx.stream_bytes, ctx.samples),
                                        ctx.device_peak_gbps, counted));
  }
}

void run_l2_suite(SuiteContext& ctx, BenchReport& report) {
  const auto footprints = l2_footprints(ctx.props.l2_bytes, ctx.options.quick);
  std::vector<Measure> in_l2;
  for (auto f : footprints) {
    ctx.progress("L2: " + format_bytes(f, 1) + " footprint");
    auto m = bandwidth("L2", "read, " + format_bytes(f, 1), l2_read(f, ctx.samples), std::nullopt, "bytes read");
    if (m.error.empty()) report.l2_sweep.push_back({f, m.result.median, m.result.max});
    if (f * 10 <= ctx.props.l2_bytes * 6 || !m.error.empty()) in_l2.push_back(std::move(m));
  }
  // The table keeps the smallest and the largest footprint well inside L2; the sweep has all.
  if (!in_l2.empty()) report.measures.push_back(in_l2.front());
  if (in_l2.size() > 1) report.measures.push_back(in_l2.back());
}

void run_l1_suite(SuiteContext& ctx, BenchReport& report) {
  if (!ctx.sm_mhz) {
    ctx.progress("L1: reading the SM clock");
    if (auto c = chase_latency(16 * KiB, 5)) ctx.sm_mhz = c->sm_mhz;
  }
  std::vector<Measure> fitting;
  for (auto f : l1_footprints(ctx.options.quick)) {
    ctx.progress("L1: " + format_bytes(f, 0) + " per SM");
    auto m = bandwidth("L1", "read, " + format_bytes(f, 0) + " per SM", l1_read(f, ctx.samples), on_chip_peak(ctx),
                       "bytes read");
    if (m.error.empty()) report.l1_sweep.push_back({f, m.result.median, m.result.max});
    if (f * 4 <= ctx.props.l1_bytes * 3 || !m.error.empty()) fitting.push_back(std::move(m));
  }
  if (!fitting.empty()) report.measures.push_back(fitting.front());
  if (fitting.size() > 1) report.measures.push_back(fitting.back());
  ctx.progress("shared memory: read");
  report.measures.push_back(
      bandwidth("shared", "read, 32 KiB per block", shared_read(ctx.samples), on_chip_peak(ctx), "bytes read"));
}

void run_latency_suite(SuiteContext& ctx, BenchReport& report) {
  const std::uint64_t cap = ctx.options.quick ? 512 * MiB : 4 * GiB;
  std::uint64_t max_bytes = 64 * MiB;
  while (max_bytes * 2 <= std::min(cap, ctx.budget_bytes / 2)) max_bytes *= 2;
  std::vector<double> mhz;
  for (auto f : latency_footprints(ctx.props.l2_bytes, max_bytes, ctx.options.quick)) {
    ctx.progress("latency: " + format_bytes(f, 1) + " footprint");
    auto c = chase_latency(f, 11);
    if (!c) {
      Measure m = waived("latency", "chase " + format_bytes(f, 1), "");
      m.error = c.error();
      report.measures.push_back(std::move(m));
      return;
    }
    report.latency.push_back({f, c->cycles, c->ns});
    mhz.push_back(c->sm_mhz);
  }
  if (!mhz.empty()) {
    report.sm_clock_mhz = summarize(mhz).median;
    ctx.sm_mhz = report.sm_clock_mhz;
  }
  ctx.progress("latency: shared memory");
  Measure shared;
  shared.level = "latency";
  shared.name = "shared memory";
  shared.unit = Unit::Cycles;
  shared.config = "32 KiB, random chase";
  if (auto c = shared_latency(11)) {
    shared.result = summarize({c->cycles});
    shared.ns = c->ns;
  } else {
    shared.error = c.error();
  }
  report.measures.push_back(std::move(shared));
  for (auto& m : latency_measures(report.latency, ctx.props.l1_bytes, ctx.props.l2_bytes)) {
    report.measures.push_back(std::move(m));
  }
}

void run_host_suite(SuiteContext& ctx, BenchReport& report) {
  const std::uint64_t bytes = std::min<std::uint64_t>(ctx.options.quick ? 256 * MiB : GiB, ctx.budget_bytes / 2);
  const auto& peak = ctx.link_peak_gbps;
  struct Case {
    const char* name;
    CopyKind kind;
    bool pinned;
  };
  const Case cases[] = {{"H2D pinned", CopyKind::H2D, true},
                        {"D2H pinned", CopyKind::D2H, true},
                        {"bidirectional pinned (H2D)", CopyKind::Bidir, true},
                        {"H2D pageable", CopyKind::H2D, false},
                        {"D2H pageable", CopyKind::D2H, false}};
  for (const auto& c : cases) {
    ctx.progress(std::string("host link: ") + c.name);
    auto r = c.pinned ? tuned_pinned_copy(c.kind, bytes, ctx.samples, ctx.options.quick)
                      : host_copy(c.kind, c.pinned, bytes, bytes / 4, 1, ctx.samples);
    report.measures.push_back(bandwidth("host link", c.name, r, peak, "once"));
  }
  std::vector<std::uint64_t> chunks = {MiB, 4 * MiB, 16 * MiB, 64 * MiB};
  std::vector<int> streams = {1, 2, 4};
  if (ctx.options.quick) chunks = {4 * MiB, 64 * MiB}, streams = {1, 4};
  for (auto chunk : chunks) {
    for (int s : streams) {
      const std::string name = "H2D " + format_bytes(chunk, 0) + " chunks x " + std::to_string(s) + " streams";
      ctx.progress("host link: " + name);
      report.measures.push_back(
          bandwidth("host link", name, host_copy(CopyKind::H2D, true, bytes, chunk, s, ctx.samples), peak, "once"));
    }
  }
}

void run_um_suite(SuiteContext& ctx, BenchReport& report) {
  const std::uint64_t bytes = std::min(plan_managed_bytes(ctx.props.free_bytes, ctx.options.quick), ctx.budget_bytes);
  if (!ctx.props.managed_memory || bytes == 0) {
    const char* why = bytes == 0 ? "too little free memory for a managed buffer under a quarter of it"
                                 : "the device has no concurrent managed access (no on-demand migration)";
    report.measures.push_back(waived("unified mem", "migration on first touch", why));
    return;
  }
  ctx.progress("unified memory: migration on first GPU touch");
  report.measures.push_back(bandwidth("unified mem", "migration on first touch",
                                      managed_migration(bytes, false, ctx.samples), ctx.link_peak_gbps, "once"));
  ctx.progress("unified memory: cudaMemPrefetchAsync");
  report.measures.push_back(bandwidth("unified mem", "prefetch to GPU", managed_migration(bytes, true, ctx.samples),
                                      ctx.link_peak_gbps, "once"));
}

void run_hostram_suite(SuiteContext& ctx, BenchReport& report) {
  const std::uint64_t bytes = ctx.options.quick ? 256 * MiB : GiB;
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  ctx.progress("host RAM: read");
  report.measures.push_back(bandwidth("host RAM", "read", host_ram(false, bytes, threads, ctx.samples), std::nullopt,
                                      "bytes read"));
  ctx.progress("host RAM: copy");
  report.measures.push_back(bandwidth("host RAM", "copy", host_ram(true, bytes, threads, ctx.samples), std::nullopt,
                                      "read + write"));
}

void run_p2p_suite(SuiteContext& ctx, BenchReport& report) {
  if (ctx.props.device_count < 2) {
    report.measures.push_back(waived("p2p", "peer copy", "needs 2 GPUs (" + std::to_string(ctx.props.device_count) +
                                                             " present)"));
    return;
  }
  const int self = static_cast<int>(ctx.options.device_index), other = self == 0 ? 1 : 0;
  const std::uint64_t bytes = std::min<std::uint64_t>(ctx.options.quick ? 256 * MiB : GiB, ctx.budget_bytes / 2);
  for (auto [src, dst] : {std::pair{self, other}, std::pair{other, self}}) {
    const std::string name = "GPU " + std::to_string(src) + " -> GPU " + std::to_string(dst);
    ctx.progress("p2p: " + name);
    auto r = peer_copy(src, dst, bytes, ctx.samples);
    report.measures.push_back(r || r.error().find("cannot access") == std::string::npos
                                  ? bandwidth("p2p", name, r, std::nullopt, "once")
                                  : waived("p2p", name, r.error()));
  }
  (void)device_props(self);  // back on the measured device
}

}  // namespace vramdoc::bench
