// `vramdoc watch --serve`: the Prometheus exporter, fed by the sampler. What it publishes and how
// it may be exposed beyond loopback (--web-config: TLS, basic auth) is in docs/security.md.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "backends/watch/http_server.hpp"
#include "backends/watch/monitor.hpp"
#include "core/result.hpp"
#include "core/watch/model.hpp"
#include "core/watch/prometheus.hpp"
#include "core/watch/web_config.hpp"

namespace vramdoc::backends {

// The newest snapshot the exporter serves. The sampler publishes (a pointer swap); the server
// renders on its own thread, so no client can hold the sampler.
class ExporterFeed {
 public:
  explicit ExporterFeed(std::size_t max_processes) : max_processes_(max_processes) {}
  // Publishes a snapshot and counts the processes the exposition leaves out of it.
  void publish(std::shared_ptr<const watch::Snapshot> snapshot);
  // The newest snapshot and the count of processes left out so far.
  std::pair<std::shared_ptr<const watch::Snapshot>, std::uint64_t> latest() const;

 private:
  std::size_t max_processes_;
  watch::DroppedProcesses dropped_;  // used by publish() only, on the sampler's thread
  mutable std::mutex mutex_;
  std::shared_ptr<const watch::Snapshot> snapshot_;
  std::uint64_t dropped_total_ = 0;
};

// Reads a --web-config file (at most 64 KiB); relative file names in it are relative to its folder.
Result<watch::WebConfig> load_web_config(const std::string& path);

using Note = std::function<void(const std::string&)>;

// Starts the exporter on `options.serve` with `options.web_config` (TLS, basic auth) and says
// through `note` where it serves and, off loopback, what anyone reaching it sees. On failure
// `bad_input` says whether the input was bad (address, web config, certificates) or the system refused.
Result<std::unique_ptr<HttpServer>> start_exporter(const WatchOptions& options, ExporterFeed& feed, const Note& note,
                                                   bool& bad_input);

}  // namespace vramdoc::backends
