#include "backends/private_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace vramdoc::backends {

namespace {

std::string system_error(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

}  // namespace

Result<std::string> ensure_private_directory(const std::string& dir) {
  std::error_code ec;
  const std::filesystem::path path(dir);
  if (path.has_parent_path() && !path.parent_path().empty()) std::filesystem::create_directories(path.parent_path(), ec);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return make_error(system_error("cannot create", dir));
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return make_error(system_error("cannot read", dir));
  if (S_ISLNK(st.st_mode))
    return make_error(dir + " is a symbolic link: give the real folder (vramdoc writes its traces and hook only "
                            "into a folder of yours)");
  if (!S_ISDIR(st.st_mode)) return make_error(dir + " exists and is not a folder");
  if (st.st_uid != ::geteuid())
    return make_error(dir + " belongs to another user: another user could change what the job loads from it; "
                            "choose a folder of your own");
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return make_error(dir + " is writable by group or others: another user could plant code there; "
                            "chmod go-w it or choose another folder");
  return dir;
}

Result<std::string> make_private_temp_directory(const std::string& parent, const std::string& prefix) {
  std::string pattern = (std::filesystem::path(parent) / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) return make_error(system_error("cannot create a folder in", parent));
  return pattern;
}

Result<std::string> make_private_temp_directory(const std::string& prefix) {
  std::error_code ec;
  const auto tmp = std::filesystem::temp_directory_path(ec);
  if (ec) return make_error("no folder for temporary files ($TMPDIR): " + ec.message());
  return make_private_temp_directory(tmp.string(), prefix);
}

Result<int> open_private_file(const std::string& path, bool exclusive) {
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (exclusive ? O_EXCL : O_TRUNC);
  const int fd = ::open(path.c_str(), flags, 0600);
  if (fd < 0 && errno == ELOOP) return make_error(path + " is a symbolic link: vramdoc does not write through it");
  if (fd < 0) return make_error(system_error("cannot write", path));
  return fd;
}

Result<bool> write_new_private_file(const std::string& path, const std::string& text) {
  auto fd = open_private_file(path, true);
  if (!fd) return make_error(fd.error());
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(*fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = system_error("cannot write", path);
      ::close(*fd);
      return make_error(why);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(*fd) != 0) return make_error(system_error("cannot write", path));
  return true;
}

}  // namespace vramdoc::backends
