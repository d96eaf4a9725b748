#include "schedule-loader.h"

#include "file-reader.h"
#include "input-error.h"
#include "schedule-json.h"

#include <algorithm>
#include <cctype>

namespace fabricsim
{

namespace
{

bool
EndsWith(const std::string& s, const std::string& suffix)
{
    if (s.size() < suffix.size())
    {
        return false;
    }
    std::string tail = s.substr(s.size() - suffix.size());
    std::transform(tail.begin(),
                   tail.end(),
                   tail.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return tail == suffix;
}

} // namespace

MscclDocument
LoadScheduleFile(const std::string& path)
{
    const std::string text = ReadFileBounded(path, "schedule file (MSCCL XML or JSON)");
    bool json = EndsWith(path, ".json");
    if (!json && !EndsWith(path, ".xml"))
    {
        size_t i = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
        while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])))
        {
            ++i;
        }
        if (i == text.size() || (text[i] != '{' && text[i] != '<'))
        {
            throw fabricsim::InputError(path,
                                        "",
                                        "an MSCCL XML (.xml) or schedule JSON (.json) file",
                                        i == text.size()
                                            ? "an empty file"
                                            : "content starting with '" + text.substr(i, 1) + "'");
        }
        json = text[i] == '{';
    }
    if (json)
    {
        MscclDocument doc;
        doc.m_schedules.push_back(ParseScheduleJson(text, path));
        return doc;
    }
    return ParseMscclXml(text, path);
}

} // namespace fabricsim
