#include "core/capture/workspaces.hpp"

#include <limits>
#include <set>
#include <string>
#include <utility>

#include "core/capture/conv_workspace.hpp"
#include "core/capture/kernel_call.hpp"
#include "core/capture/reduction.hpp"
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

// addmm with a 1-D bias of the output's width takes cuBLASLt's bias epilogue (Blas.cpp useLtInterface).
bool takes_lt(std::string_view op, const std::optional<KernelCall>& call) {
  if (op == "_addmm_activation") return true;
  if (op != "addmm" || !call || call->shapes.size() < 3) return false;
  const auto& bias = call->shapes[0];
  const auto& mat2 = call->shapes[2];
  return bias.size() == 1 && mat2.size() == 2 && bias[0] == mat2[1] && call->shapes[1].size() == 2 &&
         call->shapes[1][0] > 1 && (call->dtype == "float32" || call->dtype == "bfloat16" || call->dtype == "float16");
}

// The temporaries one call allocates and frees inside itself, in the order it takes them.
std::vector<std::pair<std::uint64_t, std::string_view>> temporaries(std::string_view op, const std::optional<KernelCall>& call,
                                                                    const Target& target) {
  std::vector<std::pair<std::uint64_t, std::string_view>> out;
  if (!call) return out;
  if ((op == "sum" || op == "mean") && !call->shapes.empty() && !call->args.empty() && !call->channels_last[0]) {
    std::vector<std::int64_t> dims;
    for (const std::uint64_t d : arg_numbers(call->args[0])) dims.push_back(static_cast<std::int64_t>(d));
    const ReduceDevice device{target.sm_count, target.max_threads_per_sm};
    out.push_back({reduction_buffer_bytes(call->dtype, call->shapes[0], dims, device), "a reduction's global buffer"});
    return out;
  }
  if (const auto conv = conv_call(op, *call)) {
    constexpr std::string_view what = "cuDNN convolution workspace";
    if (conv->forward) out.push_back({cudnn_conv_workspace_bytes(*conv, ConvPass::Forward), what});
    if (conv->data_grad) out.push_back({cudnn_conv_workspace_bytes(*conv, ConvPass::DataGrad), what});
    if (conv->weight_grad) out.push_back({cudnn_conv_workspace_bytes(*conv, ConvPass::WeightGrad), what});
  } else if (op == "_scaled_dot_product_cudnn_attention_backward" && call->shapes.size() > 1) {
    out.push_back({cudnn_attention_backward_bytes(call->shapes[1]), "cuDNN attention workspace"});
  } else if (op == "_softmax_backward_data" && !call->shapes.empty()) {
    out.push_back({softmax_backward_bytes(call->dtype, call->shapes[0]), "softmax backward's grad * output"});
  } else if (op == "_safe_softmax" && !call->shapes.empty()) {
    out.push_back({safe_softmax_mask_bytes(call->shapes[0]), "_safe_softmax's -inf mask"});
  }
  return out;
}

// The product of `dims` and `unit`, saturating at the largest value (a shape read from a file).
std::uint64_t saturating_product(const std::vector<std::uint64_t>& dims, std::uint64_t unit) {
  std::uint64_t n = unit;
  for (const std::uint64_t d : dims) {
    if (d != 0 && n > std::numeric_limits<std::uint64_t>::max() / d) return std::numeric_limits<std::uint64_t>::max();
    n *= d;
  }
  return n;
}

}  // namespace

std::uint64_t cublas_workspace_bytes(const Target& target) {
  if (target.cc_major >= 9 && target.cc_major <= 12) return 32 * MiB;
  return 2 * 4 * MiB + 8 * 16 * KiB;
}

std::uint64_t cublaslt_workspace_bytes() { return 1 * MiB; }

std::uint64_t cudnn_attention_backward_bytes(const std::vector<std::uint64_t>& q) {
  if (q.size() != 4) return 0;
  return q[0] * q[1] * q[2] * (q[3] + 1) * 4;
}

std::uint64_t softmax_backward_bytes(std::string_view dtype, const std::vector<std::uint64_t>& grad_shape) {
  return saturating_product(grad_shape, element_bytes(dtype));
}

std::uint64_t safe_softmax_mask_bytes(const std::vector<std::uint64_t>& shape) { return saturating_product(shape, 1); }

std::vector<Insert> workspaces(const Trace& trace, const Target& target, Libraries& used) {
  std::vector<Insert> out;
  std::set<std::pair<std::uint32_t, std::uint32_t>> handles, lt_handles;  // (thread, stream) with a workspace
  std::set<std::uint32_t> threads;                                           // threads with a cuBLAS handle
  std::uint64_t next = kWorkspaceIds;
  for (std::size_t i = 0; i < trace.events.size(); ++i) {
    const Event& e = trace.events[i];
    if (e.kind != Event::Kind::Kernel) continue;
    const std::string_view op = trace.texts[e.text];
    const std::string_view info = trace.texts[e.info];
    const auto call = parse_kernel_call(info);
    if (e.thread == 1) used.trains = true;
    if (is_conv(op)) used.cudnn = true;
    if (is_fused_attention(op) && (info.starts_with("bfloat16") || info.starts_with("float16")) && e.thread == 1)
      used.fused_attention_16bit = true;
    for (const auto& [bytes, what] : temporaries(op, call, target)) {
      if (bytes == 0) continue;
      out.push_back({i, true, bytes, next, e.stream, what});
      out.push_back({i, false, bytes, next++, e.stream, what});
    }
    if (!is_blas(op)) continue;
    used.cublas = true;
    if (threads.insert(e.thread).second) used.cublas_handles = static_cast<unsigned>(threads.size());
    if (handles.insert({e.thread, e.stream}).second)
      out.push_back({i, true, cublas_workspace_bytes(target), next++, e.stream, "cuBLAS workspace"});
    if (takes_lt(op, call) && lt_handles.insert({e.thread, e.stream}).second)
      out.push_back({i, true, cublaslt_workspace_bytes(), next++, e.stream, "cuBLASLt workspace"});
  }
  return out;
}

}  // namespace vramdoc::capture
