// The word-level rules behind core/redact.hpp: which names are secret, which values look like
// credentials, where known tokens start. Internal to the redactor; tested through it.
#pragma once
#include <cstddef>
#include <string_view>
#include <vector>

namespace vramdoc::redact_detail {

// A byte range [begin, end) of a text to be replaced.
struct Span {
  std::size_t begin = 0;
  std::size_t end = 0;
};

// Appends the span of every token with a known prefix (hf_..., sk-..., AKIA..., a JWT) in `text`.
void known_token_spans(std::string_view text, std::vector<Span>& out);

// True for a name a URL query parameter carries a secret in (is_secret_name, plus sig,
// signature, X-Amz-Signature, code).
bool is_query_secret_name(std::string_view name);

// An HTTP authorization scheme (Bearer, Basic, Token, ...): the word after it is the credential.
bool is_auth_scheme(std::string_view word);

// A hexadecimal string of 32 digits or more: a key where a login command takes one (wandb login).
bool is_long_hex(std::string_view word);

// True for characters a name (option, variable, header, config key) is made of.
bool is_name_char(char c);

}  // namespace vramdoc::redact_detail
