/*
 * The executor's and the analytical backend's tunables as typed ns-3 attributes, so they can be
 * set like every other model parameter: in a scenario's "attributes" object, with
 * --ns3::CollectiveExecutor::SliceSize=... on the command line, or through Config.
 */
#ifndef FABRICSIM_EXECUTOR_ATTRIBUTES_H
#define FABRICSIM_EXECUTOR_ATTRIBUTES_H

#include "executor.h"

#include "ns3/data-rate.h"
#include "ns3/nstime.h"
#include "ns3/object.h"

namespace ns3
{

/**
 * \brief Attribute holder for fabricsim::ExecutorConfig (the executor itself is pure C++).
 *
 * Attributes: MaxChunkSize, SliceSize, Slots, StepLatency, LaunchLatency, MemoryBandwidth,
 * Protocol.
 */
class CollectiveExecutor : public Object
{
  public:
    static TypeId GetTypeId();
    CollectiveExecutor();

    /// The configuration these attribute values describe.
    fabricsim::ExecutorConfig GetConfig() const;

  private:
    uint64_t m_maxChunkBytes;
    uint64_t m_sliceBytes;
    uint32_t m_slots;
    Time m_stepLatency;
    Time m_launchLatency;
    DataRate m_memoryBandwidth;
    int m_protocol; ///< -1 = the schedule's, else a fabricsim::Protocol
};

/**
 * \brief Attribute holder for the analytical backend's latency terms.
 *
 * Attributes: MessageOverhead.
 */
class AnalyticalBackend : public Object
{
  public:
    static TypeId GetTypeId();
    AnalyticalBackend();

    Time GetMessageOverhead() const
    {
        return m_messageOverhead;
    }

  private:
    Time m_messageOverhead;
};

/// ExecutorConfig from the current attribute defaults of ns3::CollectiveExecutor.
fabricsim::ExecutorConfig ExecutorConfigFromAttributes();

/// Per-message overhead (ps) from the current attribute default of ns3::AnalyticalBackend.
int64_t AnalyticalOverheadFromAttributes();

} // namespace ns3

#endif
