// Issue 29: one accounting (PyTorch's tensors, its cache, the driver beyond it, the other processes)
// for every verdict, and the six jobs that sat at its seams, on timelines recorded on an H200
// (tests/data/README.md: issue29_*). Each kind was recorded twice: both recordings must say the same.
#include <gtest/gtest.h>

#include <string>

#include "core/timeline/accounting.hpp"
#include "core/timeline/job.hpp"
#include "core/timeline/oom_message.hpp"
#include "core/timeline/reader.hpp"
#include "core/trace/symbols.hpp"
#include "test_files.hpp"

namespace vramdoc::timeline {
namespace {

JobJudgement judged(const std::string& name) {
  auto tl = read_timeline(test::file_text(std::string(VRAMDOC_TEST_DATA_DIR) + "/timelines/" + name), name);
  EXPECT_TRUE(tl) << (tl ? "" : tl.error());
  return judge_job({*tl});
}

std::string all_notes(const JobJudgement& j) {
  std::string out;
  if (j.processes)
    for (const auto& n : j.processes->notes) out += n + "\n";
  return out;
}

// The message of a job sharing the card lists the other processes first: "Process 547 has 9.76
// GiB" was read as the job's own bytes ("holding 9.76 GiB" when it held 6.72 GiB).
TEST(Accounting, OomMessageReadsThisProcessAndTheFractionsLimit) {
  const auto m = parse_oom_message(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.93 GiB. GPU 0 has a total capacity of 139.80 GiB of which "
      "93.88 GiB is free. Process 547 has 9.76 GiB memory in use. Including non-PyTorch memory, this process has 6.72 GiB memory in "
      "use. 8.39 GiB allowed; Of the allocated memory 3.50 GiB is allocated by PyTorch, and 2.47 GiB is reserved by PyTorch but unallocated.");
  ASSERT_TRUE(m);
  EXPECT_EQ(*m->in_use_bytes, static_cast<std::uint64_t>(6.72 * (1ull << 30) + 0.5));
  EXPECT_EQ(*m->allowed_bytes, static_cast<std::uint64_t>(8.39 * (1ull << 30) + 0.5));
  const auto plain = parse_oom_message("CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has 1.00 GiB memory in use.");
  ASSERT_TRUE(plain);
  EXPECT_EQ(*plain->in_use_bytes, 1ull << 30);  // no "this process": the one figure there is
  EXPECT_FALSE(plain->allowed_bytes);
}

// Point 1: OOM inside the first step under set_per_process_memory_fraction was called a leak
// ("memory grows step after step ... it ran out at 29.9 s").
TEST(Accounting, FractionOomInsideTheFirstStepIsInsufficientAgainstTheLimit) {
  for (const char* name : {"issue29_fraction_oom_1.jsonl", "issue29_fraction_oom_2.jsonl"}) {
    const auto j = judged(name);
    EXPECT_EQ(j.diagnosis.verdict, Verdict::Insufficient) << name << ": " << j.diagnosis.summary;
    EXPECT_EQ(j.diagnosis.rule, "OOM in the first step") << name;
    ASSERT_TRUE(j.diagnosis.evidence.capacity_bytes);
    EXPECT_LT(*j.diagnosis.evidence.capacity_bytes, 11ull << 30) << "the limit, not the card's 140 GiB";
    EXPECT_NE(j.diagnosis.summary.find("allowed to the process"), std::string::npos) << j.diagnosis.summary;
    EXPECT_TRUE(j.diagnosis.evidence.missing_bytes) << name;
  }
}

// Point 2: a CUDA extension keeping 12 MiB a step by raw cudaMalloc (CuPy) was called a plateau.
TEST(Accounting, ExtensionLeakIsALeakOutsidePyTorchsAllocator) {
  for (const char* name : {"issue29_ext_leak_1.jsonl", "issue29_ext_leak_2.jsonl", "issue29_ext_native_1.jsonl", "issue29_ext_native_2.jsonl"}) {
    const auto j = judged(name);
    EXPECT_EQ(j.diagnosis.verdict, Verdict::Leak) << name << ": " << j.diagnosis.summary;
    EXPECT_EQ(j.diagnosis.rule, "outside PyTorch's allocator") << name;
    const auto& a = j.diagnosis.evidence.accounting;
    ASSERT_TRUE(a) << name;
    EXPECT_EQ(a->growing, Level::Driver) << name;
    EXPECT_FALSE(a->tensors.grows) << name;
  }
  const double per_step = *judged("issue29_ext_leak_1.jsonl").diagnosis.evidence.growth_bytes_per_step;
  EXPECT_NEAR(per_step, 12.0 * (1 << 20), 1.0 * (1 << 20));  // what the job keeps: 12 MiB a step
}

// Point 3: a helper process started each epoch, each holding 768 MiB and never stopped: every
// process flat on its own, the job called stable.
TEST(Accounting, HelperProcessesThatAccumulateAreTheJobsLeak) {
  for (const char* name : {"issue29_helpers_1.jsonl", "issue29_helpers_2.jsonl"}) {
    const auto j = judged(name);
    EXPECT_EQ(j.diagnosis.verdict, Verdict::Leak) << name << ": " << j.diagnosis.summary;
    EXPECT_EQ(j.diagnosis.rule, "processes accumulate") << name;
    ASSERT_TRUE(j.processes) << name;
    EXPECT_NE(j.processes->accumulating.find("5 processes"), std::string::npos) << j.processes->accumulating;
  }
  // DataLoader workers that start together and stay are no accumulation.
  EXPECT_TRUE(judged("issue29_workers_1.jsonl").processes->accumulating.empty());
}

// Point 4: a serving loop (generate() of random sizes, nothing kept) was called a leak at 1.6 MiB/s.
TEST(Accounting, ServingLoopJudgedOnForwardCallsIsNoLeak) {
  for (const char* name : {"issue29_serving_1.jsonl", "issue29_serving_2.jsonl", "issue29_serving_eager.jsonl"}) {
    const auto j = judged(name);
    EXPECT_TRUE(j.diagnosis.verdict == Verdict::Plateau || j.diagnosis.verdict == Verdict::Stable) << name << ": " << j.diagnosis.summary;
    ASSERT_TRUE(j.diagnosis.evidence.accounting) << name;
    EXPECT_EQ(j.diagnosis.evidence.accounting->unit, "forward call");
    EXPECT_EQ(j.diagnosis.evidence.accounting->growing, Level::Cache) << name << ": the cache grows for larger requests";
  }
}

// Point 5: the Trainer keeping every evaluation batch's logits on the GPU, out of memory in the
// evaluation, was called insufficient against the 140 GiB card.
TEST(Accounting, TrainerEvaluationKeepingLogitsAccumulates) {
  for (const char* name : {"issue29_trainer_eval_1.jsonl", "issue29_trainer_eval_2.jsonl"}) {
    const auto j = judged(name);
    EXPECT_EQ(j.diagnosis.verdict, Verdict::Leak) << name << ": " << j.diagnosis.summary;
    EXPECT_EQ(j.diagnosis.rule, "evaluation accumulates") << name;
    ASSERT_TRUE(j.diagnosis.evidence.evaluation) << name;
    EXPECT_TRUE(j.diagnosis.evidence.evaluation->ended_in_oom) << name;
    bool eval_accumulation_steps = false;
    for (const auto& r : j.diagnosis.remedies) eval_accumulation_steps |= r.find("eval_accumulation_steps") != std::string::npos;
    EXPECT_TRUE(eval_accumulation_steps) << name;
  }
}

// Point 6: DataLoader workers that each made a CUDA context: stable, and the report names them.
TEST(Accounting, DataLoaderWorkersAreNamedWithTheirBytes) {
  for (const char* name : {"issue29_workers_1.jsonl", "issue29_workers_2.jsonl"}) {
    const auto j = judged(name);
    EXPECT_EQ(j.diagnosis.verdict, Verdict::Stable) << name << ": " << j.diagnosis.summary;
    const std::string notes = all_notes(j);
    EXPECT_NE(notes.find("besides the training loop"), std::string::npos) << notes;
    EXPECT_NE(notes.find("3 processes hold device memory"), std::string::npos) << notes;
  }
}

// The allocator's settings in effect: the hook's marks of the fraction, the header's environment.
TEST(Accounting, AllocatorSettingsInEffectAreShown) {
  Timeline tl;
  tl.environment["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True";
  tl.marks.push_back({1.0, "allocator fraction=0.07 limit_bytes=10507691622 device=0", 0, 0, 42});
  const auto settings = allocator_in_effect(tl);
  ASSERT_EQ(settings.size(), 2u);
  EXPECT_EQ(settings[0], "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (expandable segments on)");
  EXPECT_EQ(settings[1], "per-process memory fraction 0.07 (limit 9.79 GiB)");
  EXPECT_EQ(fraction_limit_bytes(tl), 10507691622ull);
}

}  // namespace
}  // namespace vramdoc::timeline

namespace vramdoc::trace {
namespace {

// Under --trace a leak's frame was CUDA's inline wrapper, "make_scratch (cuda_runtime.h:879)":
// with addr2line -i the inlining caller's line is kept.
TEST(Accounting, ExtensionLeakFrameIsTheCallersLineNotCudaRuntimeHeader) {
  const auto frames = parse_addr2line(
      "0x0000000000008b47\ncudaMalloc<float>\n/usr/local/cuda/bin/../targets/x86_64-linux/include/cuda_runtime.h:879\n"
      "make_scratch\n/src/tests/gpu/scratch_ext.cu:13\n"
      "0x0000000000000010\nmain\n/src/a.cpp:7\n");
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames.at(0x8b47).function, "make_scratch");
  EXPECT_EQ(frames.at(0x8b47).file, "/src/tests/gpu/scratch_ext.cu");
  EXPECT_EQ(frames.at(0x8b47).line, 13u);
  EXPECT_EQ(frames.at(0x10).function, "main");
  EXPECT_EQ(frames.at(0x10).line, 7u);
}

}  // namespace
}  // namespace vramdoc::trace

#include "core/trace/analysis.hpp"
#include "core/trace/reader.hpp"

namespace vramdoc::trace {
namespace {

// A held-out program's 8 MiB pinned leak (cudaMallocHost) was absent from its trace: version 3
// records pinned host memory as its own kind, listed among the leaks, not counted as device bytes;
// cuMemFree of a device pointer at the same address does not release it.
TEST(Accounting, PinnedHostMemoryIsItsOwnKindInTheTrace) {
  Trace t;
  t.pid = 7;
  t.records.emplace_back(FrameRecord{1, 0, 0x5551234});
  t.records.emplace_back(EventRecord{10, 0x1000, 8 << 20, 0, 1, 0, Op::Alloc, MemKind::Pinned, 294});
  t.records.emplace_back(EventRecord{20, 0x2000, 1 << 20, 0, 1, 0, Op::Alloc, MemKind::Device, 245});
  t.records.emplace_back(EventRecord{30, 0x1000, 0, 0, 0, 0, Op::Free, MemKind::Device, 246});
  const std::string bytes = encode_trace(t);
  auto parsed = parse_trace(bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  EXPECT_EQ(parsed->version, 3u);
  EXPECT_EQ(encode_trace(*parsed), bytes);
  const auto a = analyze_trace(*parsed);
  EXPECT_EQ(a.live_bytes, 1u << 20) << "pinned host memory is not device bytes";
  bool pinned = false;
  for (const auto& g : a.leaks) pinned |= g.kind == MemKind::Pinned && g.bytes == (8u << 20);
  EXPECT_TRUE(pinned) << "the pinned leak is listed";
}

}  // namespace
}  // namespace vramdoc::trace
