// core/capture: the capture's trace read, replayed per stream with the cuBLAS workspaces, the
// report's numbers and the --max-batch search (docs/estimator.md, "Estimating a script").
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "core/capture/conv_workspace.hpp"
#include "core/capture/kernel_call.hpp"
#include "core/capture/reduction.hpp"
#include "core/capture/report.hpp"
#include "core/capture/search.hpp"
#include "core/capture/trace.hpp"
#include "core/estimator/allocator.hpp"
#include "core/units.hpp"

namespace vramdoc::capture {
namespace {

Trace parsed(const std::string& text) {
  auto t = parse_trace(text);
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error());
  return t.ok() ? *t : Trace{};
}

TEST(CaptureTrace, ReadsEventsPhasesNotesAndTheEnd) {
  const Trace t = parsed(
      "# vramdoc allocator trace 2\n# capture torch 2.11.0 python 3.12 pid 7\n"
      "a 1048576 0 0 train.py:12:<module>\na 512 1 0\n# phase build\n"
      "k mm 0 1 float32:64x1024,1024x4096\nf 1\n"
      "# note value /home/u/train.py:40: item() of a tensor without data (size []): assumed zeros\n"
      "r 0\ns 2097152 0\n# steps 3 forwards 3\n# end steps\n");
  ASSERT_EQ(t.events.size(), 4U);  // r and s lines (a real run's) are read and left out
  EXPECT_EQ(t.events[0].bytes, 1048576U);
  EXPECT_EQ(t.texts[t.events[0].text], "train.py:12:<module>");
  EXPECT_EQ(t.events[2].kind, Event::Kind::Kernel);
  EXPECT_EQ(t.texts[t.events[2].text], "mm");
  EXPECT_EQ(t.events[2].thread, 1U);
  ASSERT_EQ(t.phases.size(), 1U);
  EXPECT_EQ(t.phases[0].name, "build");
  EXPECT_EQ(t.phases[0].end, 2U);
  ASSERT_EQ(t.notes.size(), 1U);
  EXPECT_EQ(t.notes[0].where, "/home/u/train.py:40");
  EXPECT_EQ(t.notes[0].text, "item() of a tensor without data (size []): assumed zeros");
  EXPECT_EQ(t.end_reason, "steps");
  EXPECT_EQ(t.steps, 3U);
  EXPECT_EQ(t.torch_version, "2.11.0");
}

TEST(CaptureTrace, NamesTheLineThatIsNotATraceLine) {
  auto t = parse_trace("a 512 0 0\nhello\n");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().find("line 2"), std::string::npos) << t.error();
}

TEST(CaptureReplay, OneCublasWorkspacePerThreadAndStreamSizedForTheCard) {
  const std::string text = "a 1024 0 0\nk mm 0 0 f\nk addmm 0 0 f\nk mm 0 1 f\nk bmm 1 0 f\nk convolution 0 0 f\n";
  const Trace t = parsed(text);
  ReplayOptions hopper;
  const Replay h = replay_trace(t, hopper);
  EXPECT_EQ(h.peak_allocated_bytes, 1024 + 3 * 32 * MiB);  // (0, 0), (1, 0), (0, 1)
  EXPECT_EQ(h.workspace_bytes_at_peak, 3 * 32 * MiB);
  EXPECT_TRUE(h.libraries.cublas && h.libraries.cudnn && h.libraries.trains);
  ReplayOptions ampere;
  ampere.target.cc_major = 8;
  EXPECT_EQ(replay_trace(t, ampere).workspace_bytes_at_peak, 3 * (8 * MiB + 128 * KiB));
}

TEST(CaptureReplay, StreamsKeepTheirOwnFreeBlocks) {
  // a block freed on stream 0 does not serve stream 1 (CUDACachingAllocator keys free blocks by stream)
  const Trace same = parsed("a 4194304 0 0\nf 0\na 4194304 1 0\n");
  const Trace other = parsed("a 4194304 0 0\nf 0\na 4194304 1 1\n");
  EXPECT_EQ(replay_trace(same, {}).peak_reserved_bytes, 20 * MiB);
  EXPECT_EQ(replay_trace(other, {}).peak_reserved_bytes, 40 * MiB);
}

// Regression: a phase with no event of its own (SGD's step once the momentum exists) showed 0 B.
TEST(CaptureReplay, APhaseWithoutEventsShowsTheMemoryHeldThroughIt) {
  const Trace t = parsed("a 1048576 0 0\n# phase step0.backward\n# phase step0.optimizer\na 512 1 0\n# phase step0.zero_grad\n");
  const Replay r = replay_trace(t, {});
  ASSERT_EQ(r.phases.size(), 3U);
  EXPECT_EQ(r.phases[1].name, "step0.optimizer");
  EXPECT_EQ(r.phases[1].peak_allocated_bytes, 1048576U);
  EXPECT_EQ(r.phases[1].allocated_end_bytes, 1048576U);
}

TEST(CaptureReplay, EmptyCacheReturnsTheFreeSegments) {
  const Trace t = parsed("a 4194304 0 0\nf 0\n# empty_cache\na 2048 1 0\n");
  const Replay r = replay_trace(t, {});
  EXPECT_EQ(r.peak_reserved_bytes, 20 * MiB);
  estimator::CachingAllocator a;
  const auto h = a.allocate(4 * MiB);
  a.release(h);
  a.empty_cache();
  EXPECT_EQ(a.reserved_bytes(), 0U);
}

TEST(CaptureReplay, HeldAtThePeakByLine) {
  const Trace t = parsed("a 2097152 0 0 m.py:3:f\na 2097152 1 0 m.py:3:f\na 1048576 2 0 m.py:9:g\nf 2\na 512 3 0\n");
  const Replay r = replay_trace(t, {});
  ASSERT_GE(r.held_at_peak.size(), 2U);
  EXPECT_EQ(r.held_at_peak[0].where, "m.py:3:f");
  EXPECT_EQ(r.held_at_peak[0].bytes, 4 * MiB);
  EXPECT_EQ(r.held_at_peak[0].blocks, 2U);
  EXPECT_EQ(r.held_at_peak[1].where, "m.py:9:g");
}

TEST(CaptureReport, ProcessIsReservedPlusTheLibrariesOverhead) {
  const Trace infer = parsed("a 1048576 0 0\nk mm 0 0 f\n# end steps\n");
  const Trace train = parsed("a 1048576 0 0\nk convolution 0 0 f\nk mm 0 0 f\nk mm 0 1 f\n# end steps\n");
  const Trace gan = parsed("a 1048576 0 0\nk convolution 0 0 f\nk convolution_backward 0 1 f\n# end steps\n");
  for (const Trace* t : {&infer, &train, &gan}) {
    const Report r = build_report(*t, {});
    EXPECT_EQ(r.process_bytes, r.replay.peak_reserved_bytes + r.overhead_bytes);
  }
  // the context, one cuBLAS handle per thread that ran a matmul, ATen's kernels, cuDNN's engines
  EXPECT_EQ(build_report(infer, {}).overhead_bytes, (518 + 64 + 96) * MiB);
  EXPECT_EQ(build_report(train, {}).overhead_bytes, (518 + 2 * 64 + 96 + 18) * MiB);
  EXPECT_EQ(build_report(gan, {}).overhead_bytes, (518 + 96 + 18) * MiB);
  EXPECT_EQ(build_report(train, {}).replay.libraries.cublas_handles, 2U);
}

TEST(CaptureKernelCall, ReadsShapesLayoutAndArguments) {
  const auto c = parse_kernel_call("bfloat16:64x3x224x224,64x3x7x7@cl,64;2x2,3x3,1x1,0,0x0,1");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->dtype, "bfloat16");
  ASSERT_EQ(c->shapes.size(), 3U);
  EXPECT_EQ(c->shapes[0], (std::vector<std::uint64_t>{64, 3, 224, 224}));
  EXPECT_TRUE(c->channels_last[1] && !c->channels_last[0]);
  ASSERT_EQ(c->args.size(), 6U);
  EXPECT_EQ(arg_numbers(c->args[0]), (std::vector<std::uint64_t>{2, 2}));
  EXPECT_TRUE(arg_numbers("-").empty());
  EXPECT_FALSE(parse_kernel_call("f"));  // the first format's placeholder
  EXPECT_EQ(element_bytes("float32"), 4U);
  EXPECT_EQ(element_bytes("bfloat16"), 2U);
}

TEST(CaptureConvCall, OutputSizeAndPassesFromTheArguments) {
  // ResNet's stem: 7x7, stride 2, padding 3, 224 -> 112; no bias (None is written as -)
  const auto fwd = conv_call("convolution", *parse_kernel_call("float32:128x3x224x224,64x3x7x7;-,2x2,3x3,1x1,0,0x0,1"));
  ASSERT_TRUE(fwd);
  EXPECT_EQ(fwd->out_hw, 112U * 112U);
  EXPECT_EQ(fwd->kernel, 49U);
  EXPECT_TRUE(fwd->forward && !fwd->data_grad);
  // DCGAN's generator: a transposed 4x4, stride 2, padding 1 doubles 8 -> 16 (with a bias tensor: no '-')
  const auto up = conv_call("convolution", *parse_kernel_call("float32:8x512x8x8,512x256x4x4,256;2x2,1x1,1x1,1,0x0,1"));
  ASSERT_TRUE(up);
  EXPECT_TRUE(up->transposed);
  EXPECT_EQ(up->c_out, 256U);
  EXPECT_EQ(up->out_hw, 16U * 16U);
  // the first layer's backward: no gradient for the image (output_mask 0x1x0)
  const auto bwd = conv_call("convolution_backward",
                             *parse_kernel_call("float32:128x64x112x112,128x3x224x224,64x3x7x7;0,2x2,3x3,1x1,0,0x0,1,0x1x0"));
  ASSERT_TRUE(bwd);
  EXPECT_TRUE(!bwd->data_grad && bwd->weight_grad && !bwd->forward);
  EXPECT_EQ(bwd->out_hw, 112U * 112U);
}

// Regression: VGG16's reserved memory was 27 % low and ResNet-50 inference's 17 % (2026-12-01): the
// convolutions' cuDNN workspaces (an NCHW job's input, output and weight copied to the engine's
// layout, allocated and freed inside the call) were not replayed.
TEST(CaptureConvWorkspace, Vgg16AndResNetWorkspacesAsMeasured) {
  // ResNet-50 fp32 batch 128, 3x3 64 -> 64 at 56x56: X + Y + W in the H200 trace (205668864 requested)
  const auto c = conv_call("convolution", *parse_kernel_call("float32:128x64x56x56,64x64x3x3;-,1x1,1x1,1x1,0,0x0,1"));
  const std::uint64_t x = 128ULL * 64 * 56 * 56 * 4, w = 64ULL * 64 * 9 * 4;
  EXPECT_EQ(cudnn_conv_workspace_bytes(*c, ConvPass::Forward), x + x + w);
  // its 1x1 convolutions at unit stride run on NCHW directly: no workspace
  const auto one = conv_call("convolution", *parse_kernel_call("float32:128x64x56x56,256x64x1x1;-,1x1,0x0,1x1,0,0x0,1"));
  EXPECT_EQ(cudnn_conv_workspace_bytes(*one, ConvPass::Forward), 0U);
  // a depthwise 7x7 (ConvNeXt): cuDNN's depthwise kernels take none
  const auto dw = conv_call("convolution", *parse_kernel_call("bfloat16:96x96x56x56,96x1x7x7,96;1x1,3x3,1x1,0,0x0,96"));
  EXPECT_EQ(cudnn_conv_workspace_bytes(*dw, ConvPass::Forward), 0U);
  // the replay allocates it after the output and frees it at once: in peak allocated, not after
  const Trace t = parsed("a 411041792 0 0\nk convolution 0 0 float32:128x64x56x56,64x64x3x3;-,1x1,1x1,1x1,0,0x0,1\n# end steps\n");
  const Replay r = replay_trace(t, {});
  EXPECT_EQ(r.peak_allocated_bytes, estimator::block_bytes(411041792) + estimator::block_bytes(x + x + w));
  EXPECT_EQ(r.phases.back().allocated_end_bytes, estimator::block_bytes(411041792));
}

// Regression: RegNetY-1.6GF bf16's reserved memory was 14.7 % high (2026-12-01): the table had fitted
// 5576 partial fp32 weight gradients to a grouped data gradient's grid point (a forward or data
// gradient has none), 0.59 GB for a convolution whose workspace on the H200 is about X + Y + W.
TEST(CaptureConvWorkspace, ADataGradientTakesNoPartialWeightGradients) {
  const auto c = conv_call("convolution_backward",
                           *parse_kernel_call("bfloat16:64x120x28x28,64x120x56x56,120x24x3x3;0,2x2,1x1,1x1,0,0x0,5,1x0x0"));
  ASSERT_TRUE(c && c->data_grad && !c->weight_grad);
  const std::uint64_t x = 64ULL * 120 * 56 * 56 * 2, y = 64ULL * 120 * 28 * 28 * 2, w = 120ULL * 24 * 9 * 2;
  EXPECT_LE(cudnn_conv_workspace_bytes(*c, ConvPass::DataGrad), (x + y + w) / 100 * 101);
}

// Regression: every training job's first addmm with a bias allocated 1 MiB more than the replay had
// (the H200 traces: one block, from the small pool, never freed): cuBLASLt's workspace.
TEST(CaptureReplay, CublasLtWorkspaceOncePerThreadThatRanAnAddmmWithABias) {
  const Trace t = parsed("a 512 0 0\nk addmm 0 0 float32:1000,128x2048,2048x1000\nk addmm 0 0 float32:1000,128x2048,2048x1000\n"
                         "k mm 0 1 float32:128x1000,1000x2048\n# end steps\n");
  EXPECT_EQ(replay_trace(t, {}).workspace_bytes_at_peak, 2 * 32 * MiB + 1 * MiB);
}

// Regression: BERT's reserved memory: cuDNN attention's backward takes an fp32 dQ accumulator and one
// fp32 per query row (25559552 requested at B 32, H 12, S 256, D 64 in the H200 trace).
TEST(CaptureReplay, CudnnAttentionBackwardWorkspace) {
  EXPECT_EQ(cudnn_attention_backward_bytes({32, 12, 256, 64}), 25559040U);
  const Trace t = parsed("k _scaled_dot_product_cudnn_attention_backward 0 1 bfloat16:32x12x256x64,32x12x256x64,32x12x256x64,"
                         "32x12x256x64,32x12x256x64,32x12x256x1,1,1;-,-,-,256,256,0.1,0\n# end steps\n");
  EXPECT_EQ(replay_trace(t, {}).peak_allocated_bytes, estimator::block_bytes(25559040));
}

// Regression: fp32 Llama with grouped heads (SDPA's math path) held four B x H x S x S blocks at the
// backward's peak on the H200 and three in the replay (-14 %, 2026-12-01): softmax's CUDA backward
// computes grad * output into a temporary of grad's size after its output (1 GiB at B 2, H 32, S 2048).
TEST(CaptureReplay, SoftmaxBackwardTemporaryOfTheGradsSize) {
  EXPECT_EQ(softmax_backward_bytes("float32", {2, 32, 2048, 2048}), 1073741824U);
  EXPECT_EQ(softmax_backward_bytes("bfloat16", {64, 12, 49, 49}), 64U * 12 * 49 * 49 * 2);
  // after the output, freed at once: the peak holds both, the phase's end only the output
  const Trace t = parsed("a 1073741824 0 0\nk _softmax_backward_data 0 1 float32:2x32x2048x2048,2x32x2048x2048\n# end steps\n");
  const Replay r = replay_trace(t, {});
  EXPECT_EQ(r.peak_allocated_bytes, 2U * 1073741824U);
  EXPECT_EQ(r.phases.back().allocated_end_bytes, 1073741824U);
  // a shape too large for 64 bits saturates instead of wrapping
  EXPECT_EQ(softmax_backward_bytes("float32", {1ULL << 40, 1ULL << 30}), std::numeric_limits<std::uint64_t>::max());
}

// The math path's _safe_softmax compares its input with -inf (a bool per element) inside the call: the
// H200's fp32 Llama trace holds 256 MiB beside the 1 GiB output at B 2, H 32, S 2048.
TEST(CaptureReplay, SafeSoftmaxMaskInsideTheCall) {
  EXPECT_EQ(safe_softmax_mask_bytes({2, 32, 2048, 2048}), 268435456U);
  const Trace t = parsed("a 1073741824 0 0\nk _safe_softmax 0 0 float32:2x32x2048x2048\n# end steps\n");
  EXPECT_EQ(replay_trace(t, {}).peak_allocated_bytes, 1073741824U + 268435456U);
}

// Regression: the transformer encoders' peak, at the backward's first layer, was 1 to 2 % low against
// the H200 (2026-12-01): a Linear layer's bias gradient, grad.sum(0), splits its rows across thread
// blocks that gather their partial sums in a buffer (Reduce.cuh global_memory_size). The sizes of the
// H200 traces, to the byte:
TEST(CaptureReduction, BiasGradientBufferAsMeasured) {
  const ReduceDevice h200;
  EXPECT_EQ(reduction_buffer_bytes("bfloat16", {16384, 768}, {0}, h200), 100663296U);   // encoder amp, 32 x 512 rows
  EXPECT_EQ(reduction_buffer_bytes("bfloat16", {16384, 2304}, {0}, h200), 139198464U);  // its qkv projection
  EXPECT_EQ(reduction_buffer_bytes("bfloat16", {16384, 3072}, {0}, h200), 138412032U);  // its fc1
  EXPECT_EQ(reduction_buffer_bytes("float32", {8192, 768}, {0}, h200), 50331648U);      // the fp32 encoder
  EXPECT_EQ(reduction_buffer_bytes("bfloat16", {12608, 768}, {0}, h200), 77463552U);    // ViT-B/16, 64 x 197 rows
  EXPECT_EQ(reduction_buffer_bytes("bfloat16", {32, 512, 768}, {0, 1}, h200), 100663296U);  // leading dims coalesce
  // no buffer: over the fastest dimension, over a middle one, few rows, or a dimension out of range
  EXPECT_EQ(reduction_buffer_bytes("float32", {16384, 768}, {1}, h200), 0U);
  EXPECT_EQ(reduction_buffer_bytes("float32", {8, 16384, 768}, {1}, h200), 0U);
  EXPECT_EQ(reduction_buffer_bytes("float32", {64, 768}, {0}, h200), 0U);
  EXPECT_EQ(reduction_buffer_bytes("float32", {64, 768}, {2}, h200), 0U);
  // in the replay, after the sum's output and freed before the next event
  const Trace t = parsed("a 1536 0 0\nk sum 0 1 bfloat16:16384x768;0\n# end steps\n");
  const Replay r = replay_trace(t, {});
  EXPECT_EQ(r.peak_allocated_bytes, estimator::block_bytes(1536) + 100663296U);
  EXPECT_EQ(r.phases.back().allocated_end_bytes, estimator::block_bytes(1536));
}

TEST(CaptureReport, FitKeepsTheEstimatorsMargin) {
  EXPECT_TRUE(fits(100 * MiB, 108 * MiB));
  EXPECT_FALSE(fits(101 * MiB, 108 * MiB));
}

TEST(CaptureReport, ShortfallNamesTheErrorAndItsLine) {
  Report r;
  r.end_reason = "error", r.error_where = "train.py:9", r.error = "ValueError: out of data";
  EXPECT_EQ(shortfall(r), "the job stopped with an error at train.py:9: ValueError: out of data");
  r.end_reason = "steps";
  EXPECT_EQ(shortfall(r), "");
  r.timed_out = true;
  EXPECT_NE(shortfall(r).find("--capture-timeout"), std::string::npos);
}

TEST(CaptureSearch, AnswersTheLargestCapturedValueThatFits) {
  std::vector<Trial> trials;
  auto run = [](std::uint64_t v) {
    Trial t;
    t.ran_to_end = true, t.fits = v <= 37, t.process_bytes = v;
    return t;
  };
  EXPECT_EQ(search_max(16, 1 << 20, run, trials), std::optional<std::uint64_t>(37));
  bool tried_37 = false, tried_38 = false;
  for (const auto& t : trials) tried_37 |= t.batch == 37U, tried_38 |= t.batch == 38U;
  EXPECT_TRUE(tried_37 && tried_38);  // the answer ran, and the next value did not fit
  trials.clear();
  EXPECT_EQ(search_max(64, 1 << 20, run, trials), std::optional<std::uint64_t>(37));  // searching down
}

TEST(CaptureSearch, ATrialThatDidNotFinishNeverCountsAsFitting) {
  std::vector<Trial> trials;
  auto run = [](std::uint64_t v) {
    Trial t;
    t.ran_to_end = v < 8, t.fits = true;  // crashes from 8 on: not an answer
    return t;
  };
  EXPECT_EQ(search_max(4, 1 << 20, run, trials), std::optional<std::uint64_t>(7));
  trials.clear();
  auto never = [](std::uint64_t) { return Trial{}; };
  EXPECT_EQ(search_max(4, 1 << 20, never, trials), std::nullopt);
}

TEST(CaptureSearch, PlaceholdersAndComputeCapabilities) {
  const std::vector<std::string> argv{"python", "train.py", "--batch-size={batch}", "--log", "run-{batch}"};
  EXPECT_TRUE(has_placeholder(argv, "{batch}"));
  EXPECT_FALSE(has_placeholder(argv, "{seq}"));
  const auto out = substitute(argv, "{batch}", 48);
  EXPECT_EQ(out[2], "--batch-size=48");
  EXPECT_EQ(out[4], "run-48");
  EXPECT_EQ(compute_capability("NVIDIA H100 80GB HBM3").major, 9);
  EXPECT_EQ(compute_capability("RTX 4090").minor, 9);
  EXPECT_EQ(compute_capability("A100 80GB").major, 8);
  EXPECT_FALSE(compute_capability("Some Future GPU").known);
}

}  // namespace
}  // namespace vramdoc::capture
