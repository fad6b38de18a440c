// Redaction of secrets in what vramdoc shows, records or exports: command lines (watch, run's
// timeline, probe's trials), environment entries, and text taken from a job's output (OOM
// messages, a failed trial's last line). Each secret is replaced by "***"; everything else is
// kept byte for byte. The rules and the decisions behind them are in docs/security.md.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace vramdoc {

// What a secret is replaced with.
inline constexpr std::string_view kRedacted = "***";

// True when an option, variable, header or query-parameter name names a secret: it contains
// token, secret, password, passwd, passphrase, pwd, auth, credential, cookie, session or a
// qualified key (api_key, access-key, ...), and does not name a file, a length or a kind of
// one (--token-file, --auth-type), nor a tokenizer's special token (--pad-token).
bool is_secret_name(std::string_view name);

// True when a word is a credential by its looks alone: a known token prefix (hf_, sk-, ghp_,
// AKIA, xoxb-, ...) or a long random-looking string. Paths, numbers, identifiers made of words
// and pure hexadecimal strings (hashes, commit ids, UUIDs) are spared.
bool looks_like_secret(std::string_view word);

// A command line given as argv, with every secret value replaced; the argument count is kept.
// An argument with spaces (sh -c 'SCRIPT') is read as a shell command line itself.
std::vector<std::string> redact_argv(const std::vector<std::string>& argv);

// Text read as shell words: a command line typed as one string (probe's --cmd), a NAME=value
// environment entry, a line of a job's output. Text without secrets is returned unchanged.
std::string redact_text(std::string_view text);

// The program's name for a redacted argv[0]: its first word, without the directory.
std::string executable_name(std::string_view argv0);

}  // namespace vramdoc
