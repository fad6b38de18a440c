// The one sanitiser for text from outside vramdoc (process command lines and names, users,
// container ids, driver strings, config and timeline fields, trace paths and symbols, a job's
// output) on its way to a terminal: what could move the cursor, clear the screen, set the
// clipboard (OSC 52), forge a row or reorder what is shown becomes a visible escape; every other
// character is kept. Every text renderer applies it to the outside fields it prints
// (docs/security.md, "What reaches a terminal").
#pragma once
#include <string>
#include <string_view>

namespace vramdoc {

// `text` fit for one line of a terminal: valid UTF-8 with no control character. Escaped, in the
// form a C or Python string literal spells them: newline, tab and carriage return as \n, \t, \r;
// every other C0 byte and DEL as \xNN (ESC is \x1b); the C1 controls (U+0080-U+009F), the bidi
// controls and overrides (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), the invisible
// separators and marks (U+2028, U+2029, U+FEFF) as \uNNNN; each byte of an invalid UTF-8
// sequence (overlong, surrogate, above U+10FFFF, cut short) as \xNN. Clean text comes back unchanged.
std::string terminal_safe(std::string_view text);

// The same for a multi-line message: newlines stay (each line is then safe), the rest as above.
std::string terminal_safe_lines(std::string_view text);

}  // namespace vramdoc
