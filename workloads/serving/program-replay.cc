#include "program-replay.h"

#include "collective-api.h"
#include "input-error.h"
#include "json-reader.h"

namespace fabricsim
{

using nlohmann::json;

ProgramReplay::ProgramReplay(const std::vector<json>& records, const std::string& file)
{
    std::vector<std::pair<std::pair<bool, uint64_t>, StepDependencies>> deps;
    for (size_t i = 0; i < records.size(); ++i)
    {
        const json& r = records[i];
        std::string where = "line " + std::to_string(i + 1);
        std::string type = r.is_object() && r.contains("type") && r["type"].is_string()
                               ? r["type"].get<std::string>()
                               : "";
        try
        {
            if (type == "step")
            {
                auto p = std::make_shared<StepProgram>(
                    StepProgram::FromJson(JsonObject(r, file, where)));
                if (m_steps.count(p->step))
                {
                    throw std::invalid_argument("step " + std::to_string(p->step) + " twice");
                }
                deps.push_back({{true, p->step}, p->deps});
                m_steps[p->step] = p;
            }
            else if (type == "transfer")
            {
                TransferRecord t = TransferRecord::FromJson(JsonObject(r, file, where));
                if (m_transfers.count(t.id))
                {
                    throw std::invalid_argument("transfer " + std::to_string(t.id) + " twice");
                }
                deps.push_back({{false, uint64_t(t.id)}, t.deps});
                m_transfers[t.id] = t;
            }
            else
            {
                throw std::invalid_argument("a record of type \"step\" or \"transfer\"");
            }
        }
        catch (const fabricsim::InputError&)
        {
            throw; // names its field already ("line 3.ranks[0].items[2].bytes")
        }
        catch (const std::exception& e)
        {
            throw fabricsim::InputError(file, where, "a step or transfer record", e.what());
        }
        catch (...)
        {
            throw fabricsim::InputError(
                file, where, "a step or transfer record", "malformed record");
        }
    }
    for (const auto& [nodeKey, d] : deps)
    {
        const auto& key = nodeKey; // lambdas may not capture a structured binding before C++20
        Node& n = m_nodes[key];
        n.isStep = key.first;
        n.id = key.second;
        auto add = [&](bool isStep, uint64_t id)
        {
            if (isStep ? !m_steps.count(id) : !m_transfers.count(int64_t(id)))
            {
                throw fabricsim::InputError(
                    file,
                    std::string(key.first ? "step " : "transfer ") + std::to_string(key.second),
                    "dependencies on records of the trace",
                    std::string(isStep ? "step " : "transfer ") + std::to_string(id));
            }
            n.pending++;
            m_dependents[{isStep, id}].push_back(key);
        };
        for (uint64_t s : d.afterSteps)
        {
            add(true, s);
        }
        for (uint64_t t : d.afterTransfers)
        {
            add(false, t);
        }
    }
    for (const auto& [id, t] : m_transfers)
    {
        m_partsLeft[id] = t.layerwise ? t.parts : uint32_t(t.sends.size());
    }
}

ProgramReplay
ProgramReplay::Load(const std::string& path)
{
    std::vector<json> records = ReadJsonLines(path, "program trace (JSON lines)");
    return ProgramReplay(records, path);
}

void
ProgramReplay::Start(CollectiveApi& api)
{
    m_api = &api;
    m_exec = std::make_unique<StepExecutor>(api);
    m_exec->SetTransferPartDone([this](int64_t id) { TransferPartDone(id); });
    // Step-id order keeps the original submission order per rank among simultaneous launches.
    for (auto& [key, n] : m_nodes)
    {
        if (key.first)
        {
            MaybeLaunch(n);
        }
    }
    for (auto& [key, n] : m_nodes)
    {
        if (!key.first)
        {
            MaybeLaunch(n);
        }
    }
}

void
ProgramReplay::MaybeLaunch(Node& n)
{
    if (n.launched || n.pending > 0)
    {
        return;
    }
    n.launched = true;
    if (n.isStep)
    {
        uint64_t id = n.id;
        int64_t delay = std::max<int64_t>(0, m_steps.at(id)->deps.notBeforePs - m_api->NowPs());
        m_api->Schedule(delay, [this, id]() { LaunchStep(id); });
    }
    else
    {
        LaunchTransfer(int64_t(n.id));
    }
}

void
ProgramReplay::LaunchStep(uint64_t id)
{
    m_exec->Submit(m_steps.at(id),
                   [this, id](const StepStats& stats)
                   {
                       m_result.steps[id] = stats;
                       Finished(true, id);
                   });
}

void
ProgramReplay::LaunchTransfer(int64_t id)
{
    const TransferRecord& t = m_transfers.at(id);
    if (t.layerwise)
    {
        // Its sends are items of step programs; it ends with the last of them.
        if (m_partsLeft[id] == 0)
        {
            m_result.transferEndPs[id] = m_api->NowPs();
            Finished(false, uint64_t(id));
        }
        return;
    }
    if (t.sends.empty())
    {
        m_result.transferEndPs[id] = m_api->NowPs();
        Finished(false, uint64_t(id));
        return;
    }
    for (const auto& s : t.sends)
    {
        m_exec->Transfer(
            uint32_t(s[0]), uint32_t(s[1]), s[2], id, [this, id]() { TransferPartDone(id); });
    }
}

void
ProgramReplay::TransferPartDone(int64_t id)
{
    auto it = m_partsLeft.find(id);
    if (it == m_partsLeft.end() || it->second == 0)
    {
        return;
    }
    if (--it->second == 0 && m_nodes[{false, uint64_t(id)}].launched)
    {
        m_result.transferEndPs[id] = m_api->NowPs();
        Finished(false, uint64_t(id));
    }
}

void
ProgramReplay::Finished(bool isStep, uint64_t id)
{
    auto it = m_dependents.find({isStep, id});
    if (it == m_dependents.end())
    {
        return;
    }
    for (const auto& key : it->second)
    {
        Node& n = m_nodes.at(key);
        n.pending--;
        MaybeLaunch(n);
    }
}

ReplayResult
ProgramReplay::Finish()
{
    for (const auto& [key, n] : m_nodes)
    {
        bool done = key.first ? m_result.steps.count(key.second) > 0
                              : m_result.transferEndPs.count(int64_t(key.second)) > 0;
        if (!done)
        {
            m_result.incomplete.push_back(std::string(key.first ? "step " : "transfer ")
                                          + std::to_string(key.second)
                                          + (n.launched ? " did not finish" : " never started"));
        }
    }
    if (m_exec)
    {
        for (const auto& line : m_exec->Blocked())
        {
            m_result.incomplete.push_back(line);
        }
    }
    return m_result;
}

ReplayResult
ReplayPrograms(const std::vector<json>& records,
               CollectiveApi& api,
               const std::function<void()>& runEventLoop)
{
    ProgramReplay replay(records);
    replay.Start(api);
    runEventLoop();
    return replay.Finish();
}

} // namespace fabricsim
