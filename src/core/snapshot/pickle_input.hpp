// The pickle reader's view of its input: a bounded window over a stream that hands out the next
// n bytes contiguously, refilled in chunks; the whole file is never held.
#pragma once
#include <cstdint>
#include <istream>
#include <memory>

namespace vramdoc::snapshot::detail {

class ByteWindow {
 public:
  explicit ByteWindow(std::istream& in, std::size_t chunk_bytes = 1u << 20);
  // The next n bytes, consumed; valid until the next call. Null when the input ends first.
  const unsigned char* take(std::size_t n) {
    if (end_ - pos_ >= n) {
      const unsigned char* p = buf_.get() + pos_;
      pos_ += n;
      return p;
    }
    return take_slow(n);
  }
  // Offset in the stream of the next byte to be taken.
  std::uint64_t offset() const { return base_ + pos_; }

 private:
  const unsigned char* take_slow(std::size_t n);
  std::istream& in_;
  std::size_t chunk_;
  std::unique_ptr<unsigned char[]> buf_;  // not zeroed: only what was read is read back
  std::size_t capacity_ = 0, pos_ = 0, end_ = 0;
  std::uint64_t base_ = 0;  // stream offset of buf_[0]
};

}  // namespace vramdoc::snapshot::detail
