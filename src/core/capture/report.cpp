#include "core/capture/report.hpp"

#include "core/estimator/calibration.hpp"
#include "core/estimator/fit.hpp"
#include "core/units.hpp"

namespace vramdoc::capture {

// Training with cuDNN's convolution kernels loaded: 242 MiB beyond the context (median of the dev
// CNN, ViT and Swin training cases, 240-244), 18 MiB over cuBLAS-only training; with cuDNN and no
// cuBLAS at all (a DCGAN: no Linear layer) 112 MiB (both dev GAN cases). The other terms are the
// estimator's (calibration.hpp), which these runs reproduce: 224 / 240 MiB for training without
// convolutions (fp32 / 16-bit fused attention), 168 MiB for inference.
constexpr std::uint64_t kCudnnTrainingExtraBytes = 18 * MiB;
constexpr std::uint64_t kCudnnOnlyTrainingLibraryBytes = 112 * MiB;

std::uint64_t process_overhead_bytes(const Libraries& used) {
  using namespace estimator;
  if (!used.trains) return kCudaContextBytes + kInferenceLibraryBytes;
  if (used.cudnn && !used.cublas) return kCudaContextBytes + kCudnnOnlyTrainingLibraryBytes;
  if (used.cudnn) return kCudaContextBytes + kTrainingLibraryBytes + kCudnnTrainingExtraBytes;
  return estimator::process_overhead_bytes(true, used.fused_attention_16bit);
}

bool fits(std::uint64_t process_bytes, std::uint64_t usable_bytes) {
  return saturating_mul(process_bytes, 100 + estimator::kFitMarginPercent) <= saturating_mul(usable_bytes, 100);
}

Report build_report(const Trace& trace, const ReplayOptions& options) {
  Report r;
  r.replay = replay_trace(trace, options);
  r.overhead_bytes = process_overhead_bytes(r.replay.libraries);
  r.process_bytes = r.replay.peak_reserved_bytes + r.overhead_bytes;
  r.notes = trace.notes;
  r.end_reason = trace.end_reason, r.error_where = trace.error_where, r.error = trace.error;
  r.torch_version = trace.torch_version, r.steps = trace.steps, r.forwards = trace.forwards;
  return r;
}

std::string shortfall(const Report& r) {
  if (r.timed_out) return "the capture ran past --capture-timeout and was stopped";
  if (r.end_reason == "error")
    return "the job stopped with an error" + (r.error_where.empty() ? std::string() : " at " + r.error_where) + ": " + r.error;
  if (r.end_reason == "signal") return "the job was stopped by a signal";
  if (r.end_reason.empty()) return "the job ended without closing the trace (exit status " + std::to_string(r.exit_status) + ")";
  if (r.end_reason == "exit" && r.steps == 0 && r.forwards == 0) return "the job ended before a forward pass of any module";
  return "";
}

}  // namespace vramdoc::capture
