/*
 * A small, strict-enough XML reader for MSCCL algorithm files: elements, attributes, comments,
 * processing instructions, DOCTYPE and CDATA. Element text is ignored. Errors carry the line.
 * Several top-level elements are allowed (msccl-tools sometimes prints more than one program);
 * plain text after the last top-level element (e.g. a checker's log appended to the file) is
 * skipped with a warning.
 */
#ifndef FABRICSIM_XML_READER_H
#define FABRICSIM_XML_READER_H

#include <string>
#include <utility>
#include <vector>

namespace fabricsim
{

/// One XML element: name, attributes in document order, child elements.
struct XmlElement
{
    std::string m_name;
    std::vector<std::pair<std::string, std::string>> m_attributes;
    std::vector<XmlElement> m_children;
    int m_line = 0; ///< line of the start tag (1-based)

    /// Value of attribute \p name, or nullptr when absent.
    const std::string* Attribute(const std::string& name) const;
};

/// Result of parsing a file: top-level elements plus warnings about skipped content.
struct XmlDocument
{
    std::vector<XmlElement> m_roots;
    std::vector<std::string> m_warnings;
};

/**
 * Parses \p text. Throws fabricsim::InputError(file, "line N", expected, found) on malformed XML.
 * \param fileName used in errors and warnings
 */
XmlDocument ParseXml(const std::string& text, const std::string& fileName);

/// Escapes &, <, >, " and ' for an attribute value.
std::string XmlEscape(const std::string& value);

} // namespace fabricsim

#endif
