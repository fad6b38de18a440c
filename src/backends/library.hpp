// The one way vramdoc loads a vendor library (NVML, the CUDA driver, OpenSSL): dlopen at run time,
// so the binary starts on a machine without it, and the functions it calls as one X-macro table
// per library, X(member, need, function type, names newest first...): _v3, then _v2, then plain
// (nvtop's and btop's lesson: a table, not 200 lines of dlsym). Required rows must resolve;
// optional ones stay null and their queries report "unknown".
#pragma once
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/result.hpp"

namespace vramdoc::backends {

enum Need { kRequired, kOptional };

// One resolved function: the pointer and the name it was found under (null when absent).
template <class Fn>
struct Symbol {
  Fn fn = nullptr;
  const char* name = nullptr;
  explicit operator bool() const { return fn != nullptr; }
  template <class... Args>
  auto operator()(Args&&... args) const {
    return fn(std::forward<Args>(args)...);
  }
};

// A dlopen'ed library, closed when the object goes (RTLD_NOW | RTLD_LOCAL).
class Library {
 public:
  // Opens $`variable` when it is set and not empty (tests point it at a fake), else `soname`.
  // The error is the loader's reason; `path()` says which file was tried either way.
  static Result<Library> open(const char* variable, const char* soname);
  Library(Library&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)), path_(std::move(other.path_)) {}
  Library& operator=(Library&&) = delete;
  ~Library();
  void* handle() const { return handle_; }
  const std::string& path() const { return path_; }
  // The file `open` would try: $variable, else soname.
  static std::string path_for(const char* variable, const char* soname);

 private:
  Library(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  void* handle_ = nullptr;
  std::string path_;
};

// The address `library` exports as `name`, or null.
void* find_address(void* library, const char* name);

// Resolves one row: the first of `names` the library exports. A required row that is missing
// sets `missing` (its first name) unless an earlier one did.
template <class Fn>
void resolve_row(void* library, Symbol<Fn>& symbol, Need need, std::initializer_list<const char*> names,
                 std::optional<std::string>& missing) {
  for (const char* name : names) {
    if (void* address = find_address(library, name)) {
      symbol.fn = reinterpret_cast<Fn>(address);
      symbol.name = name;
      return;
    }
  }
  if (need == kRequired && !missing) missing = *names.begin();
}

}  // namespace vramdoc::backends

// The members of a table's struct: X(member, need, type, names...) -> Symbol<type> member;
#define VRAMDOC_SYMBOL_MEMBER(member, need, type, ...) ::vramdoc::backends::Symbol<type> member;
// Resolves a row from `library` into `symbols.member`, noting a missing required one in `missing`.
#define VRAMDOC_SYMBOL_RESOLVE(member, need, type, ...) \
  ::vramdoc::backends::resolve_row(library, symbols.member, need, {__VA_ARGS__}, missing);
// Appends the name a row resolved under to `names`.
#define VRAMDOC_SYMBOL_NAME(member, need, type, ...) \
  if (symbols.member.name) names.emplace_back(symbols.member.name);
