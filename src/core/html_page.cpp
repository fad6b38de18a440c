#include "core/html_page.hpp"

#include "core/chart/svg.hpp"
#include "core/text.hpp"

namespace vramdoc {

const char* const kPageCss =
    "body{font-family:sans-serif;margin:16px auto;padding:0 14px;color:#222;max-width:960px;line-height:1.4}"
    "h1{font-size:22px;overflow-wrap:anywhere}h2{font-size:18px}p,li{overflow-wrap:anywhere}"
    "table{border-collapse:collapse;display:block;overflow-x:auto;max-width:100%}"
    "td,th{padding:3px 10px;border-bottom:1px solid #eee;vertical-align:top;text-align:left}"
    "pre{overflow-x:auto;max-width:100%}";

std::string html_page_head(const std::string& title, const std::string& css) {
  return "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><meta name='viewport' content='width=device-width, initial-scale=1'>"
         "<title>" + xml_escape(title) + "</title>\n<style>" + std::string(kPageCss) + chart::kChartCss + css +
         "</style></head><body>\n";
}

}  // namespace vramdoc
