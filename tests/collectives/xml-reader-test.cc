#include "input-error.h"
#include "xml-reader.h"

#include <gtest/gtest.h>

namespace fabricsim
{
namespace
{

TEST(XmlReader, ParsesElementsAttributesAndSkipsMisc)
{
    const std::string text = "\xEF\xBB\xBF<?xml version=\"1.0\"?>\n<!-- c -->\n"
                             "<a x=\"1\" y='a&amp;b&#65;'>\n  <b/>text<!-- in -->\n"
                             "  <c z=\"&lt;\"></c>\n</a>\n";
    const XmlDocument doc = ParseXml(text, "t.xml");
    ASSERT_EQ(doc.m_roots.size(), 1u);
    const XmlElement& a = doc.m_roots[0];
    EXPECT_EQ(a.m_name, "a");
    EXPECT_EQ(*a.Attribute("y"), "a&bA");
    ASSERT_EQ(a.m_children.size(), 2u);
    EXPECT_EQ(a.m_children[1].m_line, 5);
    EXPECT_EQ(*a.m_children[1].Attribute("z"), "<");
    EXPECT_TRUE(doc.m_warnings.empty());
}

TEST(XmlReader, TrailingTextIsAWarning)
{
    const XmlDocument doc = ParseXml("<a/>\nRank 0 chunk 0 is incorrect\n", "t.xml");
    ASSERT_EQ(doc.m_roots.size(), 1u);
    ASSERT_EQ(doc.m_warnings.size(), 1u);
    EXPECT_NE(doc.m_warnings[0].find("line 2"), std::string::npos);
}

TEST(XmlReader, ErrorsNameFileAndLine)
{
    const std::vector<std::string> bad = {
        "",                       // empty
        "<a><b></a>",             // mismatched close
        "<a x=\"1\">",            // unclosed
        "<a x=1/>",               // unquoted
        "<a x=\"1\" x=\"2\"/>",   // duplicate attribute
        "<a x=\"&bogus;\"/>",     // unknown entity
        "junk<a/>",               // text before the root
        "<a>\n<!-- unterminated", // comment
    };
    for (const auto& text : bad)
    {
        try
        {
            ParseXml(text, "bad.xml");
            ADD_FAILURE() << "accepted: " << text;
        }
        catch (const fabricsim::InputError& e)
        {
            EXPECT_EQ(e.File(), "bad.xml");
            EXPECT_NE(e.Field().find("line"), std::string::npos) << e.what();
        }
    }
}

} // namespace
} // namespace fabricsim
