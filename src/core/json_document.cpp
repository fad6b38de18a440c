#include "core/json_document.hpp"

namespace vramdoc {

std::string json_document(std::string_view schema, const nlohmann::ordered_json& members, JsonLayout layout) {
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  doc["schema"] = std::string(schema);
  for (const auto& [key, value] : members.items()) doc[key] = value;
  const int indent = layout == JsonLayout::Pretty ? 2 : -1;
  return doc.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string json_document(std::string_view schema, const nlohmann::json& members, JsonLayout layout) {
  return json_document(schema, nlohmann::ordered_json(members), layout);
}

}  // namespace vramdoc
