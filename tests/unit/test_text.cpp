#include <gtest/gtest.h>

#include "core/text.hpp"

using namespace vramdoc;

TEST(Text, FixedDecimals) {
  EXPECT_EQ(fixed(3.14159, 2), "3.14");
  EXPECT_EQ(fixed(-0.05, 1), "-0.1");
  EXPECT_EQ(fixed(42, 0), "42");
}

TEST(Text, XmlEscapeCoversElementsAndAttributes) {
  EXPECT_EQ(xml_escape("a<b>&\"c\""), "a&lt;b&gt;&amp;&quot;c&quot;");
  EXPECT_EQ(xml_escape("plain"), "plain");
}
