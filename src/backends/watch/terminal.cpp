#include "backends/watch/terminal.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace vramdoc::backends {

std::atomic<bool> g_watch_stop{false};
std::atomic<bool> g_watch_resized{false};

namespace {

termios g_saved, g_raw;
std::atomic<bool> g_saved_valid{false};

void write_all(std::string_view text) {
  while (!text.empty()) {
    ssize_t n = write(STDOUT_FILENO, text.data(), text.size());
    if (n <= 0) return;  // the terminal went away: nothing more to show
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

constexpr std::string_view kEnter = "\x1b[?1049h\x1b[?25l\x1b[2J";
constexpr std::string_view kLeave = "\x1b[0m\x1b[?25h\x1b[?1049l";

void restore_terminal() {
  if (g_saved_valid.exchange(false)) {
    tcsetattr(STDIN_FILENO, TCSAFLUSH, &g_saved);
    write_all(kLeave);
  }
}

void on_signal(int sig) {
  if (sig == SIGWINCH) g_watch_resized = true;
  else g_watch_stop = true;
}

// Ctrl-Z: give the shell its terminal back (mode and main screen), stop, and on `fg` take raw
// mode and the alternate screen again and redraw. Only async-signal-safe calls: tcsetattr,
// tcgetpgrp, getpgrp, write, sigaction, sigprocmask, raise. SIGTTOU stays blocked meanwhile:
// when vramdoc is not the job's leader (`(vramdoc watch)`, a pipeline), the shell may have
// taken the terminal back already, and a background tcsetattr would stop us before restoring.
void on_stop(int) {
  const int saved_errno = errno;
  const bool active = g_saved_valid;
  sigset_t ttou, before;
  sigemptyset(&ttou);
  sigaddset(&ttou, SIGTTOU);
  sigprocmask(SIG_BLOCK, &ttou, &before);
  if (active) {
    tcsetattr(STDIN_FILENO, TCSAFLUSH, &g_saved);
    write_all(kLeave);
  }
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGTSTP, &dfl, nullptr);
  sigset_t tstp;
  sigemptyset(&tstp);
  sigaddset(&tstp, SIGTSTP);
  sigprocmask(SIG_UNBLOCK, &tstp, nullptr);  // blocked while its handler runs
  raise(SIGTSTP);                             // stopped here until SIGCONT
  struct sigaction again{};
  again.sa_handler = on_stop;
  sigemptyset(&again.sa_mask);
  sigaction(SIGTSTP, &again, nullptr);
  if (active && tcgetpgrp(STDIN_FILENO) == getpgrp()) {  // back in the foreground (`fg`, not `bg`)
    tcsetattr(STDIN_FILENO, TCSAFLUSH, &g_raw);
    write_all(kEnter);
  }
  sigprocmask(SIG_SETMASK, &before, nullptr);
  g_watch_resized = true;  // the screen was the shell's: draw it all again
  errno = saved_errno;
}

}  // namespace

void install_watch_signal_handlers() {
  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: poll and sleep return at once
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGWINCH, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  struct sigaction stop{};
  stop.sa_handler = on_stop;
  sigemptyset(&stop.sa_mask);
  sigaction(SIGTSTP, &stop, nullptr);
}

Terminal::Terminal() {
  if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &g_saved) != 0) return;
  termios raw = g_saved;
  raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);  // ISIG stays: Ctrl-C is a SIGINT we handle
  raw.c_iflag &= ~static_cast<tcflag_t>(IXON | ICRNL);
  raw.c_cc[VMIN] = 0;
  raw.c_cc[VTIME] = 0;
  if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) != 0) return;
  g_raw = raw;
  g_saved_valid = true;
  std::atexit(restore_terminal);  // also on exit() from anywhere
  write_all(kEnter);
  ok_ = true;
}

Terminal::~Terminal() { restore_terminal(); }

std::pair<std::size_t, std::size_t> Terminal::size() {
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) return {ws.ws_row, ws.ws_col};
  return {24, 80};
}

void Terminal::draw(const std::string& frame, bool highlight_title) {
  std::string out = highlight_title ? "\x1b[H\x1b[7m" : "\x1b[H";
  bool first = highlight_title;
  for (char c : frame) {
    if (c == '\n') {
      out += first ? "\x1b[0m\r\n" : "\r\n";
      first = false;
    } else {
      out += c;
    }
  }
  if (first) out += "\x1b[0m";
  write_all(out);
}

std::string Terminal::read_keys(int timeout_ms) {
  pollfd p{STDIN_FILENO, POLLIN, 0};
  if (poll(&p, 1, timeout_ms) <= 0) return "";
  char buf[64];
  ssize_t n = (p.revents & POLLIN) ? read(STDIN_FILENO, buf, sizeof buf) : 0;
  if (n > 0) return std::string(buf, static_cast<std::size_t>(n));
  poll(nullptr, 0, timeout_ms);  // input closed: just wait, rather than spin on it
  return "";
}

}  // namespace vramdoc::backends
