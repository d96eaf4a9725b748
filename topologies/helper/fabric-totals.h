/*
 * A fabric run's end-of-run totals (drops by reason, PFC frames, queue max and quantiles, NIC
 * loss-recovery counters, frame conservation), and one rank's share of them in a run across MPI
 * ranks: its own nodes' counters and its copies of the links, merged with the other ranks'
 * shares before the quantiles are read.
 */
#ifndef FABRICSIM_FABRIC_TOTALS_H
#define FABRICSIM_FABRIC_TOTALS_H

#include "ns3/fabric-switch.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>

namespace ns3
{

struct FabricTotals
{
    std::map<std::string, uint64_t> dropsByReason; ///< all DropReason names, zeros included
    uint64_t dropsTotal = 0;
    uint64_t pfcPauseSent = 0;
    uint64_t pfcResumeSent = 0;
    uint64_t pfcPauseReceived = 0;
    uint64_t pfcResumeReceived = 0;
    uint64_t maxQueueBytes = 0;
    uint64_t p99QueueBytes = 0;
    uint64_t p95QueueBytes = 0;
    uint64_t ecnMarked = 0;
    uint64_t cnpsSent = 0;
    uint64_t cnpsReceived = 0;
    uint64_t nacksSent = 0;
    uint64_t nacksReceived = 0;
    uint64_t retransmittedPackets = 0;
    uint64_t retransmittedBytes = 0;
    uint64_t timeouts = 0;
    uint64_t outOfOrderBuffered = 0;
    uint64_t qpFailures = 0;
    // end-to-end conservation of non-PFC frames (PFC frames are hop-local)
    uint64_t sentFrames = 0;
    uint64_t deliveredFrames = 0;
    uint64_t droppedFrames = 0;
    uint64_t inFlightFrames = 0;
    uint64_t sentBytes = 0;
    uint64_t deliveredBytes = 0;
    uint64_t droppedBytes = 0;
    uint64_t inFlightBytes = 0;

    bool Conserved() const
    {
        return sentFrames == deliveredFrames + droppedFrames + inFlightFrames
               && sentBytes == deliveredBytes + droppedBytes + inFlightBytes;
    }

    nlohmann::json ToJson() const;
};

/**
 * One rank's share: the sums and the largest queue of its nodes, its switches' queue
 * histograms, and the non-PFC frames and bytes its copies of cut links sent to and received
 * from other ranks (what one rank sent and none received yet was on the wire at the end). On one
 * process the share is the whole. Merge adds shares; Finish reads the quantiles and counts the
 * frames between ranks as in flight.
 */
struct FabricTotalsPart
{
    FabricTotals sums; ///< quantiles unset
    QueueHistogram queues;
    uint64_t remoteSentFrames = 0;
    uint64_t remoteReceivedFrames = 0;
    uint64_t remoteSentBytes = 0;
    uint64_t remoteReceivedBytes = 0;

    void Merge(const FabricTotalsPart& o);
    FabricTotals Finish() const;

    /// Every field, for MPI; FromJson(ToJson()) gives the part back.
    nlohmann::json ToJson() const;
    static FabricTotalsPart FromJson(const nlohmann::json& j);
};

} // namespace ns3

#endif
