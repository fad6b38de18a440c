// Result<T>: a value or an error message. core never prints or exits; it returns these.
#pragma once
#include <string>
#include <utility>
#include <variant>

namespace vramdoc {

struct Error {
  std::string message;  // what went wrong, with which input: shown to the user as is
};

template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}            // NOLINT: implicit on purpose
  Result(Error error) : v_(std::move(error)) {}        // NOLINT: implicit on purpose
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  const std::string& error() const { return std::get<1>(v_).message; }

 private:
  std::variant<T, Error> v_;
};

inline Error make_error(std::string message) { return Error{std::move(message)}; }

}  // namespace vramdoc
