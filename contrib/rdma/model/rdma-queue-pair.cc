#include "rdma-queue-pair.h"

#include "rdma-nic.h"

#include "ns3/abort.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RdmaQueuePair);

TypeId
RdmaQueuePair::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::RdmaQueuePair")
              .SetParent<Object>()
              .SetGroupName("Rdma")
              .AddTraceSource("MessageComplete",
                              "A posted WRITE was fully acknowledged: id, bytes, time posted.",
                              MakeTraceSourceAccessor(&RdmaQueuePair::m_msgCompleteTrace),
                              "ns3::RdmaQueuePair::MessageCompleteCallback")
              .AddTraceSource("Failed",
                              "The retry limit was exhausted and the QP stopped: its qpn.",
                              MakeTraceSourceAccessor(&RdmaQueuePair::m_failedTrace),
                              "ns3::RdmaQueuePair::FailedCallback");
    return tid;
}

RdmaQueuePair::RdmaQueuePair()
{
}

uint64_t
RdmaQueuePair::PostWrite(uint64_t bytes, Callback<void, uint64_t> onAcked)
{
    NS_ABORT_MSG_IF(bytes == 0, "RdmaQueuePair::PostWrite: zero-byte message");
    RdmaMessage m;
    m.id = m_nextMsgId++;
    m.bytes = bytes;
    m.startPsn = m_psnEnd;
    uint64_t packets = (bytes + m_mtu - 1) / m_mtu;
    NS_ABORT_MSG_IF(uint64_t(m_psnEnd) + packets > 0xffffffffULL,
                    "RdmaQueuePair: PSN space exhausted");
    m.endPsn = m_psnEnd + uint32_t(packets);
    m.posted = Simulator::Now();
    m.onAcked = onAcked;
    m_psnEnd = m.endPsn;
    m_msgs.push_back(m);
    m_nic->Activate(this);
    return m.id;
}

uint64_t
RdmaQueuePair::PendingBytes() const
{
    uint64_t b = 0;
    for (auto& m : m_msgs)
    {
        b += m.bytes;
    }
    return b;
}

const RdmaRxQueuePair&
RdmaQueuePair::GetReceiver() const
{
    return m_remoteNic->GetRxQueuePairs().at(m_remoteQpn - RdmaNic::kFirstQpn);
}

void
RdmaQueuePair::SkipHeld()
{
    m_retxNext = std::max(m_retxNext, m_sndUna);
    while (m_retxNext < m_retxEnd && m_sacked.count(m_retxNext))
    {
        ++m_retxNext;
    }
}

} // namespace ns3
