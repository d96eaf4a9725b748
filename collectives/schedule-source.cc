#include "schedule-source.h"

#include "input-error.h"
#include "schedule-loader.h"
#include "schedule-validator.h"

#include <numeric>

namespace fabricsim
{

ScheduleSource::ScheduleSource(const ScheduleSourceOptions& opt,
                               CollectiveKind kind,
                               int ranks,
                               int localSize,
                               std::function<std::unique_ptr<Transport>()> probe,
                               const ExecutorConfig& config)
    : m_opt(opt)
    , m_kind(kind)
    , m_ranks(ranks)
    , m_config(config)
{
    m_gen.channels = opt.channels;
    m_gen.chunksPerRank = opt.chunks;
    m_gen.root = opt.root;
    m_gen.localSize = localSize;
    if (!opt.protocol.empty())
    {
        m_gen.protocol = *ParseProtocol(opt.protocol);
    }
    m_auto.m_channels = opt.channels;
    m_auto.m_chunksPerRank = opt.chunks;
    m_auto.m_localSize = localSize;
    m_auto.m_protocol = m_gen.protocol;
    m_auto.m_probe = std::move(probe);
    if (!opt.scheduleFile.empty())
    {
        LoadFile();
    }
}

const Schedule&
ScheduleSource::For(uint64_t bytes, std::string& name)
{
    if (!m_file.empty())
    {
        for (const Schedule& s : m_file)
        {
            uint64_t lo = 0;
            uint64_t hi = 0;
            auto a = s.m_attributes.find("minBytes");
            auto b = s.m_attributes.find("maxBytes");
            try
            {
                lo = a == s.m_attributes.end() ? 0 : std::stoull(a->second);
                hi = b == s.m_attributes.end() ? 0 : std::stoull(b->second);
            }
            catch (const std::exception&)
            {
                lo = hi = 0;
            }
            if (bytes >= lo && (hi == 0 || bytes < hi))
            {
                name = s.m_name;
                return s;
            }
        }
        name = m_file.front().m_name;
        return m_file.front();
    }
    const std::string algo = m_opt.algo == "auto" ? Auto(bytes) : m_opt.algo;
    name = algo;
    auto it = m_generated.find(algo);
    if (it == m_generated.end())
    {
        try
        {
            it = m_generated.emplace(algo, GenerateSchedule(m_kind, algo, m_ranks, m_gen)).first;
        }
        catch (const fabricsim::InputError& e)
        {
            throw fabricsim::InputError(m_opt.source,
                                        "--algo",
                                        "an algorithm that runs " + ToString(m_kind) + " on "
                                            + std::to_string(m_ranks) + " ranks with these options",
                                        "\"" + algo + "\" (" + e.what() + ")");
        }
    }
    return it->second;
}

int64_t
ScheduleSource::Wrong(const Schedule& s)
{
    if (s.m_collective == CollectiveKind::kCustom)
    {
        return -1;
    }
    auto it = m_wrong.find(&s);
    if (it == m_wrong.end())
    {
        it = m_wrong.emplace(&s, int64_t(ValidateSchedule(s).m_problems.size())).first;
    }
    return it->second;
}

std::string
ScheduleSource::Auto(uint64_t bytes)
{
    auto it = m_tuned.find(bytes);
    if (it == m_tuned.end())
    {
        if (!m_probe)
        {
            m_probe = m_auto.m_probe();
        }
        std::vector<uint32_t> ranks(m_ranks);
        std::iota(ranks.begin(), ranks.end(), 0u);
        it = m_tuned
                 .emplace(
                     bytes,
                     FastestAlgorithm(m_kind, bytes, ranks, m_gen, m_auto, m_config, m_probe.get()))
                 .first;
    }
    return it->second;
}

void
ScheduleSource::LoadFile()
{
    MscclDocument doc = LoadScheduleFile(m_opt.scheduleFile);
    std::string found;
    for (Schedule& s : doc.m_schedules)
    {
        found += (found.empty() ? "" : ", ") + ToString(s.m_collective) + " on "
                 + std::to_string(s.m_ranks);
        if (s.m_collective == m_kind && s.m_ranks == m_ranks)
        {
            if (!m_opt.protocol.empty())
            {
                s.m_protocol = *ParseProtocol(m_opt.protocol);
            }
            m_file.push_back(s);
        }
    }
    if (m_file.empty())
    {
        throw fabricsim::InputError(m_opt.scheduleFile,
                                    "algo",
                                    "a " + ToString(m_kind) + " schedule for "
                                        + std::to_string(m_ranks)
                                        + " ranks (--coll, the scenario's hosts or --ranks)",
                                    found);
    }
}

} // namespace fabricsim
