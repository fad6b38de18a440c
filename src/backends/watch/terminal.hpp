// The terminal side of the full-screen view: raw mode and the alternate screen, restored on
// every exit path (return, SIGINT, SIGTERM) and while stopped by Ctrl-Z (taken back on `fg`),
// and the window size. Only the CLI touches a tty.
#pragma once
#include <atomic>
#include <cstddef>
#include <string>
#include <string_view>

namespace vramdoc::backends {

// Set by the SIGINT / SIGTERM handler the watch modes install: the loops stop and clean up.
extern std::atomic<bool> g_watch_stop;
// Set by the SIGWINCH handler: the view redraws at the new size.
extern std::atomic<bool> g_watch_resized;
// Installs the handlers above (without SA_RESTART, so a blocking poll returns at once), and
// SIGTSTP's: the terminal is given back before the process stops and taken again after.
void install_watch_signal_handlers();

class Terminal {
 public:
  // Enters raw mode on stdin and the alternate screen on stdout, hides the cursor. `ok()` is
  // false (and nothing changed) when stdin is not a terminal.
  Terminal();
  // Restores the saved mode, shows the cursor, leaves the alternate screen.
  ~Terminal();
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;
  bool ok() const { return ok_; }

  // Rows and columns of stdout's window (24 x 80 when unknown).
  static std::pair<std::size_t, std::size_t> size();
  // Draws a frame from render_screen: home, the lines, the title in reverse video when
  // `highlight_title` (not with --color never: no escape sequence but the cursor's).
  static void draw(const std::string& frame, bool highlight_title);
  // Waits up to `timeout_ms` for input; returns the bytes read (empty on timeout or signal).
  static std::string read_keys(int timeout_ms);

 private:
  bool ok_ = false;
};

}  // namespace vramdoc::backends
