#include "core/trace/reader.hpp"

#include <optional>
#include <unordered_set>

#include "core/input_file.hpp"

namespace vramdoc::trace {
namespace {

constexpr std::uint64_t kMaxFileBytes = 4ULL << 30;

template <class T>
T get(const unsigned char* p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

std::string at(std::size_t offset) { return " at byte " + std::to_string(offset); }

Result<EventRecord> parse_event(const unsigned char* p, std::size_t offset) {
  EventRecord e;
  e.t_ns = get<std::uint64_t>(p);
  e.address = get<std::uint64_t>(p + 8);
  e.size_bytes = get<std::uint64_t>(p + 16);
  e.stream = get<std::uint64_t>(p + 24);
  e.stack_id = get<std::uint32_t>(p + 32);
  e.device = get<std::uint32_t>(p + 36);
  const auto op = p[40];
  const auto kind = p[41];
  e.api = get<std::uint16_t>(p + 42);
  if (op < 1 || op > 3) return make_error("event with unknown operation " + std::to_string(op) + at(offset));
  if (kind < 1 || kind > kMaxMemKind)
    return make_error("event with unknown memory kind " + std::to_string(kind) + at(offset));
  e.op = static_cast<Op>(op);
  e.kind = static_cast<MemKind>(kind);
  return e;
}

std::optional<Error> check_record_header(std::uint16_t type, std::size_t length, std::size_t offset,
                                        std::uint32_t version) {
  const auto wrong_length = [&](const char* what) {
    return make_error(std::string(what) + " record of " + std::to_string(length) + " bytes" + at(offset));
  };
  switch (static_cast<RecordType>(type)) {
    case RecordType::Event:
      if (length != kEventPayloadBytes) return wrong_length("event");
      return std::nullopt;
    case RecordType::Frame:
      if (length != kFramePayloadBytes) return wrong_length("frame");
      return std::nullopt;
    case RecordType::Module: {
      const std::size_t fixed = version == 1 ? kModuleFixedBytesV1 : kModuleFixedBytes;
      const std::size_t id = version == 1 ? 0 : kMaxModuleIdBytes;
      if (length < fixed || length > fixed + id + kMaxPathBytes) return wrong_length("module");
      return std::nullopt;
    }
  }
  return make_error("unknown record type " + std::to_string(type) + at(offset));
}

}  // namespace

Result<Trace> parse_trace(std::string_view bytes) {
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  if (bytes.size() < kFileHeaderBytes || std::memcmp(data, kMagic, sizeof kMagic) != 0)
    return make_error("not a vramdoc trace (no VDTRACE header)");
  Trace trace;
  trace.version = get<std::uint32_t>(data + 8);
  if (trace.version < kOldestVersion || trace.version > kVersion)
    return make_error("trace format version " + std::to_string(trace.version) + ", this vramdoc reads versions " +
                      std::to_string(kOldestVersion) + " to " + std::to_string(kVersion));
  trace.pid = get<std::uint32_t>(data + 12);
  trace.start_unix_ns = get<std::uint64_t>(data + 16);

  std::unordered_set<std::uint32_t> frame_ids{0};
  std::size_t offset = kFileHeaderBytes;
  while (offset < bytes.size()) {
    if (bytes.size() - offset < kRecordHeaderBytes) { trace.truncated = true; break; }
    const auto type = get<std::uint16_t>(data + offset);
    const std::size_t length = get<std::uint16_t>(data + offset + 2);
    const std::size_t payload_at = offset + kRecordHeaderBytes;
    // The header is checked before the length is trusted: garbage is an error, not a truncation.
    if (auto bad = check_record_header(type, length, offset, trace.version)) return *bad;
    if (bytes.size() - payload_at < length) { trace.truncated = true; break; }
    const unsigned char* p = data + payload_at;
    switch (static_cast<RecordType>(type)) {
      case RecordType::Event: {
        auto event = parse_event(p, offset);
        if (!event) return Error{event.error()};
        if (!frame_ids.contains(event->stack_id))
          return make_error("event names unknown stack " + std::to_string(event->stack_id) + at(offset));
        trace.records.emplace_back(*event);
        break;
      }
      case RecordType::Frame: {
        FrameRecord f{get<std::uint32_t>(p), get<std::uint32_t>(p + 4), get<std::uint64_t>(p + 8)};
        if (f.id == 0 || f.parent >= f.id || !frame_ids.contains(f.parent) || !frame_ids.insert(f.id).second)
          return make_error("frame " + std::to_string(f.id) + " with parent " + std::to_string(f.parent) +
                            " breaks the prefix tree" + at(offset));
        trace.records.emplace_back(f);
        break;
      }
      case RecordType::Module: {
        std::size_t fixed = kModuleFixedBytesV1, id_bytes = 0;
        if (trace.version >= 2) {
          fixed = kModuleFixedBytes;
          id_bytes = p[24];
          if (id_bytes > kMaxModuleIdBytes || length - fixed < id_bytes || length - fixed - id_bytes > kMaxPathBytes)
            return make_error("module with a build-id of " + std::to_string(id_bytes) + " bytes in a record of " +
                              std::to_string(length) + at(offset));
        }
        const auto* text = reinterpret_cast<const char*>(p);
        ModuleRecord m{get<std::uint64_t>(p), get<std::uint64_t>(p + 8), get<std::uint64_t>(p + 16),
                       std::string(text + fixed + id_bytes, length - fixed - id_bytes), std::string(text + fixed, id_bytes)};
        if (m.start > m.end) return make_error("module with start after end" + at(offset));
        trace.records.emplace_back(std::move(m));
        break;
      }
    }
    offset = payload_at + length;
  }
  return trace;
}

Result<Trace> read_trace_file(const std::string& path) {
  auto bytes = read_input_file(path, kMaxFileBytes);
  if (!bytes) return make_error("trace: " + bytes.error());
  auto trace = parse_trace(*bytes);
  if (!trace) return make_error(path + ": " + trace.error());
  return trace;
}

std::string encode_trace(const Trace& trace) {
  std::string out;
  unsigned char buffer[kMaxRecordBytes];
  const auto append = [&](std::size_t n) { out.append(reinterpret_cast<const char*>(buffer), n); };
  const auto pid = trace.pid;
  unsigned char* p = buffer;
  std::memcpy(p, kMagic, sizeof kMagic);
  std::memcpy(p + 8, &trace.version, 4);
  std::memcpy(p + 12, &pid, 4);
  std::memcpy(p + 16, &trace.start_unix_ns, 8);
  append(kFileHeaderBytes);
  for (const auto& record : trace.records) {
    if (const auto* e = std::get_if<EventRecord>(&record)) append(put_event(buffer, *e));
    else if (const auto* f = std::get_if<FrameRecord>(&record)) append(put_frame(buffer, *f));
    else {
      const auto& m = std::get<ModuleRecord>(record);
      if (trace.version == 1) append(put_module_v1(buffer, m.load_bias, m.start, m.end, m.path.data(), m.path.size()));
      else append(put_module(buffer, m.load_bias, m.start, m.end, reinterpret_cast<const unsigned char*>(m.build_id.data()),
                             m.build_id.size(), m.path.data(), m.path.size()));
    }
  }
  return out;
}

}  // namespace vramdoc::trace
