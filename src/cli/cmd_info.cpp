// `vramdoc info`: this machine's GPU memory hierarchy, from NVML, the CUDA driver and procfs
// (backends/info.hpp), rendered by core/info.
#include <CLI/CLI.hpp>
#include <optional>

#include "backends/info.hpp"
#include "cli/command.hpp"
#include "core/info/report.hpp"

namespace vramdoc::cli {

int cmd_info(const std::vector<std::string>& args) {
  CLI::App app{"This machine's GPU memory hierarchy: registers, shared memory / L1, L2, device memory, the "
               "host link and host RAM, with theoretical peaks and the VRAM vs RAM table.",
               "info"};
  std::optional<unsigned> device;
  bool json = false;
  app.add_option("--device", device, "only GPU N (numbered as nvidia-smi numbers them)");
  app.add_flag("--json", json, "every field as JSON; unknown values are null");
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  auto report = backends::read_info_report(device);
  if (!report) return fail("info", report.error());
  print(json ? info::render_info_json(*report) : info::render_info_text(*report));
  return kOk;
}

}  // namespace vramdoc::cli
