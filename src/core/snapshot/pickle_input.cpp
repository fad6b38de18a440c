#include "core/snapshot/pickle_input.hpp"

#include <algorithm>
#include <cstring>

namespace vramdoc::snapshot::detail {

ByteWindow::ByteWindow(std::istream& in, std::size_t chunk_bytes) : in_(in), chunk_(std::max<std::size_t>(chunk_bytes, 64)) {}

const unsigned char* ByteWindow::take_slow(std::size_t n) {
  // Move what is left to the front, grow to hold n bytes, and read until n are there.
  const std::size_t left = end_ - pos_;
  if (pos_ > 0 && left > 0) std::memmove(buf_.data(), buf_.data() + pos_, left);
  base_ += pos_;
  pos_ = 0;
  end_ = left;
  const std::size_t want = std::max(n, chunk_);
  if (buf_.size() < want) buf_.resize(want);
  while (end_ < n && in_) {
    in_.read(reinterpret_cast<char*>(buf_.data() + end_), static_cast<std::streamsize>(buf_.size() - end_));
    end_ += static_cast<std::size_t>(in_.gcount());
  }
  if (end_ < n) return nullptr;
  const unsigned char* p = buf_.data();
  pos_ = n;
  return p;
}

}  // namespace vramdoc::snapshot::detail
