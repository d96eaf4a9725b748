#include "schedule-json.h"

#include "input-error.h"
#include "json-reader.h"
#include "text-file.h"

#include <nlohmann/json.hpp>

#include <cstdint>

namespace fabricsim
{

const char* const kScheduleJsonFormat = "fabricsim-schedule/1";

namespace
{

using nlohmann::json;
using ojson = nlohmann::ordered_json;

std::string
TypeName(const json& v)
{
    if (v.is_null())
    {
        return "null";
    }
    std::string dump
        = v.dump(-1, ' ', false, json::error_handler_t::replace); // invalid UTF-8 replaced
    if (dump.size() > 40)
    {
        dump = dump.substr(0, 37) + "...";
    }
    return std::string(v.type_name()) + " " + dump;
}

/// Typed access to JSON members with errors that name file and path.
class JsonReader
{
  public:
    explicit JsonReader(const std::string& file)
        : m_file(file)
    {
    }

    [[noreturn]] void Fail(const std::string& path,
                           const std::string& expected,
                           const std::string& found) const
    {
        throw fabricsim::InputError(m_file, path, expected, found);
    }

    const json& Member(const json& obj, const std::string& path, const char* key) const
    {
        auto it = obj.find(key);
        if (it == obj.end())
        {
            Fail(Join(path, key), "a member '" + std::string(key) + "'", "none");
        }
        return *it;
    }

    int Int(const json& obj, const std::string& path, const char* key) const
    {
        return IntValue(Member(obj, path, key), Join(path, key));
    }

    int IntOr(const json& obj, const std::string& path, const char* key, int fallback) const
    {
        return obj.contains(key) ? Int(obj, path, key) : fallback;
    }

    int IntValue(const json& v, const std::string& path) const
    {
        if (!v.is_number_integer() || v.get<long long>() < INT32_MIN
            || v.get<long long>() > INT32_MAX)
        {
            Fail(path, "an integer", TypeName(v));
        }
        return v.get<int>();
    }

    bool BoolOr(const json& obj, const std::string& path, const char* key, bool fallback) const
    {
        if (!obj.contains(key))
        {
            return fallback;
        }
        const json& v = obj.at(key);
        if (!v.is_boolean())
        {
            Fail(Join(path, key), "true or false", TypeName(v));
        }
        return v.get<bool>();
    }

    std::string String(const json& obj, const std::string& path, const char* key) const
    {
        const json& v = Member(obj, path, key);
        if (!v.is_string())
        {
            Fail(Join(path, key), "a string", TypeName(v));
        }
        return v.get<std::string>();
    }

    const json& Array(const json& obj, const std::string& path, const char* key) const
    {
        const json& v = Member(obj, path, key);
        if (!v.is_array())
        {
            Fail(Join(path, key), "an array", TypeName(v));
        }
        return v;
    }

    void RequireObject(const json& v, const std::string& path) const
    {
        if (!v.is_object())
        {
            Fail(path.empty() ? "(document)" : path, "an object", TypeName(v));
        }
    }

    static std::string Join(const std::string& path, const std::string& key)
    {
        return path.empty() ? key : path + "." + key;
    }

    static std::string Index(const std::string& path, const char* key, size_t i)
    {
        return Join(path, key) + "[" + std::to_string(i) + "]";
    }

  private:
    const std::string& m_file;
};

Step
ReadStep(const JsonReader& r, const json& j, const std::string& path, int position)
{
    r.RequireObject(j, path);
    Step st;
    st.m_index = r.IntOr(j, path, "s", position);
    const std::string type = r.String(j, path, "type");
    const auto op = ParseStepOp(type);
    if (!op)
    {
        r.Fail(JsonReader::Join(path, "type"),
               "a step type (send/s, recv/r, recv_copy_send/rcs, recv_reduce_send/rrs, "
               "recv_reduce_copy/rrc, recv_reduce_copy_send/rrcs, copy/cpy, reduce/re, nop)",
               "'" + type + "'");
    }
    st.m_op = *op;
    auto buffer = [&](const char* key, BufferKind fallback)
    {
        if (!j.contains(key))
        {
            return fallback;
        }
        const std::string b = r.String(j, path, key);
        const auto kind = ParseBufferKind(b);
        if (!kind)
        {
            r.Fail(JsonReader::Join(path, key), "one of i, o, s", "'" + b + "'");
        }
        return *kind;
    };
    st.m_srcBuffer = buffer("src", BufferKind::kInput);
    st.m_dstBuffer = buffer("dst", BufferKind::kOutput);
    st.m_srcOffset = r.IntOr(j, path, "src_off", -1);
    st.m_dstOffset = r.IntOr(j, path, "dst_off", -1);
    st.m_count = st.m_op == StepOp::kNop ? r.IntOr(j, path, "cnt", 0) : r.Int(j, path, "cnt");
    if (j.contains("deps"))
    {
        const json& deps = r.Array(j, path, "deps");
        for (size_t i = 0; i < deps.size(); ++i)
        {
            const std::string dpath = JsonReader::Index(path, "deps", i);
            if (!deps[i].is_array() || deps[i].size() != 2)
            {
                r.Fail(dpath, "a pair [tb, step]", TypeName(deps[i]));
            }
            st.m_deps.push_back(Dependency{r.IntValue(deps[i][0], dpath + "[0]"),
                                           r.IntValue(deps[i][1], dpath + "[1]")});
        }
    }
    st.m_hasDep = r.BoolOr(j, path, "has_dep", false);
    return st;
}

Threadblock
ReadThreadblock(const JsonReader& r, const json& j, const std::string& path, int position)
{
    r.RequireObject(j, path);
    Threadblock tb;
    tb.m_id = r.IntOr(j, path, "id", position);
    tb.m_sendPeer = r.IntOr(j, path, "send", -1);
    tb.m_recvPeer = r.IntOr(j, path, "recv", -1);
    tb.m_channel = r.IntOr(j, path, "channel", 0);
    const json& steps = r.Array(j, path, "steps");
    for (size_t i = 0; i < steps.size(); ++i)
    {
        tb.m_steps.push_back(
            ReadStep(r, steps[i], JsonReader::Index(path, "steps", i), static_cast<int>(i)));
    }
    return tb;
}

RankProgram
ReadRank(const JsonReader& r, const json& j, const std::string& path, int position)
{
    r.RequireObject(j, path);
    RankProgram p;
    p.m_rank = r.IntOr(j, path, "rank", position);
    p.m_inputChunks = r.Int(j, path, "input_chunks");
    p.m_outputChunks = r.Int(j, path, "output_chunks");
    p.m_scratchChunks = r.IntOr(j, path, "scratch_chunks", 0);
    if (j.contains("initial_copies"))
    {
        const json& copies = r.Array(j, path, "initial_copies");
        for (size_t i = 0; i < copies.size(); ++i)
        {
            const std::string cpath = JsonReader::Index(path, "initial_copies", i);
            r.RequireObject(copies[i], cpath);
            p.m_initialCopies.push_back(
                InitialCopy{r.Int(copies[i], cpath, "i_off"), r.Int(copies[i], cpath, "o_off")});
        }
    }
    const json& tbs = r.Array(j, path, "threadblocks");
    for (size_t i = 0; i < tbs.size(); ++i)
    {
        p.m_threadblocks.push_back(ReadThreadblock(
            r, tbs[i], JsonReader::Index(path, "threadblocks", i), static_cast<int>(i)));
    }
    return p;
}

} // namespace

Schedule
ParseScheduleJson(const std::string& text, const std::string& fileName)
{
    const json doc = ParseJson(text, fileName);
    const JsonReader r(fileName);
    r.RequireObject(doc, "");
    if (doc.contains("format"))
    {
        const std::string format = r.String(doc, "", "format");
        if (format != kScheduleJsonFormat)
        {
            r.Fail("format", std::string("\"") + kScheduleJsonFormat + "\"", "\"" + format + "\"");
        }
    }
    Schedule s;
    s.m_name = doc.contains("name") ? r.String(doc, "", "name") : "";
    const std::string coll = r.String(doc, "", "collective");
    const auto kind = ParseCollectiveKind(coll);
    if (!kind)
    {
        r.Fail("collective",
               "one of allreduce, allgather, reducescatter, alltoall, broadcast, reduce, custom",
               "'" + coll + "'");
    }
    s.m_collective = *kind;
    s.m_ranks = r.Int(doc, "", "num_ranks");
    s.m_chunksPerLoop = r.Int(doc, "", "chunks_per_loop");
    s.m_inPlace = r.BoolOr(doc, "", "in_place", false);
    if (doc.contains("out_of_place"))
    {
        s.m_outOfPlace = r.BoolOr(doc, "", "out_of_place", false);
    }
    if (doc.contains("protocol"))
    {
        const std::string proto = r.String(doc, "", "protocol");
        const auto p = ParseProtocol(proto);
        if (!p)
        {
            r.Fail("protocol", "one of Simple, LL, LL128", "'" + proto + "'");
        }
        s.m_protocol = *p;
    }
    s.m_channels = r.IntOr(doc, "", "channels", 1);
    s.m_root = r.IntOr(doc, "", "root", 0);
    if (doc.contains("attributes"))
    {
        const json& attrs = doc.at("attributes");
        r.RequireObject(attrs, "attributes");
        for (auto it = attrs.begin(); it != attrs.end(); ++it)
        {
            if (!it.value().is_string())
            {
                r.Fail("attributes." + it.key(), "a string", TypeName(it.value()));
            }
            s.m_attributes[it.key()] = it.value().get<std::string>();
        }
    }
    const json& ranks = r.Array(doc, "", "ranks");
    for (size_t i = 0; i < ranks.size(); ++i)
    {
        s.m_programs.push_back(
            ReadRank(r, ranks[i], JsonReader::Index("", "ranks", i), static_cast<int>(i)));
    }
    return s;
}

Schedule
ReadScheduleJsonFile(const std::string& path)
{
    return ParseScheduleJson(ReadTextFile(path), path);
}

std::string
WriteScheduleJson(const Schedule& s, int indent)
{
    ojson doc = ojson::object();
    doc["format"] = kScheduleJsonFormat;
    doc["name"] = s.m_name;
    doc["collective"] = ToString(s.m_collective);
    doc["num_ranks"] = s.m_ranks;
    doc["chunks_per_loop"] = s.m_chunksPerLoop;
    doc["in_place"] = s.m_inPlace;
    if (s.m_outOfPlace)
    {
        doc["out_of_place"] = *s.m_outOfPlace;
    }
    doc["protocol"] = ToString(s.m_protocol);
    doc["channels"] = s.m_channels;
    doc["root"] = s.m_root;
    if (!s.m_attributes.empty())
    {
        doc["attributes"] = s.m_attributes;
    }
    ojson ranks = ojson::array();
    for (const auto& p : s.m_programs)
    {
        ojson jp = ojson::object();
        jp["rank"] = p.m_rank;
        jp["input_chunks"] = p.m_inputChunks;
        jp["output_chunks"] = p.m_outputChunks;
        jp["scratch_chunks"] = p.m_scratchChunks;
        if (!p.m_initialCopies.empty())
        {
            ojson copies = ojson::array();
            for (const auto& c : p.m_initialCopies)
            {
                copies.push_back({{"i_off", c.m_inputOffset}, {"o_off", c.m_outputOffset}});
            }
            jp["initial_copies"] = copies;
        }
        ojson tbs = ojson::array();
        for (const auto& tb : p.m_threadblocks)
        {
            ojson jt = ojson::object();
            jt["id"] = tb.m_id;
            jt["send"] = tb.m_sendPeer;
            jt["recv"] = tb.m_recvPeer;
            jt["channel"] = tb.m_channel;
            ojson steps = ojson::array();
            for (size_t i = 0; i < tb.m_steps.size(); ++i)
            {
                const Step& st = tb.m_steps[i];
                ojson js = ojson::object();
                if (st.m_index != static_cast<int>(i))
                {
                    js["s"] = st.m_index;
                }
                js["type"] = LongName(st.m_op);
                js["src"] = ToString(st.m_srcBuffer);
                js["src_off"] = st.m_srcOffset;
                js["dst"] = ToString(st.m_dstBuffer);
                js["dst_off"] = st.m_dstOffset;
                js["cnt"] = st.m_count;
                if (!st.m_deps.empty())
                {
                    ojson deps = ojson::array();
                    for (const auto& d : st.m_deps)
                    {
                        deps.push_back({d.m_tb, d.m_step});
                    }
                    js["deps"] = deps;
                }
                if (st.m_hasDep)
                {
                    js["has_dep"] = true;
                }
                steps.push_back(js);
            }
            jt["steps"] = steps;
            tbs.push_back(jt);
        }
        jp["threadblocks"] = tbs;
        ranks.push_back(jp);
    }
    doc["ranks"] = ranks;
    return doc.dump(indent) + "\n";
}

void
WriteScheduleJsonFile(const Schedule& schedule, const std::string& path)
{
    WriteTextFileAtomic(path, WriteScheduleJson(schedule));
}

} // namespace fabricsim
