#include "msccl-xml.h"

#include "file-reader.h"
#include "input-error.h"
#include "output-writer.h"
#include "xml-reader.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <set>
#include <sstream>

namespace fabricsim
{

namespace
{

/// Known algo attributes (everything else goes to Schedule::m_attributes).
const std::set<std::string> kAlgoAttributes = {"name",
                                               "proto",
                                               "nchannels",
                                               "nchunksperloop",
                                               "ngpus",
                                               "coll",
                                               "inplace",
                                               "outofplace",
                                               "root"};
const std::set<std::string> kGpuAttributes = {"id", "i_chunks", "o_chunks", "s_chunks"};
const std::set<std::string> kTbAttributes = {"id", "send", "recv", "chan"};
const std::set<std::string> kStepAttributes
    = {"s", "type", "srcbuf", "srcoff", "dstbuf", "dstoff", "cnt", "depid", "deps", "hasdep"};

/// Converts one <algo> element; knows the file name and collects warnings.
class AlgoReader
{
  public:
    AlgoReader(const std::string& file, std::vector<std::string>& warnings)
        : m_file(file)
        , m_warnings(warnings)
    {
    }

    Schedule Read(const XmlElement& algo, const std::string& path)
    {
        Schedule s;
        const std::string* name = algo.Attribute("name");
        s.m_name = name ? *name : "";
        const std::string coll = Required(algo, path, "coll");
        const auto kind = ParseCollectiveKind(coll);
        if (!kind)
        {
            Fail(algo,
                 path,
                 "coll",
                 "one of allreduce, allgather, reduce_scatter, reducescatter, alltoall, "
                 "broadcast, reduce, custom",
                 "'" + coll + "'");
        }
        s.m_collective = *kind;
        s.m_ranks = Int(algo, path, "ngpus");
        s.m_chunksPerLoop = Int(algo, path, "nchunksperloop");
        s.m_channels = OptionalInt(algo, path, "nchannels", 1);
        s.m_inPlace = Bool(algo, path, "inplace", false);
        if (algo.Attribute("outofplace"))
        {
            s.m_outOfPlace = Bool(algo, path, "outofplace", false);
        }
        s.m_root = OptionalInt(algo, path, "root", 0);
        if (const std::string* proto = algo.Attribute("proto"))
        {
            const auto p = ParseProtocol(*proto);
            if (!p)
            {
                Fail(algo, path, "proto", "one of Simple, LL, LL128", "'" + *proto + "'");
            }
            s.m_protocol = *p;
        }
        for (const auto& [key, value] : algo.m_attributes)
        {
            if (!kAlgoAttributes.count(key))
            {
                s.m_attributes[key] = value;
            }
        }
        int gpuIndex = 0;
        for (const auto& child : algo.m_children)
        {
            if (child.m_name == "gpu")
            {
                s.m_programs.push_back(
                    ReadGpu(child, path + "/gpu[" + std::to_string(gpuIndex++) + "]"));
            }
            else
            {
                Warn(child, "ignored unknown element <" + child.m_name + "> in <algo>");
            }
        }
        return s;
    }

  private:
    RankProgram ReadGpu(const XmlElement& gpu, const std::string& path)
    {
        WarnUnknownAttributes(gpu, kGpuAttributes);
        RankProgram p;
        p.m_rank = Int(gpu, path, "id");
        p.m_inputChunks = Int(gpu, path, "i_chunks");
        p.m_outputChunks = Int(gpu, path, "o_chunks");
        p.m_scratchChunks = Int(gpu, path, "s_chunks");
        int tbIndex = 0;
        for (const auto& child : gpu.m_children)
        {
            if (child.m_name == "tb")
            {
                p.m_threadblocks.push_back(
                    ReadTb(child, path + "/tb[" + std::to_string(tbIndex++) + "]"));
            }
            else if (child.m_name == "copy")
            {
                InitialCopy c;
                c.m_inputOffset = Int(child, path + "/copy", "i_off");
                c.m_outputOffset = Int(child, path + "/copy", "o_off");
                p.m_initialCopies.push_back(c);
            }
            else
            {
                Warn(child, "ignored unknown element <" + child.m_name + "> in <gpu>");
            }
        }
        return p;
    }

    Threadblock ReadTb(const XmlElement& tbEl, const std::string& path)
    {
        WarnUnknownAttributes(tbEl, kTbAttributes);
        Threadblock tb;
        tb.m_id = Int(tbEl, path, "id");
        tb.m_sendPeer = Int(tbEl, path, "send");
        tb.m_recvPeer = Int(tbEl, path, "recv");
        tb.m_channel = Int(tbEl, path, "chan");
        int stepIndex = 0;
        for (const auto& child : tbEl.m_children)
        {
            if (child.m_name == "step")
            {
                tb.m_steps.push_back(
                    ReadStep(child, path + "/step[" + std::to_string(stepIndex++) + "]"));
            }
            else
            {
                Warn(child, "ignored unknown element <" + child.m_name + "> in <tb>");
            }
        }
        return tb;
    }

    Step ReadStep(const XmlElement& el, const std::string& path)
    {
        WarnUnknownAttributes(el, kStepAttributes);
        Step st;
        st.m_index = Int(el, path, "s");
        const std::string type = Required(el, path, "type");
        const auto op = ParseStepOp(type);
        if (!op)
        {
            Fail(el,
                 path,
                 "type",
                 "one of s, r, rcs, rrs, rrc, rrcs, cpy, re, nop",
                 "'" + type + "'");
        }
        st.m_op = *op;
        const bool nop = st.m_op == StepOp::kNop;
        st.m_srcBuffer = Buffer(el, path, "srcbuf", nop);
        st.m_dstBuffer = Buffer(el, path, "dstbuf", nop);
        st.m_srcOffset = nop ? OptionalInt(el, path, "srcoff", -1) : Int(el, path, "srcoff");
        st.m_dstOffset = nop ? OptionalInt(el, path, "dstoff", -1) : Int(el, path, "dstoff");
        st.m_count = nop ? OptionalInt(el, path, "cnt", 0) : Int(el, path, "cnt");
        const std::vector<int> depIds = IntList(el, path, "depid");
        const std::vector<int> depSteps = IntList(el, path, "deps");
        if (depIds.size() != depSteps.size())
        {
            Fail(el,
                 path,
                 "deps",
                 "as many entries as depid (" + std::to_string(depIds.size()) + ")",
                 std::to_string(depSteps.size()));
        }
        for (size_t i = 0; i < depIds.size(); ++i)
        {
            if (depIds[i] < 0 && depSteps[i] < 0)
            {
                continue; // -1/-1: no dependency
            }
            st.m_deps.push_back(Dependency{depIds[i], depSteps[i]});
        }
        st.m_hasDep = Bool(el, path, "hasdep", false);
        return st;
    }

    [[noreturn]] void Fail(const XmlElement& el,
                           const std::string& path,
                           const std::string& attr,
                           const std::string& expected,
                           const std::string& found) const
    {
        throw fabricsim::InputError(m_file,
                                    path + "@" + attr + " (line " + std::to_string(el.m_line) + ")",
                                    expected,
                                    found);
    }

    void Warn(const XmlElement& el, const std::string& what)
    {
        m_warnings.push_back(m_file + ": line " + std::to_string(el.m_line) + ": " + what);
    }

    void WarnUnknownAttributes(const XmlElement& el, const std::set<std::string>& known)
    {
        for (const auto& a : el.m_attributes)
        {
            if (!known.count(a.first)
                && m_warnedAttributes.insert(el.m_name + "@" + a.first).second)
            {
                Warn(el, "ignored unknown attribute '" + a.first + "' of <" + el.m_name + ">");
            }
        }
    }

    std::string Required(const XmlElement& el, const std::string& path, const std::string& attr)
    {
        const std::string* v = el.Attribute(attr);
        if (!v)
        {
            Fail(el, path, attr, "attribute '" + attr + "' on <" + el.m_name + ">", "none");
        }
        return *v;
    }

    bool ParseIntText(const std::string& text, int& value) const
    {
        const char* b = text.c_str();
        while (*b == ' ' || *b == '\t')
        {
            ++b;
        }
        char* end = nullptr;
        errno = 0;
        const long v = std::strtol(b, &end, 10);
        if (end == b || errno == ERANGE || v < INT_MIN || v > INT_MAX)
        {
            return false;
        }
        while (*end == ' ' || *end == '\t')
        {
            ++end;
        }
        if (*end != '\0')
        {
            return false;
        }
        value = static_cast<int>(v);
        return true;
    }

    int Int(const XmlElement& el, const std::string& path, const std::string& attr)
    {
        const std::string text = Required(el, path, attr);
        int v = 0;
        if (!ParseIntText(text, v))
        {
            Fail(el, path, attr, "an integer", "'" + text + "'");
        }
        return v;
    }

    int OptionalInt(const XmlElement& el,
                    const std::string& path,
                    const std::string& attr,
                    int fallback)
    {
        return el.Attribute(attr) ? Int(el, path, attr) : fallback;
    }

    bool Bool(const XmlElement& el, const std::string& path, const std::string& attr, bool fallback)
    {
        const std::string* v = el.Attribute(attr);
        if (!v)
        {
            return fallback;
        }
        if (*v == "1" || *v == "true" || *v == "True")
        {
            return true;
        }
        if (*v == "0" || *v == "false" || *v == "False")
        {
            return false;
        }
        Fail(el, path, attr, "0 or 1", "'" + *v + "'");
    }

    std::vector<int> IntList(const XmlElement& el, const std::string& path, const std::string& attr)
    {
        const std::string* v = el.Attribute(attr);
        if (!v)
        {
            return {};
        }
        std::vector<int> out;
        std::stringstream ss(*v);
        std::string item;
        while (std::getline(ss, item, ','))
        {
            int x = 0;
            if (!ParseIntText(item, x))
            {
                Fail(el, path, attr, "an integer or comma-separated integers", "'" + *v + "'");
            }
            out.push_back(x);
        }
        return out;
    }

    BufferKind Buffer(const XmlElement& el,
                      const std::string& path,
                      const std::string& attr,
                      bool nop)
    {
        const std::string* v = el.Attribute(attr);
        if (!v)
        {
            if (nop)
            {
                return attr == "srcbuf" ? BufferKind::kInput : BufferKind::kOutput;
            }
            Fail(el, path, attr, "attribute '" + attr + "' on <step>", "none");
        }
        const auto b = ParseBufferKind(*v);
        if (!b)
        {
            Fail(el, path, attr, "one of i, o, s", "'" + *v + "'");
        }
        return *b;
    }

    const std::string& m_file;
    std::vector<std::string>& m_warnings;
    std::set<std::string> m_warnedAttributes;
};

std::string
JoinInts(const std::vector<Dependency>& deps, bool tb)
{
    if (deps.empty())
    {
        return "-1";
    }
    std::string out;
    for (size_t i = 0; i < deps.size(); ++i)
    {
        out += (i ? "," : "") + std::to_string(tb ? deps[i].m_tb : deps[i].m_step);
    }
    return out;
}

} // namespace

MscclDocument
ParseMscclXml(const std::string& text, const std::string& fileName)
{
    XmlDocument xml = ParseXml(text, fileName);
    MscclDocument doc;
    doc.m_warnings = xml.m_warnings;
    AlgoReader reader(fileName, doc.m_warnings);
    for (size_t i = 0; i < xml.m_roots.size(); ++i)
    {
        const XmlElement& root = xml.m_roots[i];
        if (root.m_name != "algo")
        {
            throw fabricsim::InputError(fileName,
                                        "root element (line " + std::to_string(root.m_line) + ")",
                                        "<algo>",
                                        "<" + root.m_name + ">");
        }
        const std::string path
            = xml.m_roots.size() > 1 ? "algo[" + std::to_string(i) + "]" : "algo";
        doc.m_schedules.push_back(reader.Read(root, path));
    }
    if (doc.m_schedules.size() > 1)
    {
        doc.m_warnings.push_back(fileName + ": holds " + std::to_string(doc.m_schedules.size())
                                 + " <algo> elements");
    }
    return doc;
}

MscclDocument
ReadMscclXmlFile(const std::string& path)
{
    return ParseMscclXml(ReadFileBounded(path, "MSCCL XML file"), path);
}

Schedule
ReadMscclXml(const std::string& path)
{
    return ReadMscclXmlFile(path).m_schedules.front();
}

std::string
WriteMscclXml(const Schedule& s)
{
    std::ostringstream o;
    o << "<algo name=\"" << XmlEscape(s.m_name) << "\" proto=\"" << ToString(s.m_protocol)
      << "\" nchannels=\"" << s.m_channels << "\" nchunksperloop=\"" << s.m_chunksPerLoop
      << "\" ngpus=\"" << s.m_ranks << "\" coll=\"" << ToString(s.m_collective) << "\" inplace=\""
      << (s.m_inPlace ? 1 : 0) << "\"";
    if (s.m_outOfPlace)
    {
        o << " outofplace=\"" << (*s.m_outOfPlace ? 1 : 0) << "\"";
    }
    if (s.m_collective == CollectiveKind::kBroadcast || s.m_collective == CollectiveKind::kReduce
        || s.m_root != 0)
    {
        o << " root=\"" << s.m_root << "\"";
    }
    for (const auto& [key, value] : s.m_attributes)
    {
        o << " " << key << "=\"" << XmlEscape(value) << "\"";
    }
    o << ">\n";
    for (const auto& p : s.m_programs)
    {
        o << "  <gpu id=\"" << p.m_rank << "\" i_chunks=\"" << p.m_inputChunks << "\" o_chunks=\""
          << p.m_outputChunks << "\" s_chunks=\"" << p.m_scratchChunks << "\">\n";
        for (const auto& c : p.m_initialCopies)
        {
            o << "    <copy i_off=\"" << c.m_inputOffset << "\" o_off=\"" << c.m_outputOffset
              << "\"/>\n";
        }
        for (const auto& tb : p.m_threadblocks)
        {
            o << "    <tb id=\"" << tb.m_id << "\" send=\"" << tb.m_sendPeer << "\" recv=\""
              << tb.m_recvPeer << "\" chan=\"" << tb.m_channel << "\">\n";
            for (const auto& st : tb.m_steps)
            {
                o << "      <step s=\"" << st.m_index << "\" type=\"" << MscclName(st.m_op)
                  << "\" srcbuf=\"" << ToString(st.m_srcBuffer) << "\" srcoff=\"" << st.m_srcOffset
                  << "\" dstbuf=\"" << ToString(st.m_dstBuffer) << "\" dstoff=\"" << st.m_dstOffset
                  << "\" cnt=\"" << st.m_count << "\" depid=\"" << JoinInts(st.m_deps, true)
                  << "\" deps=\"" << JoinInts(st.m_deps, false) << "\" hasdep=\""
                  << (st.m_hasDep ? 1 : 0) << "\"/>\n";
            }
            o << "    </tb>\n";
        }
        o << "  </gpu>\n";
    }
    o << "</algo>\n";
    return o.str();
}

void
WriteMscclXmlFile(const Schedule& schedule, const std::string& path)
{
    WriteFileAtomic(path, WriteMscclXml(schedule));
}

} // namespace fabricsim
