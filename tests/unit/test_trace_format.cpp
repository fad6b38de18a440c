// The .vdt format: byte-exact round trips (heaptrack tst_io) and hostile input.
#include <gtest/gtest.h>

#include "core/trace/reader.hpp"

using namespace vramdoc::trace;

namespace {

const std::string kBuildId("\x8f\x01\x00\xab\xcd\xef\x10\x20\x30\x40\x50\x60\x70\x80\x90\xa0\xb0\xc0\xd0\xe0", 20);
// The module record of sample_trace(): header, 25 fixed bytes, the 20-byte id, an 18-byte path.
constexpr std::size_t kModuleBytes = 4 + 25 + 20 + 18;

Trace sample_trace(std::uint32_t version = kVersion) {
  Trace t;
  t.version = version;
  t.pid = 4242;
  t.start_unix_ns = 1'700'000'000'123'456'789ULL;
  t.records.emplace_back(ModuleRecord{0x5550000, 0x5551000, 0x5559000, "/opt/app/bin/train", version == 1 ? "" : kBuildId});
  t.records.emplace_back(FrameRecord{1, 0, 0x5551234});
  t.records.emplace_back(FrameRecord{2, 1, 0x5552345});
  t.records.emplace_back(EventRecord{10, 0x7f0000000000, 1 << 20, 0, 2, 0, Op::Alloc, MemKind::Device, 245});
  t.records.emplace_back(EventRecord{20, 0x7f0000000000, 0, 0x99, 0, 0, Op::Free, MemKind::Async, 600});
  t.records.emplace_back(EventRecord{30, 0, 1ULL << 40, 0, 1, 3, Op::Failed, MemKind::Device, 243});
  return t;
}

std::string encoded_sample() { return encode_trace(sample_trace()); }

void expect_error(const std::string& bytes, const std::string& fragment) {
  auto r = parse_trace(bytes);
  ASSERT_FALSE(r.ok()) << "accepted hostile input";
  EXPECT_NE(r.error().find(fragment), std::string::npos) << r.error();
}

}  // namespace

TEST(TraceFormat, RoundTripIsByteExact) {
  const std::string bytes = encoded_sample();
  auto parsed = parse_trace(bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  EXPECT_EQ(encode_trace(*parsed), bytes);
  EXPECT_EQ(parsed->records, sample_trace().records);
  EXPECT_EQ(parsed->pid, 4242U);
  EXPECT_FALSE(parsed->truncated);
}

TEST(TraceFormat, LayoutMatchesTheDocumentedSizes) {
  // docs/trace-format.md: 24-byte header; event 4+44, frame 4+16, module 4+25+id+path.
  EXPECT_EQ(encoded_sample().size(), 24U + kModuleBytes + 2 * (4 + 16) + 3 * (4 + 44));
  const std::string bytes = encoded_sample();
  EXPECT_EQ(bytes.substr(0, 8), std::string("VDTRACE\0", 8));
  EXPECT_EQ(static_cast<unsigned char>(bytes[8]), 3);  // version, little-endian
  EXPECT_EQ(static_cast<unsigned char>(bytes[24 + 4 + 24]), 20);  // the build-id's length
  EXPECT_EQ(bytes.substr(24 + 4 + 25, 20), kBuildId);
}

// Version 1 traces (no build-id) are still read, and written back byte for byte.
TEST(TraceFormat, Version1StillReads) {
  const std::string bytes = encode_trace(sample_trace(1));
  EXPECT_EQ(bytes.size(), 24U + (4 + 24 + 18) + 2 * (4 + 16) + 3 * (4 + 44));
  auto parsed = parse_trace(bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  EXPECT_EQ(parsed->version, 1U);
  EXPECT_EQ(parsed->records, sample_trace(1).records);
  EXPECT_EQ(encode_trace(*parsed), bytes);
}

TEST(TraceFormat, RejectsHostileBuildIds) {
  const std::size_t length_at = kFileHeaderBytes + 4 + 24;
  std::string too_long = encoded_sample();
  too_long[length_at] = 65;
  expect_error(too_long, "build-id of 65 bytes");
  std::string past_record = encoded_sample();
  past_record[length_at] = 40;  // the record holds 20 + 18 bytes after the fixed part
  expect_error(past_record, "build-id of 40 bytes");
  // A version 2 module record too short for its fixed part.
  std::string short_module = encoded_sample();
  short_module[kFileHeaderBytes + 2] = 24;
  short_module[kFileHeaderBytes + 3] = 0;
  expect_error(short_module, "module record of 24 bytes");
}

TEST(TraceFormat, EveryTruncationKeepsTheWholeRecordsBefore) {
  const std::string bytes = encoded_sample();
  for (std::size_t cut = kFileHeaderBytes; cut < bytes.size(); ++cut) {
    auto r = parse_trace(bytes.substr(0, cut));
    ASSERT_TRUE(r.ok()) << "cut at " << cut << ": " << r.error();
    // Re-encoding what survived gives a prefix of the original: nothing invented.
    const std::string again = encode_trace(*r);
    EXPECT_EQ(bytes.compare(0, again.size(), again), 0) << "cut at " << cut;
    EXPECT_EQ(r->truncated, again.size() != cut) << "cut at " << cut;
  }
}

TEST(TraceFormat, RejectsMissingOrShortHeader) {
  expect_error("", "not a vramdoc trace");
  expect_error(encoded_sample().substr(0, 23), "not a vramdoc trace");
  expect_error(std::string(4096, '\xff'), "not a vramdoc trace");
}

TEST(TraceFormat, RejectsOtherVersions) {
  std::string bytes = encoded_sample();
  bytes[8] = 4;
  expect_error(bytes, "version 4, this vramdoc reads versions 1 to 3");
  bytes[8] = 0;
  expect_error(bytes, "version 0");
}

TEST(TraceFormat, RejectsGarbageAfterTheHeader) {
  std::string bytes = encoded_sample().substr(0, kFileHeaderBytes);
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>((i * 37 + 11) & 0xff));
  EXPECT_FALSE(parse_trace(bytes).ok());
}

TEST(TraceFormat, RejectsWrongRecordLengths) {
  std::string bytes = encoded_sample();
  const std::size_t event_at = kFileHeaderBytes + kModuleBytes + 2 * (4 + 16);
  bytes[event_at + 2] = 43;  // an event whose payload claims 43 bytes
  expect_error(bytes, "event record of 43 bytes");
}

TEST(TraceFormat, AbsurdLengthIsAnErrorNotATruncation) {
  std::string bytes = encoded_sample();
  bytes += std::string("\x03\x00\xff\xff", 4);  // an event claiming 65535 bytes, then EOF
  expect_error(bytes, "event record of 65535 bytes");
  std::string path = encoded_sample();
  path += std::string("\x01\x00\xff\xff", 4);  // a module path longer than kMaxPathBytes
  expect_error(path, "module record of 65535 bytes");
}

TEST(TraceFormat, RejectsUnknownEnumsAndRecordTypes) {
  Trace t = sample_trace();
  std::string bytes = encode_trace(t);
  const std::size_t event_at = kFileHeaderBytes + kModuleBytes + 2 * (4 + 16);
  std::string bad_op = bytes;
  bad_op[event_at + 4 + 40] = 9;
  expect_error(bad_op, "unknown operation 9");
  std::string bad_kind = bytes;
  bad_kind[event_at + 4 + 41] = 0;
  expect_error(bad_kind, "unknown memory kind 0");
  std::string bad_type = bytes;
  bad_type[event_at] = 77;
  expect_error(bad_type, "unknown record type 77");
}

TEST(TraceFormat, RejectsABrokenPrefixTree) {
  Trace cycle = sample_trace();
  cycle.records[2] = FrameRecord{2, 2, 0x1};  // its own parent
  expect_error(encode_trace(cycle), "breaks the prefix tree");
  Trace orphan = sample_trace();
  orphan.records[2] = FrameRecord{3, 2, 0x1};  // parent never written
  expect_error(encode_trace(orphan), "breaks the prefix tree");
  Trace duplicate = sample_trace();
  duplicate.records[2] = FrameRecord{1, 0, 0x1};
  expect_error(encode_trace(duplicate), "breaks the prefix tree");
  Trace dangling = sample_trace();
  std::get<EventRecord>(dangling.records[3]).stack_id = 99;
  expect_error(encode_trace(dangling), "unknown stack 99");
}

TEST(TraceFormat, RejectsModuleWithStartAfterEnd) {
  Trace t = sample_trace();
  t.records[0] = ModuleRecord{0, 10, 5, "x", ""};
  expect_error(encode_trace(t), "start after end");
}

TEST(TraceFormat, ReadFileNamesTheMissingFile) {
  auto r = read_trace_file("/nonexistent/trace.1.vdt");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("/nonexistent/trace.1.vdt"), std::string::npos);
}
