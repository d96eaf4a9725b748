#include "schedule-ir.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace fabricsim
{

namespace
{

std::string
Lower(const std::string& s)
{
    std::string r = s;
    std::transform(r.begin(),
                   r.end(),
                   r.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return r;
}

} // namespace

std::string
ToString(Protocol protocol)
{
    switch (protocol)
    {
    case Protocol::kSimple:
        return "Simple";
    case Protocol::kLL:
        return "LL";
    case Protocol::kLL128:
        return "LL128";
    }
    return "Simple";
}

std::optional<Protocol>
ParseProtocol(const std::string& name)
{
    const std::string s = Lower(name);
    if (s == "simple")
    {
        return Protocol::kSimple;
    }
    if (s == "ll")
    {
        return Protocol::kLL;
    }
    if (s == "ll128")
    {
        return Protocol::kLL128;
    }
    return std::nullopt;
}

std::string
ToString(BufferKind buffer)
{
    switch (buffer)
    {
    case BufferKind::kInput:
        return "i";
    case BufferKind::kOutput:
        return "o";
    case BufferKind::kScratch:
        return "s";
    }
    return "i";
}

std::optional<BufferKind>
ParseBufferKind(const std::string& name)
{
    const std::string s = Lower(name);
    if (s == "i" || s == "input")
    {
        return BufferKind::kInput;
    }
    if (s == "o" || s == "output")
    {
        return BufferKind::kOutput;
    }
    if (s == "s" || s == "scratch")
    {
        return BufferKind::kScratch;
    }
    return std::nullopt;
}

namespace
{

struct OpNames
{
    StepOp m_op;
    const char* m_short;
    const char* m_long;
};

const OpNames kOpNames[] = {
    {StepOp::kSend, "s", "send"},
    {StepOp::kRecv, "r", "recv"},
    {StepOp::kRecvCopySend, "rcs", "recv_copy_send"},
    {StepOp::kRecvReduceSend, "rrs", "recv_reduce_send"},
    {StepOp::kRecvReduceCopy, "rrc", "recv_reduce_copy"},
    {StepOp::kRecvReduceCopySend, "rrcs", "recv_reduce_copy_send"},
    {StepOp::kCopy, "cpy", "copy"},
    {StepOp::kReduce, "re", "reduce"},
    {StepOp::kNop, "nop", "nop"},
};

} // namespace

std::string
MscclName(StepOp op)
{
    for (const auto& n : kOpNames)
    {
        if (n.m_op == op)
        {
            return n.m_short;
        }
    }
    return "nop";
}

std::string
LongName(StepOp op)
{
    for (const auto& n : kOpNames)
    {
        if (n.m_op == op)
        {
            return n.m_long;
        }
    }
    return "nop";
}

std::optional<StepOp>
ParseStepOp(const std::string& name)
{
    const std::string s = Lower(name);
    for (const auto& n : kOpNames)
    {
        if (s == n.m_short || s == n.m_long)
        {
            return n.m_op;
        }
    }
    return std::nullopt;
}

bool
OpSends(StepOp op)
{
    return op == StepOp::kSend || op == StepOp::kRecvCopySend || op == StepOp::kRecvReduceSend
           || op == StepOp::kRecvReduceCopySend;
}

bool
OpReceives(StepOp op)
{
    return op == StepOp::kRecv || op == StepOp::kRecvCopySend || op == StepOp::kRecvReduceSend
           || op == StepOp::kRecvReduceCopy || op == StepOp::kRecvReduceCopySend;
}

bool
OpReadsSrc(StepOp op)
{
    return op == StepOp::kSend || op == StepOp::kRecvReduceSend || op == StepOp::kRecvReduceCopy
           || op == StepOp::kRecvReduceCopySend || op == StepOp::kCopy || op == StepOp::kReduce;
}

bool
OpWritesDst(StepOp op)
{
    return op == StepOp::kRecv || op == StepOp::kRecvCopySend || op == StepOp::kRecvReduceCopy
           || op == StepOp::kRecvReduceCopySend || op == StepOp::kCopy || op == StepOp::kReduce;
}

bool
Step::operator==(const Step& o) const
{
    return m_index == o.m_index && m_op == o.m_op && m_srcBuffer == o.m_srcBuffer
           && m_srcOffset == o.m_srcOffset && m_dstBuffer == o.m_dstBuffer
           && m_dstOffset == o.m_dstOffset && m_count == o.m_count && m_deps == o.m_deps
           && m_hasDep == o.m_hasDep;
}

Step&
Threadblock::AddStep(StepOp op,
                     BufferKind srcBuffer,
                     int srcOffset,
                     BufferKind dstBuffer,
                     int dstOffset,
                     int count,
                     const std::vector<Dependency>& deps)
{
    Step step;
    step.m_index = static_cast<int>(m_steps.size());
    step.m_op = op;
    step.m_srcBuffer = srcBuffer;
    step.m_srcOffset = srcOffset;
    step.m_dstBuffer = dstBuffer;
    step.m_dstOffset = dstOffset;
    step.m_count = count;
    step.m_deps = deps;
    m_steps.push_back(step);
    return m_steps.back();
}

bool
Threadblock::operator==(const Threadblock& o) const
{
    return m_id == o.m_id && m_sendPeer == o.m_sendPeer && m_recvPeer == o.m_recvPeer
           && m_channel == o.m_channel && m_steps == o.m_steps;
}

Threadblock&
RankProgram::AddThreadblock(int sendPeer, int recvPeer, int channel)
{
    Threadblock tb;
    tb.m_id = static_cast<int>(m_threadblocks.size());
    tb.m_sendPeer = sendPeer;
    tb.m_recvPeer = recvPeer;
    tb.m_channel = channel;
    m_threadblocks.push_back(tb);
    return m_threadblocks.back();
}

Threadblock*
RankProgram::FindThreadblock(int id)
{
    return const_cast<Threadblock*>(static_cast<const RankProgram*>(this)->FindThreadblock(id));
}

const Threadblock*
RankProgram::FindThreadblock(int id) const
{
    if (id >= 0 && id < static_cast<int>(m_threadblocks.size()) && m_threadblocks[id].m_id == id)
    {
        return &m_threadblocks[id];
    }
    for (const auto& tb : m_threadblocks)
    {
        if (tb.m_id == id)
        {
            return &tb;
        }
    }
    return nullptr;
}

bool
RankProgram::operator==(const RankProgram& o) const
{
    return m_rank == o.m_rank && m_inputChunks == o.m_inputChunks
           && m_outputChunks == o.m_outputChunks && m_scratchChunks == o.m_scratchChunks
           && m_initialCopies == o.m_initialCopies && m_threadblocks == o.m_threadblocks;
}

std::optional<BufferGeometry>
ExpectedGeometry(CollectiveKind collective, int ranks, int chunksPerLoop)
{
    if (ranks <= 0 || chunksPerLoop <= 0)
    {
        return std::nullopt;
    }
    const bool divisible = chunksPerLoop % ranks == 0;
    const int perRank = chunksPerLoop / ranks;
    switch (collective)
    {
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
        return BufferGeometry{chunksPerLoop, chunksPerLoop};
    case CollectiveKind::kAllToAll:
        if (!divisible)
        {
            return std::nullopt;
        }
        return BufferGeometry{chunksPerLoop, chunksPerLoop};
    case CollectiveKind::kAllGather:
        if (!divisible)
        {
            return std::nullopt;
        }
        return BufferGeometry{perRank, chunksPerLoop};
    case CollectiveKind::kReduceScatter:
        if (!divisible)
        {
            return std::nullopt;
        }
        return BufferGeometry{chunksPerLoop, perRank};
    case CollectiveKind::kCustom:
        return std::nullopt;
    }
    return std::nullopt;
}

Schedule
Schedule::Create(CollectiveKind collective,
                 int ranks,
                 int chunksPerLoop,
                 bool inPlace,
                 Protocol protocol,
                 int channels)
{
    Schedule s;
    s.m_name = ToString(collective);
    s.m_collective = collective;
    s.m_ranks = ranks;
    s.m_chunksPerLoop = chunksPerLoop;
    s.m_inPlace = inPlace;
    s.m_protocol = protocol;
    s.m_channels = channels;
    const auto geometry = ExpectedGeometry(collective, ranks, chunksPerLoop);
    for (int r = 0; r < ranks; ++r)
    {
        RankProgram p;
        p.m_rank = r;
        if (geometry)
        {
            p.m_inputChunks = geometry->m_inputChunks;
            p.m_outputChunks = geometry->m_outputChunks;
            if (inPlace)
            {
                // msccl-tools writes 0 for the buffer that aliases the other one.
                if (collective == CollectiveKind::kAllGather)
                {
                    p.m_inputChunks = 0;
                }
                else
                {
                    p.m_outputChunks = 0;
                }
            }
        }
        else
        {
            p.m_inputChunks = chunksPerLoop;
            p.m_outputChunks = chunksPerLoop;
        }
        s.m_programs.push_back(p);
    }
    return s;
}

RankProgram&
Schedule::Rank(int rank)
{
    return const_cast<RankProgram&>(static_cast<const Schedule*>(this)->Rank(rank));
}

const RankProgram&
Schedule::Rank(int rank) const
{
    if (rank >= 0 && rank < static_cast<int>(m_programs.size()) && m_programs[rank].m_rank == rank)
    {
        return m_programs[rank];
    }
    for (const auto& p : m_programs)
    {
        if (p.m_rank == rank)
        {
            return p;
        }
    }
    throw std::out_of_range("schedule has no program for rank " + std::to_string(rank));
}

void
Schedule::MarkDependencyTargets()
{
    for (auto& program : m_programs)
    {
        for (auto& tb : program.m_threadblocks)
        {
            for (auto& step : tb.m_steps)
            {
                for (const auto& dep : step.m_deps)
                {
                    Threadblock* target = program.FindThreadblock(dep.m_tb);
                    if (target && dep.m_step >= 0
                        && dep.m_step < static_cast<int>(target->m_steps.size()))
                    {
                        target->m_steps[dep.m_step].m_hasDep = true;
                    }
                }
            }
        }
    }
}

size_t
Schedule::StepCount() const
{
    size_t n = 0;
    for (const auto& program : m_programs)
    {
        for (const auto& tb : program.m_threadblocks)
        {
            n += tb.m_steps.size();
        }
    }
    return n;
}

bool
Schedule::operator==(const Schedule& o) const
{
    return m_name == o.m_name && m_collective == o.m_collective && m_ranks == o.m_ranks
           && m_chunksPerLoop == o.m_chunksPerLoop && m_inPlace == o.m_inPlace
           && m_outOfPlace == o.m_outOfPlace && m_protocol == o.m_protocol
           && m_channels == o.m_channels && m_root == o.m_root && m_attributes == o.m_attributes
           && m_programs == o.m_programs;
}

} // namespace fabricsim
