// Every JSON document vramdoc prints is an object whose first member is its schema,
// "schema": "vramdoc.NAME/VERSION" (the list: docs/cli.md), then the renderer's members in their
// order. Renderers build the members and return the whole document through here; nothing pastes
// a schema into finished text.
#pragma once
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace vramdoc {

enum class JsonLayout {
  Pretty,  // indented by 2, "\n"-ended: a document on stdout
  Line,    // one line, "\n"-ended: a JSON Lines record, or a compact document
};

// {"schema": SCHEMA, ...members}; text that is not valid UTF-8 (a command line may hold any
// bytes) is replaced, never thrown on. `members` must be an object.
std::string json_document(std::string_view schema, const nlohmann::ordered_json& members, JsonLayout layout = JsonLayout::Pretty);
std::string json_document(std::string_view schema, const nlohmann::json& members, JsonLayout layout = JsonLayout::Pretty);

}  // namespace vramdoc
