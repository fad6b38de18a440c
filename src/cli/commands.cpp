// The command table (ninja's kTools): one entry per command, one file per command.
#include <array>

#include "cli/command.hpp"

namespace vramdoc::cli {

int cmd_info(const std::vector<std::string>& args);
int cmd_estimate(const std::vector<std::string>& args);
int cmd_bench(const std::vector<std::string>& args);
int cmd_watch(const std::vector<std::string>& args);
int cmd_run(const std::vector<std::string>& args);
int cmd_analyze(const std::vector<std::string>& args);
int cmd_probe(const std::vector<std::string>& args);
int cmd_trace(const std::vector<std::string>& args);

std::span<const Command> commands() {
  static constexpr std::array<Command, 8> kCommands = {{
      {"info", "this machine's GPU memory hierarchy: registers to host RAM, with theoretical peaks", cmd_info},
      {"estimate", "predict a model's GPU memory (train / LoRA / inference) and whether it fits", cmd_estimate},
      {"bench", "measure bandwidth and latency at every level of the GPU memory hierarchy", cmd_bench},
      {"watch", "live GPU and per-process memory monitor; --log, --once, --serve for Prometheus", cmd_watch},
      {"run", "run a job, record its GPU memory timeline, diagnose leak vs insufficient", cmd_run},
      {"analyze", "diagnose a recorded timeline: leak, insufficient, fragmentation, plateau, stable", cmd_analyze},
      {"probe", "find the largest batch / sequence that fits by running trials", cmd_probe},
      {"trace", "report the allocation traces of run --trace: leaks and peak memory by call site", cmd_trace},
  }};
  return kCommands;
}

}  // namespace vramdoc::cli
