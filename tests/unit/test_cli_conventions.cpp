// Issue 13's command-line conventions below the binary: "did you mean", the schema every JSON
// document carries, colour that takes no room in a table and stays off unless asked for.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/style.hpp"
#include "core/estimator/presets.hpp"
#include "core/estimator/quick_start.hpp"
#include "core/estimator/render.hpp"
#include "core/json_document.hpp"
#include "core/table.hpp"
#include "core/text.hpp"
#include "core/timeline/render.hpp"
#include "core/watch/render.hpp"
#include "watch_fixture.hpp"

namespace vramdoc {
namespace {

TEST(DidYouMean, EditDistanceCountsSwapsAsOne) {
  EXPECT_EQ(edit_distance("batch", "batch"), 0U);
  EXPECT_EQ(edit_distance("--bach", "--batch"), 1U);
  EXPECT_EQ(edit_distance("anlayze", "analyze"), 1U);  // two letters swapped
  EXPECT_EQ(edit_distance("", "abc"), 3U);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3U);
}

TEST(DidYouMean, ClosestWithinAThirdOrAPrefix) {
  const std::vector<std::string> options = {"--batch", "--seq", "--gpu", "--gpu-memory", "--max-batch", "--json"};
  EXPECT_EQ(closest_match("--bach", options), "--batch");
  EXPECT_EQ(closest_match("--max-bach", options), "--max-batch");
  EXPECT_EQ(closest_match("--gpu-mem", options), "--gpu-memory");
  EXPECT_EQ(closest_match("--jsno", options), "--json");
  EXPECT_EQ(closest_match("--frobnicate", options), "");
  const std::vector<std::string> commands = {"help", "info", "estimate", "bench", "watch", "run", "analyze", "probe"};
  EXPECT_EQ(closest_match("estimte", commands), "estimate");
  EXPECT_EQ(closest_match("frobnicate", commands), "");
}

TEST(JsonDocument, SchemaIsTheFirstMember) {
  for (const auto& members : {nlohmann::json{{"b", 2}, {"a", 1}}, nlohmann::json::object()}) {
    for (auto layout : {JsonLayout::Pretty, JsonLayout::Line}) {
      const std::string doc = json_document("vramdoc.test/1", members, layout);
      auto j = nlohmann::ordered_json::parse(doc);
      ASSERT_TRUE(j.is_object()) << doc;
      EXPECT_EQ(j.begin().key(), "schema") << doc;
      EXPECT_EQ(j["schema"], "vramdoc.test/1");
      EXPECT_EQ(j.size(), members.size() + 1) << doc;
      EXPECT_EQ(doc.back(), '\n');
      EXPECT_EQ(doc.find('\n') == doc.size() - 1, layout == JsonLayout::Line) << doc;
    }
  }
  // The members keep their order after the schema; invalid UTF-8 is replaced, never thrown on.
  const std::string doc = json_document("vramdoc.test/1", nlohmann::ordered_json{{"z", 1}, {"a", "bad \xff"}}, JsonLayout::Line);
  EXPECT_EQ(doc.substr(0, 30), "{\"schema\":\"vramdoc.test/1\",\"z\"") << doc;
  EXPECT_NE(doc.find("bad \xef\xbf\xbd"), std::string::npos) << doc;
}

TEST(Colour, CodesTakeNoRoomInATable) {
  Style on{true};
  TextTable t({"card", "verdict"});
  t.add_row({"A", on.paint("fits", Tone::Good)});
  t.add_row({"B", "OOM"});
  const std::string painted = t.render();
  TextTable plain({"card", "verdict"});
  plain.add_row({"A", "fits"});
  plain.add_row({"B", "OOM"});
  std::string stripped;
  for (std::size_t i = 0; i < painted.size(); ++i) {
    if (painted[i] == '\x1b') i = painted.find('m', i);
    else stripped += painted[i];
  }
  EXPECT_EQ(stripped, plain.render());
  EXPECT_EQ(display_width(on.paint("OOM", Tone::Bad)), 3U);
}

// Colour is the renderers' (given a Style), never a search of finished text: the estimate's
// FITS / DOES NOT FIT, the demo's fits / OOM cells, a diagnosis's verdict word; plain by default.
TEST(Colour, RenderersPaintTheirVerdicts) {
  auto model = estimator::preset_config("llama-2-7b");
  ASSERT_TRUE(model.ok());
  estimator::Options o;
  auto e = estimator::estimate(*model, o);
  ASSERT_TRUE(e.ok());
  estimator::FitReport fit;
  fit.target_name = "big", fit.usable_bytes = 1ULL << 50;
  EXPECT_EQ(estimator::render_text(*model, o, *e, fit).find('\x1b'), std::string::npos);
  EXPECT_NE(estimator::render_text(*model, o, *e, fit, Style{true}).find("\n\x1b[32mFITS\x1b[0m on big"), std::string::npos);
  fit.usable_bytes = 1ULL << 30;
  EXPECT_NE(estimator::render_text(*model, o, *e, fit, Style{true}).find("\n\x1b[1;31mDOES NOT FIT\x1b[0m on big"), std::string::npos);
  auto table = estimator::render_quick_start("llama-2-7b", Style{true});  // the quick start's table: fits and OOM cells
  ASSERT_TRUE(table.ok()) << table.error();
  EXPECT_NE(table->find("\x1b[1;31mOOM\x1b[0m"), std::string::npos) << *table;
  EXPECT_NE(table->find("\x1b[32mfits\x1b[0m"), std::string::npos) << *table;
  EXPECT_EQ(estimator::render_quick_start("llama-2-7b")->find('\x1b'), std::string::npos);

  timeline::Timeline tl;
  tl.name = "job";
  timeline::Diagnosis d;
  d.verdict = timeline::Verdict::Leak;
  d.summary = "leak: memory grows";
  EXPECT_EQ(timeline::render_text(tl, d).find('\x1b'), std::string::npos);
  EXPECT_NE(timeline::render_text(tl, d, nullptr, Style{true}).find("verdict: \x1b[1;31mleak\x1b[0m: memory grows"), std::string::npos);
  d.verdict = timeline::Verdict::Stable;
  d.summary = "stable: flat";
  EXPECT_NE(timeline::render_text(tl, d, nullptr, Style{true}).find("verdict: \x1b[32mstable\x1b[0m: flat"), std::string::npos);
}

// Byte figures in JSON are integers: watch's theoretical PCIe rate (63.0e9 in the fixture, a double) too.
TEST(JsonDocument, WatchBytesAreIntegers) {
  const auto j = watch::to_json(watch::fixture::two_gpus(false));
  EXPECT_TRUE(j["gpus"][0]["pcie_peak_bytes_per_s"].is_number_integer()) << j["gpus"][0].dump();
  EXPECT_TRUE(j["gpus"][0]["memory"]["used_bytes"].is_number_integer());
}

// watch --once: a GPU's USED turns yellow from 75 % of its memory and red from 90 %; plain by default.
TEST(Colour, WatchTableThresholds) {
  auto snap = watch::fixture::two_gpus(false);
  EXPECT_EQ(watch::render_text(snap).find('\x1b'), std::string::npos);
  EXPECT_EQ(watch::render_text(snap, Style{true}).find('\x1b'), std::string::npos);  // 40 of 140 GiB: no colour
  auto& memory = snap.gpus[0].sample->memory;
  memory.used_bytes = 110 * GiB;  // 79 %
  EXPECT_NE(watch::render_text(snap, Style{true}).find("\x1b[33m110.00 GiB\x1b[0m"), std::string::npos);
  memory.used_bytes = 130 * GiB;  // 93 %
  const std::string red = watch::render_text(snap, Style{true});
  EXPECT_NE(red.find("\x1b[1;31m130.00 GiB\x1b[0m"), std::string::npos) << red;
  EXPECT_EQ(red.find("\n") , watch::render_text(snap).find("\n"));  // the header line keeps its width
}

TEST(Colour, NoColorAndModes) {
  ASSERT_TRUE(cli::set_color_mode("always"));
  EXPECT_TRUE(cli::style_for(stdout).color);
  ASSERT_TRUE(cli::set_color_mode("never"));
  EXPECT_FALSE(cli::style_for(stdout).color);
  ASSERT_TRUE(cli::set_color_mode("auto"));
  ::setenv("NO_COLOR", "1", 1);
  EXPECT_FALSE(cli::style_for(stdout).color);
  ::unsetenv("NO_COLOR");
  EXPECT_FALSE(cli::set_color_mode("sometimes"));
}

}  // namespace
}  // namespace vramdoc
