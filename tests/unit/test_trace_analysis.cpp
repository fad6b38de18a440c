// The trace analyser, symbol parsing and the report, on hand-made traces (no GPU).
#include <gtest/gtest.h>

#include <chrono>
#include <limits>

#include "core/trace/analysis.hpp"
#include "core/trace/report.hpp"
#include "core/trace/symbols.hpp"
#include "core/trace/symbolize.hpp"

using namespace vramdoc::trace;

namespace {

constexpr std::uint64_t MiB = 1 << 20;

struct Builder {
  Trace t;
  std::uint64_t now = 0;
  Builder& frame(std::uint32_t id, std::uint32_t parent, std::uint64_t ip) {
    t.records.emplace_back(FrameRecord{id, parent, ip});
    return *this;
  }
  Builder& alloc(std::uint64_t address, std::uint64_t bytes, std::uint32_t stack, MemKind kind = MemKind::Device) {
    t.records.emplace_back(EventRecord{now += 1000, address, bytes, 0, stack, 0, Op::Alloc, kind, 0});
    return *this;
  }
  Builder& free(std::uint64_t address, MemKind kind = MemKind::Device, std::uint64_t bytes = 0) {
    t.records.emplace_back(EventRecord{now += 1000, address, bytes, 0, 0, 0, Op::Free, kind, 0});
    return *this;
  }
  Builder& failed(std::uint64_t bytes, std::uint32_t stack) {
    t.records.emplace_back(EventRecord{now += 1000, 0, bytes, 0, stack, 0, Op::Failed, MemKind::Device, 0});
    return *this;
  }
};

}  // namespace

TEST(TraceAnalysis, LeaksAreGroupedByStackLargestFirst) {
  Builder b;
  b.frame(1, 0, 0x100).frame(2, 1, 0x200).frame(3, 1, 0x300);
  b.alloc(0xA000, 1 * MiB, 2).alloc(0xB000, 1 * MiB, 2).alloc(0xC000, 5 * MiB, 3).alloc(0xD000, 7 * MiB, 3);
  b.free(0xD000);
  const auto a = analyze_trace(b.t);
  EXPECT_EQ(a.allocations, 4U);
  EXPECT_EQ(a.releases, 1U);
  EXPECT_EQ(a.live, 3U);
  EXPECT_EQ(a.allocations, a.releases + a.live);
  ASSERT_EQ(a.leaks.size(), 2U);
  EXPECT_EQ(a.leaks[0].stack_id, 3U);
  EXPECT_EQ(a.leaks[0].bytes, 5 * MiB);
  EXPECT_EQ(a.leaks[1].stack_id, 2U);
  EXPECT_EQ(a.leaks[1].count, 2U);
  EXPECT_EQ(a.live_bytes, 7 * MiB);
  EXPECT_EQ(a.peak_bytes, 14 * MiB);
}

TEST(TraceAnalysis, PeakContributorsAreWhatWasAliveAtThePeak) {
  Builder b;
  b.frame(1, 0, 0x100).frame(2, 0, 0x200);
  b.alloc(0xA000, 10 * MiB, 1).alloc(0xB000, 30 * MiB, 2).free(0xB000).free(0xA000).alloc(0xC000, 1 * MiB, 1);
  const auto a = analyze_trace(b.t);
  EXPECT_EQ(a.peak_bytes, 40 * MiB);
  EXPECT_DOUBLE_EQ(a.peak_t_s, 2000e-9);
  ASSERT_EQ(a.peak_contributors.size(), 2U);
  EXPECT_EQ(a.peak_contributors[0].stack_id, 2U);
  EXPECT_EQ(a.peak_contributors[0].bytes, 30 * MiB);
  ASSERT_EQ(a.leaks.size(), 1U);
  EXPECT_EQ(a.leaks[0].bytes, 1 * MiB);
}

TEST(TraceAnalysis, FreeAsyncMatchesAPlainAllocationAndReleasesBeforeTracingAreCounted) {
  Builder b;
  b.alloc(0xA000, MiB, 0).free(0xA000, MemKind::Async).free(0xF000);
  const auto a = analyze_trace(b.t);
  EXPECT_EQ(a.releases, 1U);
  EXPECT_EQ(a.unmatched_releases, 1U);
  EXPECT_EQ(a.live_bytes, 0U);
}

TEST(TraceAnalysis, VmmMapsAreNotCountedTwiceAndUnmapReleasesARange) {
  Builder b;
  b.alloc(0x1, 2 * MiB, 0, MemKind::VmmPhysical).alloc(0x2, 2 * MiB, 0, MemKind::VmmPhysical);
  b.alloc(0x10000000, 2 * MiB, 0, MemKind::VmmMap).alloc(0x10200000, 2 * MiB, 0, MemKind::VmmMap);
  const auto before = analyze_trace(b.t);
  EXPECT_EQ(before.live_bytes, 4 * MiB);  // physical memory only
  b.free(0x10000000, MemKind::VmmMap, 4 * MiB).free(0x1, MemKind::VmmPhysical).free(0x2, MemKind::VmmPhysical);
  const auto a = analyze_trace(b.t);
  EXPECT_EQ(a.releases, 4U);
  EXPECT_EQ(a.live, 0U);
  EXPECT_EQ(a.live_bytes, 0U);
  EXPECT_TRUE(a.leaks.empty());
}

TEST(TraceAnalysis, HandlesAndPointersDoNotMatchEachOther) {
  Builder b;
  b.alloc(0x5, MiB, 0, MemKind::VmmPhysical).free(0x5, MemKind::Device);
  const auto a = analyze_trace(b.t);
  EXPECT_EQ(a.unmatched_releases, 1U);
  EXPECT_EQ(a.live_bytes, MiB);
}

TEST(TraceAnalysis, AReusedAddressWithoutReleaseDoesNotInflateBytes) {
  Builder b;
  b.alloc(0xA000, 4 * MiB, 0).alloc(0xA000, 1 * MiB, 0);
  const auto a = analyze_trace(b.t);
  EXPECT_EQ(a.live_bytes, 1 * MiB);
  EXPECT_EQ(a.allocations, a.releases + a.live);
}

TEST(TraceAnalysis, RefusedAllocationsAreGrouped) {
  Builder b;
  b.frame(1, 0, 0x100).failed(80ULL << 30, 1).failed(80ULL << 30, 1);
  const auto a = analyze_trace(b.t);
  EXPECT_EQ(a.failed, 2U);
  ASSERT_EQ(a.refused.size(), 1U);
  EXPECT_EQ(a.refused[0].bytes, 160ULL << 30);
  EXPECT_EQ(a.allocations, 0U);
}

TEST(TraceAnalysis, TimelineIsBoundedAndKeepsThePeak) {
  Builder b;
  for (std::uint64_t i = 0; i < 5000; ++i) b.alloc(0x1000 + i, MiB, 0).free(0x1000 + i);
  const auto a = analyze_trace(b.t, 100);
  EXPECT_LE(a.timeline.size(), 100U);
  std::uint64_t highest = 0;
  for (const auto& p : a.timeline) highest = std::max(highest, p.bytes);
  EXPECT_EQ(highest, MiB);
}

// Regression (GPU run 2026-11-29): a PyTorch loop keeping one tensor per step showed no leak,
// because Python's teardown frees every tensor before exit. It must show as accumulating.
TEST(TraceAnalysis, ALoopThatKeepsMemoryIsAccumulatingEvenIfTeardownFreesIt) {
  Builder b;
  b.frame(1, 0, 0x100).frame(2, 0, 0x200);
  for (std::uint64_t i = 0; i < 4; ++i) b.alloc(0x100000 + i, 64 * MiB, 1);  // weights, at the start
  for (std::uint64_t step = 0; step < 50; ++step) {
    b.alloc(0x200000 + step, MiB, 2);              // kept by the loop
    b.alloc(0x300000, 8 * MiB, 1).free(0x300000);  // activations, freed each step
  }
  for (std::uint64_t step = 0; step < 50; ++step) b.free(0x200000 + step);  // teardown
  for (std::uint64_t i = 0; i < 4; ++i) b.free(0x100000 + i);
  const auto a = analyze_trace(b.t);
  EXPECT_TRUE(a.leaks.empty());
  ASSERT_EQ(a.accumulating.size(), 1U);
  EXPECT_EQ(a.accumulating[0].stack_id, 2U);
  EXPECT_EQ(a.accumulating[0].count, 50U);
  EXPECT_GT(a.accumulating[0].last_t_s, a.accumulating[0].first_t_s);
}

TEST(TraceAnalysis, AllocationsMadeTogetherAreNotAccumulating) {
  Builder b;
  b.frame(1, 0, 0x100).frame(2, 0, 0x200).frame(3, 0, 0x300);
  for (std::uint64_t i = 0; i < 40; ++i) b.alloc(0x100000 + i, MiB, 1);  // e.g. model parameters
  for (std::uint64_t step = 0; step < 100; ++step) b.alloc(0x300000, MiB, 2).free(0x300000);
  b.alloc(0x400000, 100 * MiB, 3);  // the peak comes late
  const auto a = analyze_trace(b.t);
  EXPECT_EQ(a.peak_contributors.size(), 2U);
  EXPECT_TRUE(a.accumulating.empty());
}

TEST(TraceSymbols, StackTableWalksToTheRoot) {
  Builder b;
  b.frame(1, 0, 0x100).frame(2, 1, 0x200).frame(3, 2, 0x300);
  const StackTable stacks(b.t);
  EXPECT_EQ(stacks.ips(3), (std::vector<std::uint64_t>{0x300, 0x200, 0x100}));
  EXPECT_TRUE(stacks.ips(0).empty());
  EXPECT_TRUE(stacks.ips(42).empty());
}

TEST(TraceSymbols, ParsesAddr2lineOutput) {
  const auto frames = parse_addr2line(
      "0x0000000000001139\nleak_site_a(int)\n/src/planted_leak.cu:21\n"
      "0x0000000000002000\n??\n??:0\n"
      "0x0000000000003000\nmain\n/src/planted_leak.cu:40 (discriminator 2)\n");
  ASSERT_EQ(frames.size(), 3U);
  EXPECT_EQ(frames.at(0x1139).function, "leak_site_a(int)");
  EXPECT_EQ(frames.at(0x1139).file, "/src/planted_leak.cu");
  EXPECT_EQ(frames.at(0x1139).line, 21U);
  EXPECT_EQ(frames.at(0x2000).function, "");
  EXPECT_EQ(frames.at(0x2000).file, "");
  EXPECT_EQ(frames.at(0x3000).line, 40U);
}

TEST(TraceSymbols, ResolvesThroughTheModuleAndPicksTheCallSite) {
  Builder b;
  b.t.records.emplace_back(ModuleRecord{0x7000000, 0x7001000, 0x7100000, "/usr/lib/libcuda.so.1", ""});
  b.t.records.emplace_back(ModuleRecord{0x5550000, 0x5551000, 0x5560000, "/work/planted_leak", ""});
  const std::vector<std::uint64_t> ips{0x7001234, 0x5551100, 0x5552201, 0x9999};
  const ModuleMap modules(b.t);
  const auto plan = plan_symbolization(modules, ips);
  EXPECT_EQ(plan.at("/work/planted_leak"), (std::vector<std::uint64_t>{0x10FF, 0x2200}));
  std::map<std::string, std::unordered_map<std::uint64_t, SourceFrame>> answers;
  answers["/work/planted_leak"][0x10FF] = SourceFrame{0, "", 0x10FF, "cudaMalloc", "", 0};
  answers["/work/planted_leak"][0x2200] = SourceFrame{0, "", 0x2200, "leak_site_b()", "/src/p.cu", 7};
  const auto frames = resolve_frames(modules, ips, answers);
  ASSERT_EQ(frames.size(), 4U);
  EXPECT_EQ(frames[0].module, "libcuda.so.1");
  EXPECT_EQ(call_site_index(frames), 2U);
  EXPECT_EQ(describe(frames[2]), "leak_site_b() (p.cu:7)");
  EXPECT_EQ(describe(frames[0]), "libcuda.so.1+0x1233");
  EXPECT_EQ(describe(frames[3]), "0x9999");
}

TEST(TraceSymbols, PytorchCallSiteIsThePythonBindingOfTheOp) {
  const auto frame = [](const char* module, const char* function) {
    return SourceFrame{0, module, 0, function, "", 0};
  };
  std::vector<SourceFrame> from_python{frame("libcuda.so.1", "cuMemAlloc_v2"), frame("libcudart.so.13", "cudaMalloc"),
                                       frame("libc10_cuda.so", "c10::cuda::CUDACachingAllocator::allocate"),
                                       frame("libtorch_cpu.so", "at::native::full"),
                                       frame("libtorch_python.so", "torch::autograd::THPVariable_full"),
                                       frame("python3.12", "_PyEval_EvalFrameDefault")};
  EXPECT_EQ(call_site_index(from_python), 4U);
  from_python.erase(from_python.begin() + 4);  // an autograd thread: no Python binding
  EXPECT_EQ(call_site_index(from_python), 3U);
}

TEST(TraceReport, TextNamesTheLeakingCallSiteAndThePytorchCaveat) {
  Builder b;
  b.frame(1, 0, 0x100);
  b.alloc(0xA000, 3 * MiB, 1);
  ProcessTrace p{"trace.7.vdt", 7, false, true, analyze_trace(b.t), {}, 0, {}};
  p.stacks[1] = {SourceFrame{0x100, "app", 0xff, "leaky_function()", "/src/app.cpp", 12}};
  const std::string text = render_trace_text({p});
  EXPECT_NE(text.find("allocations 1 = released 0 + still live 1"), std::string::npos) << text;
  EXPECT_NE(text.find("3.00 MiB"), std::string::npos) << text;
  EXPECT_NE(text.find("leaky_function() (app.cpp:12)"), std::string::npos) << text;
  EXPECT_NE(text.find("PYTORCH_NO_CUDA_MEMORY_CACHING=1"), std::string::npos) << text;
  const auto json = trace_report_json({p});
  EXPECT_EQ(json["processes"][0]["leaks"][0]["call_site"], "leaky_function() (app.cpp:12)");
  EXPECT_EQ(json["processes"][0]["live"], 1);
}

TEST(TraceReport, NoPytorchNoteForOtherPrograms) {
  ProcessTrace p{"trace.7.vdt", 7, false, false, {}, {}, 0, {}};
  EXPECT_EQ(render_trace_text({p}).find("PYTORCH"), std::string::npos);
}

// Regression (issue 25): sizes summed past 2^64 wrapped, so a hostile trace's peak read as a few
// bytes. Sums saturate at the largest figure; releases still subtract exactly.
TEST(TraceAnalysis, ByteSumsSaturateInsteadOfWrapping) {
  Builder b;
  b.frame(1, 0, 0x100);
  const std::uint64_t half = 1ULL << 63;
  b.alloc(0xA000, half, 1).alloc(0xB000, half, 1).alloc(0xC000, half, 1).free(0xC000).free(0xB000);
  const auto a = analyze_trace(b.t);
  EXPECT_EQ(a.peak_bytes, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(a.live_bytes, half);  // back below: exact again
  ASSERT_EQ(a.peak_contributors.size(), 1U);
  EXPECT_EQ(a.peak_contributors[0].bytes, std::numeric_limits<std::uint64_t>::max());
  b.failed(half, 1).failed(half, 1);
  EXPECT_EQ(analyze_trace(b.t).refused[0].bytes, std::numeric_limits<std::uint64_t>::max());
}

// Overlapping module ranges: the one recorded last wins, as the linear scan decided; gaps are none.
TEST(TraceSymbols, ModuleMapFindsTheLastRecordedModuleCoveringAnAddress) {
  Trace t;
  t.records.emplace_back(ModuleRecord{0, 0x1000, 0x5000, "/a", ""});
  t.records.emplace_back(ModuleRecord{0, 0x2000, 0x3000, "/b", ""});  // inside /a
  t.records.emplace_back(ModuleRecord{0, 0x4800, 0x6000, "/c", ""});  // over /a's end
  t.records.emplace_back(ModuleRecord{0, 0x9000, 0x9000, "/empty", ""});
  const ModuleMap map(t);
  const std::pair<std::uint64_t, const char*> expect[] = {
      {0x0fff, nullptr}, {0x1000, "/a"}, {0x1fff, "/a"}, {0x2000, "/b"}, {0x2fff, "/b"}, {0x3000, "/a"},
      {0x47ff, "/a"},    {0x4800, "/c"}, {0x5fff, "/c"}, {0x6000, nullptr}, {0x9000, nullptr}};
  for (const auto& [ip, path] : expect) {
    const ModuleRecord* m = map.find(ip);
    if (!path) {
      EXPECT_EQ(m, nullptr) << std::hex << ip;
      continue;
    }
    ASSERT_TRUE(m != nullptr) << std::hex << ip;
    EXPECT_EQ(m->path, path) << std::hex << ip;
  }
}

// Regression (issue 25): a 20 MB trace took 55 s, every frame scanning every record for its
// module. 20,000 modules and 200,000 frames now take a moment (the scan: 4e9 comparisons).
TEST(TraceSymbols, ManyModulesAndFramesResolveInABoundedTime) {
  Trace t;
  for (std::uint64_t i = 0; i < 20000; ++i)
    t.records.emplace_back(ModuleRecord{i << 20, (i << 20) + 0x1000, (i << 20) + 0x9000, "/lib" + std::to_string(i) + ".so", ""});
  std::vector<std::uint64_t> ips;
  for (std::uint64_t i = 0; i < 200000; ++i) ips.push_back(((i * 7919) % 20000 << 20) + 0x1100);
  const auto start = std::chrono::steady_clock::now();
  const ModuleMap map(t);
  const auto plan = plan_symbolization(map, ips);
  const auto frames = resolve_frames(map, ips, {});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(plan.size(), 20000U);
  ASSERT_EQ(frames.size(), ips.size());
  EXPECT_EQ(frames[1].module, "lib7919.so");
  EXPECT_LT(seconds, 30.0);  // generous for a loaded machine; the linear scan took minutes
}

// Symbols and paths come from the traced program's files: shown safe for a terminal.
TEST(TraceSymbols, DescribeEscapesControlCharacters) {
  SourceFrame f{0, "", 0x10, "\x1b]52;c;aGk=\a\x1b[2Jevil()", "/src/\nforged.cu", 7};
  EXPECT_EQ(describe(f), "\\x1b]52;c;aGk=\\x07\\x1b[2Jevil() (\\nforged.cu:7)");
}

// Issue 32: a version 1 trace records no build-ids; a module file of the same path on this machine
// was symbolised silently (nonsense frames when it is another build). It stays module+offset, warned.
TEST(TraceSymbols, Issue32Version1TraceIsNotSymbolisedAgainstThisMachinesFiles) {
  const std::string here = std::string(VRAMDOC_SOURCE_DIR) + "/CMakeLists.txt";  // a file that exists here
  for (const std::uint32_t version : {1u, 2u}) {
    Builder b;
    b.t.version = version;
    b.t.records.emplace_back(ModuleRecord{0x5550000, 0x5551000, 0x5560000, here, ""});
    b.frame(1, 0, 0x5551100);
    b.alloc(0xA000, 1 * MiB, 1);  // never freed: its stack is named in the report
    std::vector<std::string> asked;
    const auto p = symbolized_process("t.vdt", b.t, [&](const std::string& path, const std::vector<std::uint64_t>&) {
      asked.push_back(path);
      return std::unordered_map<std::uint64_t, SourceFrame>{};
    });
    if (version == 1) {
      EXPECT_TRUE(asked.empty());
      ASSERT_EQ(p.warnings.size(), 1U);
      EXPECT_NE(p.warnings[0].find("version 1 trace records no build-ids"), std::string::npos) << p.warnings[0];
      EXPECT_NE(p.warnings[0].find("module+offset"), std::string::npos);
    } else {
      EXPECT_EQ(asked, std::vector<std::string>{here});  // version 2 without a build-id: the module has none to check
      EXPECT_TRUE(p.warnings.empty());
    }
  }
}
