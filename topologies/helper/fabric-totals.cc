#include "fabric-totals.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace ns3
{

namespace
{

using Field = uint64_t FabricTotals::*;

/// The counters a part sums, by name (every FabricTotals field but the queue figures).
const std::vector<std::pair<const char*, Field>>&
SummedFields()
{
    static const std::vector<std::pair<const char*, Field>> fields = {
        {"drops_total", &FabricTotals::dropsTotal},
        {"pfc_pause_sent", &FabricTotals::pfcPauseSent},
        {"pfc_resume_sent", &FabricTotals::pfcResumeSent},
        {"pfc_pause_received", &FabricTotals::pfcPauseReceived},
        {"pfc_resume_received", &FabricTotals::pfcResumeReceived},
        {"ecn_marked", &FabricTotals::ecnMarked},
        {"cnps_sent", &FabricTotals::cnpsSent},
        {"cnps_received", &FabricTotals::cnpsReceived},
        {"nacks_sent", &FabricTotals::nacksSent},
        {"nacks_received", &FabricTotals::nacksReceived},
        {"retransmitted_packets", &FabricTotals::retransmittedPackets},
        {"retransmitted_bytes", &FabricTotals::retransmittedBytes},
        {"timeouts", &FabricTotals::timeouts},
        {"out_of_order_buffered", &FabricTotals::outOfOrderBuffered},
        {"qp_failures", &FabricTotals::qpFailures},
        {"sent_frames", &FabricTotals::sentFrames},
        {"delivered_frames", &FabricTotals::deliveredFrames},
        {"dropped_frames", &FabricTotals::droppedFrames},
        {"in_flight_frames", &FabricTotals::inFlightFrames},
        {"sent_bytes", &FabricTotals::sentBytes},
        {"delivered_bytes", &FabricTotals::deliveredBytes},
        {"dropped_bytes", &FabricTotals::droppedBytes},
        {"in_flight_bytes", &FabricTotals::inFlightBytes},
    };
    return fields;
}

} // namespace

nlohmann::json
FabricTotals::ToJson() const
{
    nlohmann::json j;
    j["drops"] = {{"total", dropsTotal}, {"by_reason", dropsByReason}};
    j["pfc"] = {{"pause_frames_sent", pfcPauseSent},
                {"resume_frames_sent", pfcResumeSent},
                {"pause_frames_received", pfcPauseReceived},
                {"resume_frames_received", pfcResumeReceived}};
    j["queue"] = {
        {"max_bytes", maxQueueBytes}, {"p95_bytes", p95QueueBytes}, {"p99_bytes", p99QueueBytes}};
    j["nic"] = {{"ecn_marked", ecnMarked},
                {"cnps_sent", cnpsSent},
                {"cnps_received", cnpsReceived},
                {"nacks_sent", nacksSent},
                {"nacks_received", nacksReceived},
                {"retransmitted_packets", retransmittedPackets},
                {"retransmitted_bytes", retransmittedBytes},
                {"timeouts", timeouts},
                {"out_of_order_buffered", outOfOrderBuffered},
                {"qp_failures", qpFailures}};
    j["conservation"] = {{"sent_frames", sentFrames},
                         {"delivered_frames", deliveredFrames},
                         {"dropped_frames", droppedFrames},
                         {"in_flight_frames", inFlightFrames},
                         {"sent_bytes", sentBytes},
                         {"delivered_bytes", deliveredBytes},
                         {"dropped_bytes", droppedBytes},
                         {"in_flight_bytes", inFlightBytes},
                         {"ok", Conserved()}};
    return j;
}

void
FabricTotalsPart::Merge(const FabricTotalsPart& o)
{
    for (const auto& [name, field] : SummedFields())
    {
        sums.*field += o.sums.*field;
    }
    for (const auto& [reason, n] : o.sums.dropsByReason)
    {
        sums.dropsByReason[reason] += n;
    }
    sums.maxQueueBytes = std::max(sums.maxQueueBytes, o.sums.maxQueueBytes);
    queues.Merge(o.queues);
    remoteSentFrames += o.remoteSentFrames;
    remoteReceivedFrames += o.remoteReceivedFrames;
    remoteSentBytes += o.remoteSentBytes;
    remoteReceivedBytes += o.remoteReceivedBytes;
}

FabricTotals
FabricTotalsPart::Finish() const
{
    FabricTotals t = sums;
    // Summed over every rank, each frame between ranks was sent once and received at most once.
    t.inFlightFrames += remoteSentFrames - remoteReceivedFrames;
    t.inFlightBytes += remoteSentBytes - remoteReceivedBytes;
    t.p99QueueBytes = queues.Quantile(0.99);
    t.p95QueueBytes = queues.Quantile(0.95);
    return t;
}

nlohmann::json
FabricTotalsPart::ToJson() const
{
    nlohmann::json j;
    for (const auto& [name, field] : SummedFields())
    {
        j[name] = sums.*field;
    }
    j["drops_by_reason"] = sums.dropsByReason;
    j["max_queue_bytes"] = sums.maxQueueBytes;
    j["queue_bins"] = queues.NonEmptyBins();
    j["remote"] = {remoteSentFrames, remoteReceivedFrames, remoteSentBytes, remoteReceivedBytes};
    return j;
}

FabricTotalsPart
FabricTotalsPart::FromJson(const nlohmann::json& j)
{
    FabricTotalsPart p;
    for (const auto& [name, field] : SummedFields())
    {
        p.sums.*field = j.at(name).get<uint64_t>();
    }
    p.sums.dropsByReason = j.at("drops_by_reason").get<std::map<std::string, uint64_t>>();
    p.sums.maxQueueBytes = j.at("max_queue_bytes").get<uint64_t>();
    p.queues.AddBins(j.at("queue_bins").get<std::vector<std::pair<uint32_t, uint64_t>>>());
    const auto r = j.at("remote").get<std::vector<uint64_t>>();
    p.remoteSentFrames = r.at(0);
    p.remoteReceivedFrames = r.at(1);
    p.remoteSentBytes = r.at(2);
    p.remoteReceivedBytes = r.at(3);
    return p;
}

} // namespace ns3
