#include "core/capture/workspaces.hpp"

#include <set>
#include <string>
#include <utility>

#include "core/units.hpp"

namespace vramdoc::capture {
namespace {

// ATen ops whose CUDA kernels are cuBLAS / cuBLASLt calls (Blas.cpp, CUDABlas.cpp).
bool is_blas(std::string_view op) {
  for (std::string_view b : {"mm", "addmm", "bmm", "baddbmm", "addmv", "mv", "addbmm", "addr", "dot", "_addmm_activation",
                             "_scaled_mm", "_int_mm"})
    if (op == b) return true;
  return false;
}

bool is_conv(std::string_view op) {
  return op == "convolution" || op == "convolution_backward" || op.starts_with("cudnn_convolution");
}

bool is_fused_attention(std::string_view op) {
  return op.find("flash_attention") != std::string_view::npos || op.find("efficient_attention") != std::string_view::npos ||
         op.find("cudnn_attention") != std::string_view::npos;
}

}  // namespace

std::uint64_t cublas_workspace_bytes(const Target& target) {
  if (target.cc_major >= 9 && target.cc_major <= 12) return 32 * MiB;
  return 2 * 4 * MiB + 8 * 16 * KiB;
}

std::vector<Insert> workspaces(const Trace& trace, const Target& target, Libraries& used) {
  std::vector<Insert> out;
  std::set<std::pair<std::uint32_t, std::uint32_t>> handles;  // (thread, stream) with a workspace
  std::uint64_t next = kWorkspaceIds;
  for (std::size_t i = 0; i < trace.events.size(); ++i) {
    const Event& e = trace.events[i];
    if (e.kind != Event::Kind::Kernel) continue;
    const std::string_view op = trace.texts[e.text];
    const std::string_view info = trace.texts[e.info];
    if (e.thread == 1) used.trains = true;
    if (is_conv(op)) used.cudnn = true;
    if (is_fused_attention(op) && (info.starts_with("bfloat16") || info.starts_with("float16")) && e.thread == 1)
      used.fused_attention_16bit = true;
    if (!is_blas(op)) continue;
    used.cublas = true;
    if (handles.insert({e.thread, e.stream}).second)
      out.push_back({i, true, cublas_workspace_bytes(target), next++, e.stream, "cuBLAS workspace"});
  }
  return out;
}

}  // namespace vramdoc::capture
