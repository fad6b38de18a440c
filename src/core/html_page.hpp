// What every vramdoc HTML page shares: its head (charset, the viewport for phones, the title)
// and a style sheet readable at any width, where wide tables and preformatted text scroll inside
// themselves instead of widening the page. The pages are self-contained: no script, no network.
#pragma once
#include <string>

namespace vramdoc {

extern const char* const kPageCss;

// "<!DOCTYPE html>...<body>": `title` is escaped; `css` is added after kPageCss and the charts'.
std::string html_page_head(const std::string& title, const std::string& css = "");

}  // namespace vramdoc
