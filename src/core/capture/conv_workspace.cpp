#include "core/capture/conv_workspace.hpp"

#include <cmath>
#include <cstddef>
#include <limits>

namespace vramdoc::capture {
namespace {

// A measured grid point: its convolution and, per pass, the pattern of its workspace: bit 0 X, bit 1
// Y, bit 2 W, bits 3.. the number of fp32 partial weight gradients (weight gradients only); with
// kRatio set, the workspace in parts per million of X + Y + W instead (a size no pattern explains).
struct GridPoint {
  bool half;
  std::uint32_t n, c, k, h, kernel, stride, groups;
  bool transposed;
  std::uint32_t pass[3];
};
constexpr std::uint32_t kRatio = 1U << 31;

constexpr GridPoint kGrid[] = {
#include "core/capture/cudnn_conv_h200.inc"
};

enum class Kind { Plain, Grouped, Depthwise };

Kind kind_of(std::uint64_t groups, std::uint64_t c_in) {
  if (groups <= 1) return Kind::Plain;
  return groups == c_in ? Kind::Depthwise : Kind::Grouped;
}

double log_gap(std::uint64_t a, std::uint64_t b) {
  return std::fabs(std::log2(std::max(static_cast<double>(a), 1.0) / std::max(static_cast<double>(b), 1.0)));
}

double log_gap(std::uint64_t a, double b) { return std::fabs(std::log2(std::max(static_cast<double>(a), 1.0) / std::max(b, 1.0))); }

// The grid point nearest to `conv` among those of its kind: the same precision class, transposed or
// not, plain / grouped / depthwise, 1x1 kernel or larger, unit stride or larger; nearest in batch,
// channels in and out, spatial size (log2 distance each), then group width and kernel size.
const GridPoint* nearest(const ConvCall& conv) {
  const bool half = conv.element_bytes == 2;
  const Kind kind = kind_of(conv.groups, conv.c_in);
  const double side = std::sqrt(static_cast<double>(conv.in_hw));
  const double kside = std::sqrt(static_cast<double>(conv.kernel));
  const GridPoint* best = nullptr;
  double best_gap = std::numeric_limits<double>::infinity();
  for (const GridPoint& g : kGrid) {
    if (g.half != half || g.transposed != conv.transposed || kind_of(g.groups, g.c) != kind) continue;
    if ((g.kernel == 1) != (conv.kernel == 1) || (g.stride == 1) != (conv.stride == 1)) continue;
    double gap = log_gap(g.n, conv.n) + log_gap(g.c, conv.c_in) + log_gap(g.k, conv.c_out) + log_gap(g.h, side) +
                 0.5 * std::fabs(static_cast<double>(g.kernel) - kside) + 0.25 * log_gap(g.stride, conv.stride);
    if (kind == Kind::Grouped) gap += log_gap(std::uint64_t{g.c / g.groups}, conv.c_in / conv.groups);
    if (gap < best_gap) best_gap = gap, best = &g;
  }
  return best;
}

std::uint64_t number(const std::vector<std::uint64_t>& v, std::uint64_t fallback) { return v.empty() ? fallback : v[0]; }

}  // namespace

std::optional<ConvCall> conv_call(std::string_view op, const KernelCall& call) {
  const bool backward = op == "convolution_backward";
  if (!backward && op != "convolution") return std::nullopt;
  const std::size_t first = backward ? 1 : 0, args = backward ? 7 : 6;
  if (call.shapes.size() < first + 2 || call.args.size() < args) return std::nullopt;
  const auto& x = call.shapes[first];
  const auto& w = call.shapes[first + 1];
  const std::size_t dims = x.size();
  if (dims < 3 || w.size() != dims) return std::nullopt;
  const auto a = call.args.end() - static_cast<std::ptrdiff_t>(args);
  const auto stride = arg_numbers(a[0]), padding = arg_numbers(a[1]), dilation = arg_numbers(a[2]);
  const auto output_padding = arg_numbers(a[4]);
  ConvCall c;
  c.element_bytes = element_bytes(call.dtype);
  c.transposed = a[3] == "1";
  c.groups = std::max<std::uint64_t>(1, number(arg_numbers(a[5]), 1));
  c.n = x[0], c.c_in = x[1];
  c.c_out = c.transposed ? w[1] * c.groups : w[0];
  c.stride = number(stride, 1);
  c.in_hw = c.out_hw = c.kernel = 1;
  for (std::size_t d = 2; d < dims; ++d) {
    const std::size_t i = d - 2;
    const std::uint64_t s = i < stride.size() ? stride[i] : c.stride, p = i < padding.size() ? padding[i] : 0;
    const std::uint64_t dl = i < dilation.size() ? dilation[i] : 1, op_ = i < output_padding.size() ? output_padding[i] : 0;
    const std::uint64_t span = dl * (w[d] - 1) + 1;
    std::uint64_t out = 0;
    if (backward) {
      out = call.shapes[0].size() == dims ? call.shapes[0][d] : 0;  // the gradient of the output
    } else if (c.transposed) {
      const std::uint64_t full = (x[d] - 1) * s + span + op_;
      out = full > 2 * p ? full - 2 * p : 0;
    } else {
      out = x[d] + 2 * p >= span ? (x[d] + 2 * p - span) / s + 1 : 0;
    }
    c.in_hw *= x[d], c.out_hw *= out, c.kernel *= w[d];
  }
  if (backward) {
    const auto mask = arg_numbers(a[6]);
    c.data_grad = mask.size() > 0 && mask[0] == 1;
    c.weight_grad = mask.size() > 1 && mask[1] == 1;
  } else {
    c.forward = true;
  }
  return c;
}

std::uint64_t cudnn_conv_workspace_bytes(const ConvCall& conv, ConvPass pass) {
  if (conv.element_bytes == 0 || conv.element_bytes > 4 || conv.n == 0) return 0;  // cuDNN: 16 and 32 bit only
  const GridPoint* g = nearest(conv);
  if (g == nullptr) return 0;  // depthwise points that all take nothing are left out of the grid
  const std::uint64_t e = conv.element_bytes;
  const std::uint64_t x = conv.n * conv.c_in * conv.in_hw * e, y = conv.n * conv.c_out * conv.out_hw * e;
  const std::uint64_t weights = conv.c_out * (conv.c_in / conv.groups) * conv.kernel;
  const std::uint64_t w = weights * e, w32 = weights * 4;
  const std::uint32_t p = g->pass[static_cast<int>(pass)];
  if (p & kRatio) {  // parts per million of X + Y + W, without overflowing
    const std::uint64_t sum = x + y + w, ppm = p & ~kRatio;
    return sum / 1000000 * ppm + sum % 1000000 * ppm / 1000000;
  }
  return ((p & 1) ? x : 0) + ((p & 2) ? y : 0) + ((p & 4) ? w : 0) + (p >> 3) * w32;
}

}  // namespace vramdoc::capture
