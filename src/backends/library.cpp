#include "backends/library.hpp"

#include <dlfcn.h>

#include <cstdlib>

namespace vramdoc::backends {

std::string Library::path_for(const char* variable, const char* soname) {
  const char* env = variable ? std::getenv(variable) : nullptr;
  return env && *env ? env : soname;
}

Result<Library> Library::open(const char* variable, const char* soname) {
  std::string path = path_for(variable, soname);
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    return make_error(why ? why : "cannot be loaded");
  }
  return Library(handle, std::move(path));
}

Library::~Library() {
  if (handle_) dlclose(handle_);
}

void* find_address(void* library, const char* name) { return dlsym(library, name); }

}  // namespace vramdoc::backends
