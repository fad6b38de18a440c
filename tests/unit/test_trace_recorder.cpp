// The tracer's recording half, without a GPU: what it writes, core reads back byte-exact,
// and the stacks it captures symbolise to this file's functions.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "backends/trace/folder.hpp"
#include "core/trace/elf_file.hpp"
#include "core/trace/reader.hpp"
#include "core/trace/symbols.hpp"
#include "tracer/recorder/recorder.hpp"

using namespace vramdoc;
using namespace vramdoc::trace;

namespace {

std::string temp_dir(const char* name) {
  auto dir = std::filesystem::temp_directory_path() / (std::string(name) + "." + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::string trace_path(const std::string& dir) { return dir + "/trace." + std::to_string(getpid()) + ".vdt"; }

__attribute__((noinline)) void record_planted_allocation(tracer::Recorder& recorder, std::uint64_t address) {
  std::uint64_t ips[tracer::kMaxStackDepth];
  const int depth = tracer::capture_stack(ips, tracer::kMaxStackDepth);
  EventRecord e{recorder.now_ns(), address, 4096, 0, 0, 0, Op::Alloc, MemKind::Device, 245};
  recorder.record(e, ips, depth);
}

}  // namespace

TEST(TraceRecorder, WritesWhatTheReaderReadsByteExact) {
  const auto dir = temp_dir("vramdoc-recorder");
  {
    tracer::Recorder recorder;
    ASSERT_TRUE(recorder.open(dir.c_str()));
    const std::uint64_t stack_a[] = {0x30, 0x20, 0x10};  // innermost first
    const std::uint64_t stack_b[] = {0x40, 0x20, 0x10};  // shares two outer frames with a
    recorder.record(EventRecord{1, 0xA000, 100, 0, 0, 0, Op::Alloc, MemKind::Device, 1}, stack_a, 3);
    recorder.record(EventRecord{2, 0xB000, 200, 0, 0, 1, Op::Alloc, MemKind::Managed, 2}, stack_b, 3);
    recorder.record(EventRecord{3, 0xA000, 0, 0, 0, 0, Op::Free, MemKind::Device, 3}, nullptr, 0);
    EXPECT_EQ(recorder.stack_nodes(), 4U);  // 0x10, 0x20, 0x30, 0x40: the prefix is shared
  }
  const std::string bytes = read_bytes(trace_path(dir));
  auto t = parse_trace(bytes);
  ASSERT_TRUE(t.ok()) << t.error();
  EXPECT_EQ(t->pid, static_cast<std::uint32_t>(getpid()));
  EXPECT_EQ(encode_trace(*t), bytes);
  std::vector<EventRecord> events;
  bool saw_own_module = false;
  std::string own_id;
  for (const auto& r : t->records) {
    if (const auto* e = std::get_if<EventRecord>(&r)) events.push_back(*e);
    if (const auto* m = std::get_if<ModuleRecord>(&r); m && m->path.find("unit_tests") != std::string::npos) {
      saw_own_module = true;
      own_id = m->build_id;
    }
  }
  EXPECT_TRUE(saw_own_module);
  // The build-id read from the loaded image is the file's (version 2).
  auto on_disk = build_id_of_file("/proc/self/exe");
  ASSERT_TRUE(on_disk.ok()) << on_disk.error();
  EXPECT_EQ(own_id, on_disk->value_or(""));
  ASSERT_EQ(events.size(), 3U);
  const StackTable stacks(*t);
  EXPECT_EQ(stacks.ips(events[0].stack_id), (std::vector<std::uint64_t>{0x30, 0x20, 0x10}));
  EXPECT_EQ(stacks.ips(events[1].stack_id), (std::vector<std::uint64_t>{0x40, 0x20, 0x10}));
  EXPECT_EQ(events[2].stack_id, 0U);
  EXPECT_EQ(events[1].kind, MemKind::Managed);
  std::filesystem::remove_all(dir);
}

TEST(TraceRecorder, FlushedDataSurvivesWithoutClose) {
  const auto dir = temp_dir("vramdoc-recorder-flush");
  tracer::Recorder recorder;
  ASSERT_TRUE(recorder.open(dir.c_str()));
  recorder.record(EventRecord{1, 0xA000, 100, 0, 0, 0, Op::Alloc, MemKind::Device, 1}, nullptr, 0);
  recorder.flush();
  recorder.record(EventRecord{2, 0xB000, 100, 0, 0, 0, Op::Alloc, MemKind::Device, 1}, nullptr, 0);
  // A killed process: the second event is still in the buffer, the first is on disk.
  auto t = read_trace_file(trace_path(dir));
  ASSERT_TRUE(t.ok()) << t.error();
  std::size_t events = 0;
  for (const auto& r : t->records) events += std::holds_alternative<EventRecord>(r);
  EXPECT_EQ(events, 1U);
  recorder.close();
  std::filesystem::remove_all(dir);
}

TEST(TraceRecorder, RefusesADirectoryThatCannotBeWritten) {
  tracer::Recorder recorder;
  EXPECT_FALSE(recorder.open("/nonexistent/dir"));
  recorder.record(EventRecord{}, nullptr, 0);  // a closed recorder ignores events
  EXPECT_FALSE(recorder.is_open());
}

TEST(TraceRecorder, ManyBuffersOfEventsAllArrive) {
  const auto dir = temp_dir("vramdoc-recorder-many");
  constexpr std::uint64_t kEvents = 100'000;  // ~4.8 MB: several buffer flushes
  {
    tracer::Recorder recorder;
    ASSERT_TRUE(recorder.open(dir.c_str()));
    for (std::uint64_t i = 0; i < kEvents; ++i) {
      const std::uint64_t stack[] = {0x1000 + i % 7, 0x10};
      recorder.record(EventRecord{i, 0x1000 + i, 64, 0, 0, 0, Op::Alloc, MemKind::Device, 1}, stack, 2);
    }
  }
  auto t = read_trace_file(trace_path(dir));
  ASSERT_TRUE(t.ok()) << t.error();
  std::uint64_t events = 0;
  for (const auto& r : t->records) events += std::holds_alternative<EventRecord>(r);
  EXPECT_EQ(events, kEvents);
  std::filesystem::remove_all(dir);
}

TEST(TraceRecorder, CapturedStacksSymboliseToTheCallingFunction) {
  const auto dir = temp_dir("vramdoc-recorder-symbols");
  {
    tracer::Recorder recorder;
    ASSERT_TRUE(recorder.open(dir.c_str()));
    record_planted_allocation(recorder, 0xA000);
  }
  auto traces = backends::read_traces(dir);
  ASSERT_TRUE(traces.ok()) << traces.error();
  ASSERT_TRUE(traces->problems.empty()) << traces->problems.front();
  const std::string report = trace::render_trace_text(traces->processes);
  EXPECT_NE(report.find("record_planted_allocation"), std::string::npos) << report;
  EXPECT_NE(report.find("test_trace_recorder.cpp"), std::string::npos) << report;
  EXPECT_NE(report.find("still live 1"), std::string::npos) << report;
  std::filesystem::remove_all(dir);
}
