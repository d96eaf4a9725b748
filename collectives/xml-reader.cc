#include "xml-reader.h"

#include "input-error.h"

#include <cctype>
#include <cstdint>

namespace fabricsim
{

const std::string*
XmlElement::Attribute(const std::string& name) const
{
    for (const auto& a : m_attributes)
    {
        if (a.first == name)
        {
            return &a.second;
        }
    }
    return nullptr;
}

namespace
{

constexpr int kMaxDepth = 64;

/// Cursor over the text that keeps the line number.
class XmlParser
{
  public:
    XmlParser(const std::string& text, const std::string& file)
        : m_text(text)
        , m_file(file)
    {
    }

    XmlDocument Parse()
    {
        XmlDocument doc;
        if (m_text.compare(0, 3, "\xEF\xBB\xBF") == 0)
        {
            m_pos = 3;
        }
        while (true)
        {
            SkipMisc();
            if (AtEnd())
            {
                break;
            }
            if (Peek() != '<')
            {
                if (doc.m_roots.empty())
                {
                    Fail("'<' starting an XML element", Describe());
                }
                doc.m_warnings.push_back(m_file + ": line " + std::to_string(m_line) + ": ignored "
                                         + std::to_string(m_text.size() - m_pos)
                                         + " bytes of non-XML text after the last element");
                break;
            }
            doc.m_roots.push_back(ParseElement(0));
        }
        if (doc.m_roots.empty())
        {
            Fail("an XML element", "an empty document");
        }
        return doc;
    }

  private:
    bool AtEnd() const
    {
        return m_pos >= m_text.size();
    }

    char Peek() const
    {
        return AtEnd() ? '\0' : m_text[m_pos];
    }

    bool StartsWith(const char* s) const
    {
        return m_text.compare(m_pos, std::char_traits<char>::length(s), s) == 0;
    }

    void Advance(size_t n = 1)
    {
        for (size_t i = 0; i < n && m_pos < m_text.size(); ++i)
        {
            if (m_text[m_pos++] == '\n')
            {
                ++m_line;
            }
        }
    }

    [[noreturn]] void Fail(const std::string& expected, const std::string& found) const
    {
        throw fabricsim::InputError(m_file, "line " + std::to_string(m_line), expected, found);
    }

    std::string Describe() const
    {
        if (AtEnd())
        {
            return "end of file";
        }
        std::string s = m_text.substr(m_pos, 20);
        for (auto& c : s)
        {
            if (c == '\n' || c == '\r' || c == '\t')
            {
                c = ' ';
            }
        }
        return "'" + s + (m_pos + 20 < m_text.size() ? "...'" : "'");
    }

    void SkipSpace()
    {
        while (!AtEnd() && std::isspace(static_cast<unsigned char>(Peek())))
        {
            Advance();
        }
    }

    void SkipUntil(const char* terminator, const char* what)
    {
        const size_t end = m_text.find(terminator, m_pos);
        if (end == std::string::npos)
        {
            Fail(std::string("'") + terminator + "' closing " + what, "end of file");
        }
        Advance(end + std::char_traits<char>::length(terminator) - m_pos);
    }

    /// Skips whitespace, comments, processing instructions and DOCTYPE.
    void SkipMisc()
    {
        while (true)
        {
            SkipSpace();
            if (StartsWith("<!--"))
            {
                SkipUntil("-->", "a comment");
            }
            else if (StartsWith("<?"))
            {
                SkipUntil("?>", "a processing instruction");
            }
            else if (StartsWith("<!DOCTYPE") || StartsWith("<!doctype"))
            {
                SkipUntil(">", "DOCTYPE");
            }
            else
            {
                return;
            }
        }
    }

    static bool IsNameChar(char c)
    {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'
               || c == ':' || static_cast<unsigned char>(c) >= 0x80;
    }

    std::string ParseName(const char* what)
    {
        const size_t start = m_pos;
        while (!AtEnd() && IsNameChar(Peek()))
        {
            Advance();
        }
        if (start == m_pos)
        {
            Fail(what, Describe());
        }
        return m_text.substr(start, m_pos - start);
    }

    std::string DecodeEntities(const std::string& raw, int line) const
    {
        std::string out;
        for (size_t i = 0; i < raw.size(); ++i)
        {
            if (raw[i] != '&')
            {
                out.push_back(raw[i]);
                continue;
            }
            const size_t semi = raw.find(';', i);
            if (semi == std::string::npos)
            {
                throw fabricsim::InputError(m_file,
                                            "line " + std::to_string(line),
                                            "an entity reference ending in ';'",
                                            "'" + raw.substr(i) + "'");
            }
            const std::string ent = raw.substr(i + 1, semi - i - 1);
            if (ent == "lt")
            {
                out.push_back('<');
            }
            else if (ent == "gt")
            {
                out.push_back('>');
            }
            else if (ent == "amp")
            {
                out.push_back('&');
            }
            else if (ent == "quot")
            {
                out.push_back('"');
            }
            else if (ent == "apos")
            {
                out.push_back('\'');
            }
            else if (ent.size() > 1 && ent[0] == '#')
            {
                unsigned long code = 0;
                try
                {
                    code = (ent[1] == 'x' || ent[1] == 'X') ? std::stoul(ent.substr(2), nullptr, 16)
                                                            : std::stoul(ent.substr(1));
                }
                catch (const std::exception&)
                {
                    code = 0x110000;
                }
                if (code == 0 || code > 0x10FFFF)
                {
                    throw fabricsim::InputError(m_file,
                                                "line " + std::to_string(line),
                                                "a valid character reference",
                                                "'&" + ent + ";'");
                }
                AppendUtf8(out, static_cast<uint32_t>(code));
            }
            else
            {
                throw fabricsim::InputError(m_file,
                                            "line " + std::to_string(line),
                                            "one of &lt; &gt; &amp; &quot; &apos; or &#N;",
                                            "'&" + ent + ";'");
            }
            i = semi;
        }
        return out;
    }

    static void AppendUtf8(std::string& out, uint32_t c)
    {
        if (c < 0x80)
        {
            out.push_back(static_cast<char>(c));
        }
        else if (c < 0x800)
        {
            out.push_back(static_cast<char>(0xC0 | (c >> 6)));
            out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
        }
        else if (c < 0x10000)
        {
            out.push_back(static_cast<char>(0xE0 | (c >> 12)));
            out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
        }
        else
        {
            out.push_back(static_cast<char>(0xF0 | (c >> 18)));
            out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
        }
    }

    XmlElement ParseElement(int depth)
    {
        if (depth > kMaxDepth)
        {
            Fail("elements nested at most " + std::to_string(kMaxDepth) + " deep",
                 "deeper nesting");
        }
        XmlElement el;
        el.m_line = m_line;
        Advance(); // '<'
        el.m_name = ParseName("an element name after '<'");
        // Attributes.
        while (true)
        {
            const size_t before = m_pos;
            SkipSpace();
            if (StartsWith("/>"))
            {
                Advance(2);
                return el;
            }
            if (Peek() == '>')
            {
                Advance();
                break;
            }
            if (AtEnd())
            {
                Fail("'>' closing <" + el.m_name + ">", "end of file");
            }
            if (m_pos == before)
            {
                Fail("whitespace before an attribute of <" + el.m_name + ">", Describe());
            }
            const int line = m_line;
            std::string name
                = ParseName(("an attribute name or '>' in <" + el.m_name + ">").c_str());
            SkipSpace();
            if (Peek() != '=')
            {
                Fail("'=' after attribute '" + name + "' of <" + el.m_name + ">", Describe());
            }
            Advance();
            SkipSpace();
            const char quote = Peek();
            if (quote != '"' && quote != '\'')
            {
                Fail("a quoted value for attribute '" + name + "' of <" + el.m_name + ">",
                     Describe());
            }
            Advance();
            const size_t end = m_text.find(quote, m_pos);
            if (end == std::string::npos)
            {
                Fail("closing quote of attribute '" + name + "'", "end of file");
            }
            std::string raw = m_text.substr(m_pos, end - m_pos);
            if (raw.find('<') != std::string::npos)
            {
                Fail("no '<' inside attribute '" + name + "' of <" + el.m_name + ">",
                     "'" + raw.substr(0, 40) + "'");
            }
            Advance(end + 1 - m_pos);
            if (el.Attribute(name))
            {
                throw fabricsim::InputError(m_file,
                                            "line " + std::to_string(line),
                                            "attribute '" + name + "' once in <" + el.m_name + ">",
                                            "it twice");
            }
            el.m_attributes.emplace_back(std::move(name), DecodeEntities(raw, line));
        }
        // Content.
        while (true)
        {
            if (AtEnd())
            {
                Fail("</" + el.m_name + "> closing the element opened at line "
                         + std::to_string(el.m_line),
                     "end of file");
            }
            if (StartsWith("</"))
            {
                Advance(2);
                const std::string name = ParseName("an element name after '</'");
                SkipSpace();
                if (Peek() != '>')
                {
                    Fail("'>' after </" + name, Describe());
                }
                Advance();
                if (name != el.m_name)
                {
                    Fail("</" + el.m_name + "> closing the element opened at line "
                             + std::to_string(el.m_line),
                         "</" + name + ">");
                }
                return el;
            }
            if (StartsWith("<!--"))
            {
                SkipUntil("-->", "a comment");
            }
            else if (StartsWith("<![CDATA["))
            {
                SkipUntil("]]>", "a CDATA section");
            }
            else if (StartsWith("<?"))
            {
                SkipUntil("?>", "a processing instruction");
            }
            else if (Peek() == '<')
            {
                el.m_children.push_back(ParseElement(depth + 1));
            }
            else
            {
                // Character data: ignored (MSCCL files carry none that matters).
                const size_t next = m_text.find('<', m_pos);
                Advance((next == std::string::npos ? m_text.size() : next) - m_pos);
            }
        }
    }

    const std::string& m_text;
    const std::string& m_file;
    size_t m_pos = 0;
    int m_line = 1;
};

} // namespace

XmlDocument
ParseXml(const std::string& text, const std::string& fileName)
{
    XmlParser parser(text, fileName);
    return parser.Parse();
}

std::string
XmlEscape(const std::string& value)
{
    std::string out;
    out.reserve(value.size());
    for (char c : value)
    {
        switch (c)
        {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&apos;";
            break;
        default:
            out.push_back(c);
        }
    }
    return out;
}

} // namespace fabricsim
