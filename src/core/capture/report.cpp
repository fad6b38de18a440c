#include "core/capture/report.hpp"

#include <algorithm>

#include "core/estimator/calibration.hpp"
#include "core/estimator/fit.hpp"
#include "core/units.hpp"

namespace vramdoc::capture {

// What the driver charges beyond reserved memory, measured stage by stage on the H200 (driver 580, CUDA 13,
// PyTorch 2.11, lazy module loading; scripts/gpu/measure_overhead.py, docs/estimator.md "The process total"):
// the context alone 518 MiB; each cuBLAS handle 64 MiB (+64 at the first matmul, +64 again at the first
// one of another thread: autograd's); ATen's own kernels as a job first runs them, 96 MiB for the common
// elementwise, reduction and indexing kernels (+92 at the first elementwise op); cuDNN's convolution
// engines 8 MiB forward, 18 with their backward; 16-bit fused attention's backward kernels 16 MiB. The
// last two share modules: the larger counts. On the 18 completed dev jobs of 2026-12-01: within 2 MiB.
constexpr std::uint64_t kContextBytes = 518 * MiB;
constexpr std::uint64_t kCublasHandleBytes = 64 * MiB;
constexpr std::uint64_t kAtenKernelBytes = 96 * MiB;
constexpr std::uint64_t kCudnnForwardBytes = 8 * MiB, kCudnnTrainingBytes = 18 * MiB;
constexpr std::uint64_t kFusedAttentionBackwardBytes = 16 * MiB;

std::uint64_t process_overhead_bytes(const Libraries& used) {
  const std::uint64_t cudnn = used.cudnn ? (used.trains ? kCudnnTrainingBytes : kCudnnForwardBytes) : 0;
  const std::uint64_t attention = used.fused_attention_16bit ? kFusedAttentionBackwardBytes : 0;
  return kContextBytes + used.cublas_handles * kCublasHandleBytes + kAtenKernelBytes + std::max(cudnn, attention);
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
