// Files and folders vramdoc creates on the user's behalf (trace folders, the Python hook, the
// default timeline): private (0700 / 0600), and never reached through a link or a folder another
// user could have planted at a predictable name (docs/security.md, "Files vramdoc writes").
#pragma once
#include <string>

#include "core/result.hpp"

namespace vramdoc::backends {

// Makes `dir` a folder only this user can write: creates it with mode 0700 (its parents as
// usual) or accepts an existing one that is a real folder (not a link), owned by this user and
// not writable by group or others. The error says what is wrong and what to do.
Result<std::string> ensure_private_directory(const std::string& dir);

// Creates a fresh folder PARENT/PREFIX-XXXXXX with mode 0700 (mkdtemp) and returns its path.
Result<std::string> make_private_temp_directory(const std::string& parent, const std::string& prefix);
// The same in the folder for temporary files ($TMPDIR, else /tmp): the one way vramdoc makes
// a private temporary folder (run's marker file and step hook, probe's trials).
Result<std::string> make_private_temp_directory(const std::string& prefix);

// Creates `path` with mode 0600 and writes `text`; fails when anything (a file, a link) is there.
Result<bool> write_new_private_file(const std::string& path, const std::string& text);

// Opens `path` for writing, created with mode 0600: a new file (O_EXCL) when `exclusive`, else
// truncated; a symbolic link at `path` is refused either way. Returns the descriptor.
Result<int> open_private_file(const std::string& path, bool exclusive);

}  // namespace vramdoc::backends
