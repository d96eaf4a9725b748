#include "schedule-json.h"

#include "file-reader.h"
#include "input-error.h"
#include "json-describe.h"
#include "json-reader.h"
#include "output-writer.h"

#include <nlohmann/json.hpp>

#include <cstdint>

namespace fabricsim
{

const char* const kScheduleJsonFormat = "fabricsim-schedule/1";

namespace
{

using nlohmann::json;
using ojson = nlohmann::ordered_json;

/// A schedule's integers are C ints: rank, threadblock and chunk numbers, -1 for "none".
int
IntOf(const JsonObject& o, const std::string& key)
{
    return int(o.Int(key, INT32_MIN, INT32_MAX));
}

int
IntOr(const JsonObject& o, const std::string& key, int fallback)
{
    return int(o.OptionalInt(key, fallback, INT32_MIN, INT32_MAX));
}

/// Element \p i of the array at \p key of \p o, which must be an object.
JsonObject
ElementObject(const JsonObject& o, const std::string& key, size_t i)
{
    return JsonObject(o.Array(key)[i], o.File(), JsonIndex(o.Field(key), i));
}

Step
ReadStep(const JsonObject& j, int position)
{
    Step st;
    st.m_index = IntOr(j, "s", position);
    const std::string type = j.String("type");
    const auto op = ParseStepOp(type);
    if (!op)
    {
        j.Fail("type",
               "a step type (send/s, recv/r, recv_copy_send/rcs, recv_reduce_send/rrs, "
               "recv_reduce_copy/rrc, recv_reduce_copy_send/rrcs, copy/cpy, reduce/re, nop)",
               "'" + type + "'");
    }
    st.m_op = *op;
    auto buffer = [&](const char* key, BufferKind fallback)
    {
        if (!j.Has(key))
        {
            return fallback;
        }
        const std::string b = j.String(key);
        const auto kind = ParseBufferKind(b);
        if (!kind)
        {
            j.Fail(key, "one of i, o, s", "'" + b + "'");
        }
        return *kind;
    };
    st.m_srcBuffer = buffer("src", BufferKind::kInput);
    st.m_dstBuffer = buffer("dst", BufferKind::kOutput);
    st.m_srcOffset = IntOr(j, "src_off", -1);
    st.m_dstOffset = IntOr(j, "dst_off", -1);
    st.m_count = st.m_op == StepOp::kNop ? IntOr(j, "cnt", 0) : IntOf(j, "cnt");
    if (j.Has("deps"))
    {
        const json& deps = j.Array("deps");
        for (size_t i = 0; i < deps.size(); ++i)
        {
            const std::string dpath = JsonIndex(j.Field("deps"), i);
            if (!deps[i].is_array() || deps[i].size() != 2)
            {
                throw InputError(j.File(), dpath, "a pair [tb, step]", DescribeJson(deps[i]));
            }
            st.m_deps.push_back(
                Dependency{int(JsonObject::ToInt(
                               deps[i][0], j.File(), JsonIndex(dpath, 0), INT32_MIN, INT32_MAX)),
                           int(JsonObject::ToInt(
                               deps[i][1], j.File(), JsonIndex(dpath, 1), INT32_MIN, INT32_MAX))});
        }
    }
    st.m_hasDep = j.OptionalBool("has_dep", false);
    return st;
}

Threadblock
ReadThreadblock(const JsonObject& j, int position)
{
    Threadblock tb;
    tb.m_id = IntOr(j, "id", position);
    tb.m_sendPeer = IntOr(j, "send", -1);
    tb.m_recvPeer = IntOr(j, "recv", -1);
    tb.m_channel = IntOr(j, "channel", 0);
    for (size_t i = 0; i < j.Array("steps").size(); ++i)
    {
        tb.m_steps.push_back(ReadStep(ElementObject(j, "steps", i), static_cast<int>(i)));
    }
    return tb;
}

RankProgram
ReadRank(const JsonObject& j, int position)
{
    RankProgram p;
    p.m_rank = IntOr(j, "rank", position);
    p.m_inputChunks = IntOf(j, "input_chunks");
    p.m_outputChunks = IntOf(j, "output_chunks");
    p.m_scratchChunks = IntOr(j, "scratch_chunks", 0);
    if (j.Has("initial_copies"))
    {
        for (size_t i = 0; i < j.Array("initial_copies").size(); ++i)
        {
            const JsonObject c = ElementObject(j, "initial_copies", i);
            p.m_initialCopies.push_back(InitialCopy{IntOf(c, "i_off"), IntOf(c, "o_off")});
        }
    }
    for (size_t i = 0; i < j.Array("threadblocks").size(); ++i)
    {
        p.m_threadblocks.push_back(
            ReadThreadblock(ElementObject(j, "threadblocks", i), static_cast<int>(i)));
    }
    return p;
}

} // namespace

Schedule
ParseScheduleJson(const std::string& text, const std::string& fileName)
{
    const json doc = ParseJson(text, fileName);
    const JsonObject r(doc, fileName, "");
    if (r.Has("format"))
    {
        const std::string format = r.String("format");
        if (format != kScheduleJsonFormat)
        {
            r.Fail("format", std::string("\"") + kScheduleJsonFormat + "\"", "\"" + format + "\"");
        }
    }
    Schedule s;
    s.m_name = r.OptionalString("name", "");
    const std::string coll = r.String("collective");
    const auto kind = ParseCollectiveKind(coll);
    if (!kind)
    {
        r.Fail("collective",
               "one of allreduce, allgather, reducescatter, alltoall, broadcast, reduce, custom",
               "'" + coll + "'");
    }
    s.m_collective = *kind;
    s.m_ranks = IntOf(r, "num_ranks");
    s.m_chunksPerLoop = IntOf(r, "chunks_per_loop");
    s.m_inPlace = r.OptionalBool("in_place", false);
    if (r.Has("out_of_place"))
    {
        s.m_outOfPlace = r.Bool("out_of_place");
    }
    if (r.Has("protocol"))
    {
        const std::string proto = r.String("protocol");
        const auto p = ParseProtocol(proto);
        if (!p)
        {
            r.Fail("protocol", "one of Simple, LL, LL128", "'" + proto + "'");
        }
        s.m_protocol = *p;
    }
    s.m_channels = IntOr(r, "channels", 1);
    s.m_root = IntOr(r, "root", 0);
    if (std::optional<JsonObject> attrs = r.OptionalObject("attributes"))
    {
        for (auto it = attrs->Json().begin(); it != attrs->Json().end(); ++it)
        {
            s.m_attributes[it.key()] = attrs->String(it.key());
        }
    }
    for (size_t i = 0; i < r.Array("ranks").size(); ++i)
    {
        s.m_programs.push_back(ReadRank(ElementObject(r, "ranks", i), static_cast<int>(i)));
    }
    return s;
}

Schedule
ReadScheduleJsonFile(const std::string& path)
{
    return ParseScheduleJson(ReadFileBounded(path, "schedule JSON file"), path);
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
    WriteFileAtomic(path, WriteScheduleJson(schedule));
}

} // namespace fabricsim
