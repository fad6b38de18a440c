#include "core/timeline/render.hpp"
namespace vramdoc::timeline {
std::string render_html(const Timeline&, const Diagnosis&) { return "<html></html>"; }
}
