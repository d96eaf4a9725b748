#include "program-trace-import.h"

#include "comm-op-kind.h"
#include "input-error.h"
#include "json-reader.h"
#include "step-program.h"
#include "unit-conversions.h"

#include <functional>
#include <map>

namespace fabricsim
{

namespace
{

/// Per rank: the ops so far and the last op of each stream of the current step.
struct RankBuild
{
    RankTrace trace;
    int64_t boundary = -1; ///< the op that ends the previous step on this rank
};

int64_t
TagOf(const std::string& key)
{
    return int64_t(std::hash<std::string>{}(key)&0x3fffffffffffffffULL);
}

void
AddStep(const StepProgram& step, std::map<uint32_t, RankBuild>& ranks, ImportedTrace& out)
{
    for (const RankStepProgram& rp : step.ranks)
    {
        RankBuild& rb = ranks[rp.rank];
        rb.trace.rank = rp.rank;
        std::vector<TraceOp>& ops = rb.trace.ops;
        std::map<uint32_t, int64_t> lastOfStream;
        std::map<std::string, uint32_t> asyncOps;
        std::vector<uint32_t> stepOps;
        auto add = [&](TraceOp op, uint32_t stream)
        {
            auto last = lastOfStream.find(stream);
            if (last != lastOfStream.end())
            {
                op.deps.push_back({uint32_t(last->second), 0});
            }
            else if (rb.boundary >= 0)
            {
                op.deps.push_back({uint32_t(rb.boundary), 0});
            }
            ops.push_back(std::move(op));
            const uint32_t idx = uint32_t(ops.size() - 1);
            stepOps.push_back(idx);
            return idx;
        };
        for (const ProgramItem& it : rp.items)
        {
            TraceOp op;
            op.name = it.name.empty() ? it.category : it.name;
            op.lane = it.stream;
            if (it.type == ProgramItem::Type::Compute)
            {
                op.kind = TraceOpKind::kCompute;
                op.durationPs = it.durationPs;
                op.opClass
                    = op.name == "attention" || it.flops > 0 ? OpClass::kGemm : OpClass::kMemory;
                lastOfStream[it.stream] = add(op, it.stream);
                continue;
            }
            if (it.type == ProgramItem::Type::Wait)
            {
                auto a = asyncOps.find(it.key);
                if (a != asyncOps.end())
                {
                    TraceOp wait;
                    wait.kind = TraceOpKind::kCompute;
                    wait.opClass = OpClass::kHost;
                    wait.name = "wait " + it.key;
                    wait.lane = it.stream;
                    const uint32_t w = add(wait, it.stream);
                    ops[w].deps.push_back({a->second, 0});
                    lastOfStream[it.stream] = w;
                }
                continue;
            }
            op.opClass = OpClass::kComm;
            op.collectiveName = CommOpName(it.op);
            op.sized = it.bytes > 0;
            op.bytes = it.bytes;
            op.sizeSource = "program trace";
            op.group = it.key;
            op.groupRanks = it.group;
            const bool point = it.op == CommOp::Send || it.op == CommOp::Recv
                               || it.op == CommOp::KvSend
                               || (it.op == CommOp::KvFetch && it.fetchFrom >= 0);
            if (const std::optional<CollectiveKind> kind = CollectiveKindOf(it.op))
            {
                op.kind = TraceOpKind::kCollective;
                op.collective = *kind;
            }
            else if (point)
            {
                const bool send = it.op == CommOp::Send || it.op == CommOp::KvSend;
                op.kind = send ? TraceOpKind::kSend : TraceOpKind::kRecv;
                op.tag = TagOf(it.key);
                if (it.op == CommOp::KvFetch)
                {
                    op.peer = uint32_t(it.fetchFrom);
                }
                else
                {
                    op.peer = it.group.size() == 2 ? (send ? it.group[1] : it.group[0]) : rp.rank;
                }
            }
            else if (it.op == CommOp::KvFetch)
            {
                // From the host tier: a transfer over the rank's PCIe link, a delay here.
                op.kind = TraceOpKind::kCompute;
                op.opClass = OpClass::kHost;
                op.durationPs = it.tierBwBytesPerSec > 0 ? units::BytesAtRatePs(
                                    double(it.bytes), it.tierBwBytesPerSec, "KV tier fetch")
                                                         : 0;
            }
            else
            {
                // A gather: point-to-point sends to group index 0, which receives from each.
                op.kind = it.groupIndex == 0 ? TraceOpKind::kRecv : TraceOpKind::kSend;
                op.tag = TagOf(it.key);
                if (it.groupIndex != 0)
                {
                    op.peer = it.group.empty() ? rp.rank : it.group[0];
                }
                else
                {
                    for (size_t m = 1; m < it.group.size(); ++m)
                    {
                        TraceOp r = op;
                        r.peer = it.group[m];
                        const uint32_t idx = add(r, it.stream);
                        lastOfStream[it.stream] = idx;
                    }
                    continue;
                }
            }
            const uint32_t idx = add(op, it.stream);
            if (it.async || it.detached)
            {
                asyncOps[it.key] = idx; // the stream goes on; a Wait item joins it later
            }
            else
            {
                lastOfStream[it.stream] = idx;
            }
        }
        // The step ends on this rank when all its ops have: the next step starts after that.
        TraceOp end;
        end.kind = TraceOpKind::kCompute;
        end.opClass = OpClass::kHost;
        end.name = "end of step " + std::to_string(step.step);
        for (uint32_t i : stepOps)
        {
            end.deps.push_back({i, 0});
        }
        if (stepOps.empty() && rb.boundary >= 0)
        {
            end.deps.push_back({uint32_t(rb.boundary), 0});
        }
        ops.push_back(std::move(end));
        rb.boundary = int64_t(ops.size() - 1);
        out.Count("step_programs");
    }
}

} // namespace

bool
LooksLikeProgramTrace(const std::string& head)
{
    const size_t nl = head.find('\n');
    if (nl == std::string::npos && head.rfind("{\"deps\":{", 0) == 0)
    {
        return true;
    }
    const std::string firstLine = head.substr(0, nl);
    try
    {
        const nlohmann::json j = ParseJson(firstLine, "");
        return j.is_object() && j.contains("type") && j["type"].is_string()
               && (j["type"] == "step" || j["type"] == "transfer");
    }
    catch (const fabricsim::InputError&)
    {
        return false;
    }
}

ImportedTrace
ImportProgramRecords(const std::vector<nlohmann::json>& records, const std::string& file)
{
    ImportedTrace out;
    out.format = "fabricsim-program";
    std::map<uint32_t, RankBuild> ranks;
    for (size_t i = 0; i < records.size(); ++i)
    {
        const nlohmann::json& r = records[i];
        const std::string type = r.is_object() && r.contains("type") && r["type"].is_string()
                                     ? r["type"].get<std::string>()
                                     : "";
        try
        {
            if (type == "step")
            {
                AddStep(StepProgram::FromJson(JsonObject(r, file, "line " + std::to_string(i + 1))),
                        ranks,
                        out);
            }
            else if (type == "transfer")
            {
                TransferRecord t = TransferRecord::FromJson(
                    JsonObject(r, file, "line " + std::to_string(i + 1)));
                out.Count("transfers");
                (void)t;
            }
            else
            {
                throw std::invalid_argument("a record of type \"step\" or \"transfer\"");
            }
        }
        catch (const std::invalid_argument& e)
        {
            throw fabricsim::InputError(
                file, "line " + std::to_string(i + 1), "a program-trace record", e.what());
        }
        catch (const nlohmann::json::exception& e)
        {
            throw fabricsim::InputError(
                file, "line " + std::to_string(i + 1), "a program-trace record", e.what());
        }
    }
    if (ranks.empty())
    {
        throw fabricsim::InputError(file, "", "step records", "none");
    }
    if (out.counts["transfers"] > 0)
    {
        out.notes.push_back(
            file + ": bulk KV transfers between pools are not replayed from a program trace ("
            + std::to_string(out.counts["transfers"]) + " records)");
    }
    out.notes.push_back(
        file + ": steps follow one another on each rank; request arrival times are not kept");
    for (auto& [rank, rb] : ranks)
    {
        rb.trace.file = file;
        out.ranks.push_back(std::move(rb.trace));
    }
    // Ranks are the recording run's hosts: one the run did not use stays idle here too.
    CompleteRanks(out, false);
    return out;
}

ImportedTrace
ImportProgramTrace(const std::string& path)
{
    std::vector<nlohmann::json> records = ReadJsonLines(path, "program trace (JSON lines)");
    return ImportProgramRecords(records, path);
}

} // namespace fabricsim
