/*
 * Installs a fabricsim::Topology as ns-3 nodes: RoCE NIC ports on hosts, shared-buffer switches,
 * full-duplex links, and route tables from BFS next-hop sets. Also answers path questions
 * (base RTT, bottleneck rate) and opens queue pairs along the routed first hop.
 */
#ifndef FABRICSIM_FABRIC_TOPOLOGY_HELPER_H
#define FABRICSIM_FABRIC_TOPOLOGY_HELPER_H

#include "forwarding-loops.h"
#include "topology.h"

#include "ns3/fabric-module.h"
#include "ns3/node-container.h"
#include "ns3/object-factory.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ns3
{

/// ECN RED thresholds; with refRateBps > 0 they scale linearly with each port's rate.
struct EcnConfig
{
    bool enabled = true;
    uint64_t kminBytes = 100000;
    uint64_t kmaxBytes = 400000;
    double pmax = 0.2;
    uint64_t refRateBps = 25000000000ULL; ///< thresholds given per this rate (0 = absolute)
};

/**
 * \brief What a collective among some hosts can touch, for the collective memo
 * (link-memo.h): every switch on a route among them (whole, since its buffer is shared), every
 * link on such a route or at such a switch, and the ports at those links' ends that belong to
 * no such switch (the hosts' NICs, neighbouring switches' ports). Ordered by topology id.
 */
struct MemoScope
{
    std::vector<Ptr<FabricSwitch>> switches;
    std::vector<Ptr<FabricChannel>> links;
    std::vector<Ptr<FabricNetDevice>> devices;
};

class FabricTopologyHelper
{
  public:
    explicit FabricTopologyHelper(const fabricsim::Topology& topo);
    ~FabricTopologyHelper();

    /// Attributes applied to every NIC port / switch port / MMU / switch / link created.
    void SetNicAttribute(const std::string& name, const AttributeValue& v);
    void SetSwitchPortAttribute(const std::string& name, const AttributeValue& v);
    void SetMmuAttribute(const std::string& name, const AttributeValue& v);
    void SetSwitchAttribute(const std::string& name, const AttributeValue& v);
    void SetEcn(const EcnConfig& ecn);
    /// RDMA payload bytes per frame.
    void SetMtu(uint32_t mtu);
    /// Before Install: node i (topology id) is simulated by MPI rank systemIds[i] (ns-3's
    /// system id; topologies/partition.h). Default: all 0.
    void SetSystemIds(const std::vector<uint32_t>& systemIds);

    /// Create nodes, devices, channels and routes. Call once.
    void Install();

    /// Assign random streams (links with loss, ECN marking) starting at `stream`.
    int64_t AssignStreams(int64_t stream);

    const fabricsim::Topology& GetTopology() const
    {
        return m_topo;
    }

    uint32_t NumHosts() const
    {
        return m_topo.NumHosts();
    }

    Ptr<Node> GetNode(uint32_t topoNodeId) const;
    Ptr<Node> GetHostNode(uint32_t host) const;
    /// NIC port `port` of host `host` (ports in link order).
    Ptr<RdmaNic> GetNic(uint32_t host, uint32_t port = 0) const;
    std::vector<Ptr<RdmaNic>> GetAllNics() const;
    std::vector<Ptr<FabricSwitch>> GetAllSwitches() const;
    Ptr<FabricSwitch> GetSwitch(uint32_t topoNodeId) const;
    Ptr<FabricChannel> GetLink(uint32_t linkId) const;

    /// The host's NIC port on a shortest path to `dst` (ECMP among several by `sport`).
    Ptr<RdmaNic> NicToward(uint32_t src, uint32_t dst, uint16_t sport) const;

    /**
     * Base RTT of the path src -> dst: per hop, propagation both ways plus the serialisation
     * of one full data frame and one ACK.
     */
    Time BaseRtt(uint32_t src, uint32_t dst) const;
    /// Lowest link rate on the path src -> dst.
    uint64_t BottleneckBps(uint32_t src, uint32_t dst) const;
    /// Bytes a message of `payload` bytes occupies on the wire (headers, preamble, IFG).
    uint64_t WireBytes(uint64_t payload) const;
    /// base RTT + wire bytes / bottleneck rate.
    Time IdealFct(uint32_t src, uint32_t dst, uint64_t payload) const;

    /// Open a QP from src to dst on the routed first hop, with CC from `cc`.
    Ptr<RdmaQueuePair> Connect(uint32_t src,
                               uint32_t dst,
                               uint8_t priority,
                               uint16_t sport,
                               const ObjectFactory& cc,
                               Callback<void, uint64_t> onDelivered = Callback<void, uint64_t>());

    /**
     * Route frames of switch `node` toward host `dstHost` through `ports` only (ECMP among
     * them), replacing the shortest-path next hops: non-minimal routes, e.g. the cyclic routes
     * of a PFC deadlock study. Kept when routes are recomputed after a link change.
     */
    void SetRouteOverride(uint32_t node, uint32_t dstHost, const std::vector<uint16_t>& ports);

    /// Take a link down (or up) at time `at`; routes are recomputed then.
    void ScheduleLinkState(uint32_t linkId, Time at, bool up);

    /// Capture every frame of a host's NIC ports / a switch's ports to `dir`/<name>-<port>.pcap.
    void EnablePcapHost(uint32_t host, const std::string& dir);
    void EnablePcapSwitch(uint32_t topoNodeId, const std::string& dir);

    const fabricsim::Routing& GetRouting() const;

    /// The memo's scope of a collective among \p hosts (every equal-cost route followed).
    MemoScope GetMemoScope(const std::vector<uint32_t>& hosts) const;

    /// Bumped each time the routes change (a link going down or up): scopes and cached
    /// outcomes from before no longer hold.
    uint64_t GetRouteEpoch() const
    {
        return m_routeEpoch;
    }

    /// Forwarding loops that link events created through the route overrides, with the time
    /// of each (a loop present at setup is the scenario's to refuse; these arise later).
    const std::vector<std::pair<Time, fabricsim::ForwardingLoop>>& GetForwardingLoops() const
    {
        return m_loops;
    }

  private:
    void SetLinkState(uint32_t linkId, bool up);
    void InstallRoutes();
    /// Hand the switches a route table over m_routing (and the overrides, if any).
    void PublishRoutes();

    fabricsim::Topology m_topo;
    std::vector<bool> m_linkDown;
    std::shared_ptr<fabricsim::Routing> m_routing;
    /// (node, destination host) -> forced next-hop ports
    fabricsim::RouteOverrides m_routeOverrides;
    Ptr<FabricRouteTable> m_table; ///< what the switches forward by
    uint64_t m_routeEpoch = 0;
    std::vector<std::pair<Time, fabricsim::ForwardingLoop>> m_loops;
    ObjectFactory m_nicFactory;
    ObjectFactory m_portFactory;
    ObjectFactory m_mmuFactory;
    ObjectFactory m_switchFactory;
    EcnConfig m_ecn;
    uint32_t m_mtu;
    uint64_t m_nicRateBps;
    NodeContainer m_nodes;
    std::vector<uint32_t> m_systemIds;                      ///< SetSystemIds (empty: all 0)
    std::vector<std::vector<Ptr<FabricNetDevice>>> m_ports; ///< per topology node
    std::vector<Ptr<FabricChannel>> m_links;
    std::vector<Ptr<FabricSwitch>> m_switches; ///< per topology node (null for hosts)
    bool m_installed;
};

} // namespace ns3

#endif
