#include "core/snapshot/pickle_input.hpp"

#include <algorithm>
#include <cstring>

namespace vramdoc::snapshot::detail {

ByteWindow::ByteWindow(std::istream& in, std::size_t chunk_bytes) : in_(in), chunk_(std::max<std::size_t>(chunk_bytes, 64)) {}

const unsigned char* ByteWindow::take_slow(std::size_t n) {
  // Move what is left to the front, grow to hold n bytes, and read until n are there.
  const std::size_t left = end_ - pos_;
  const std::size_t want = std::max(n, chunk_);
  if (capacity_ < want) {
    auto bigger = std::make_unique_for_overwrite<unsigned char[]>(want);
    if (left > 0) std::memcpy(bigger.get(), buf_.get() + pos_, left);
    buf_ = std::move(bigger);
    capacity_ = want;
  } else if (pos_ > 0 && left > 0) {
    std::memmove(buf_.get(), buf_.get() + pos_, left);
  }
  base_ += pos_;
  pos_ = 0;
  end_ = left;
  while (end_ < n && in_) {
    in_.read(reinterpret_cast<char*>(buf_.get() + end_), static_cast<std::streamsize>(capacity_ - end_));
    end_ += static_cast<std::size_t>(in_.gcount());
  }
  if (end_ < n) return nullptr;
  pos_ = n;
  return buf_.get();
}

}  // namespace vramdoc::snapshot::detail
