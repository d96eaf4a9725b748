/*
 * Topology graph: nodes (hosts = traffic endpoints, switches) and full-duplex links, built from a
 * JSON description or imported from the HPCC topology-file format. Pure C++ (no ns-3): the
 * helpers in contrib/ turn a Topology into ns-3 nodes and devices.
 */
#ifndef FABRICSIM_TOPOLOGY_H
#define FABRICSIM_TOPOLOGY_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace fabricsim
{

enum class NodeKind : uint8_t
{
    Host,  ///< traffic endpoint (a NIC port owner: host or accelerator); never forwards
    Switch ///< forwards packets (ToR, spine, rail switch, scale-up switch, router)
};

struct TopoNode
{
    NodeKind kind = NodeKind::Switch;
    std::string name;        ///< e.g. "host12", "tor3", "spine1", "nvsw0"
    uint32_t hostIndex = 0;  ///< for hosts: index in builder order (0..numHosts-1)
    uint32_t group = 0;      ///< for hosts: machine/server id (accelerators of one server share it)
    uint32_t localIndex = 0; ///< for hosts: index inside the group (accelerator/rail index)
    uint32_t tier = 0;       ///< for switches: 0 = edge/ToR/rail/scale-up, 1 = agg/spine, 2 = core
    bool scaleUp = false;    ///< for switches: a scale-up (NVSwitch-like) switch
};

struct LinkSpec
{
    double rateBps = 100e9;     ///< bits per second
    uint64_t delayPs = 1000000; ///< propagation delay in picoseconds (1 us)
    double lossRate = 0.0;      ///< per-packet loss probability
};

struct TopoLink
{
    uint32_t a = 0; ///< node id
    uint32_t b = 0; ///< node id
    LinkSpec spec;
};

struct Topology
{
    std::string type;            ///< builder name ("leaf-spine", "fat-tree", ...)
    std::vector<TopoNode> nodes; ///< node id = index
    std::vector<TopoLink> links; ///< link id = index
    std::vector<uint32_t> hosts; ///< host index -> node id
    /// The spec said `"scale_up": "none"`: a server's accelerators share no scale-up link on
    /// purpose (their traffic crosses the NICs), not by omission.
    bool scaleUpDeclined = false;

    uint32_t NumHosts() const
    {
        return static_cast<uint32_t>(hosts.size());
    }

    /// Append a host (hostIndex = current host count); returns its node id.
    uint32_t AddHost(const std::string& name, uint32_t group, uint32_t localIndex = 0);

    /// Append a switch; returns its node id.
    uint32_t AddSwitch(const std::string& name, uint32_t tier, bool scaleUp = false);

    /// Append a full-duplex link between two distinct nodes; returns its link id.
    uint32_t AddLink(uint32_t a, uint32_t b, const LinkSpec& spec);

    /// Node id of the node called `name`, or UINT32_MAX (linear search: for tests and tools).
    uint32_t FindNode(const std::string& name) const;
};

/// The topology types BuildTopology accepts (the "type" key), in documentation order.
std::vector<std::string> TopologyTypes();

/**
 * Check that every host can reach every other host without forwarding through a host.
 * \throws fabricsim::InputError(file, "topology", "a connected topology", "disconnected topology:
 * host X cannot reach host Y") otherwise
 */
void CheckConnected(const Topology& topo, const std::string& file);

/**
 * Build a topology from its JSON description (the scenario's "topology" object).
 * \param spec the JSON object
 * \param file the file name used in error messages
 * \throws fabricsim::InputError naming file, field, expected and found on bad input (unknown type,
 *         unknown key, wrong type, out-of-range values, disconnected result)
 *
 * Relative paths inside the description ("hpcc-file" "path") are resolved against the
 * directory of `file`.
 */
Topology BuildTopology(const nlohmann::json& spec, const std::string& file);

/**
 * As BuildTopology(spec, file), resolving relative paths against `baseDir` instead.
 */
Topology BuildTopology(const nlohmann::json& spec,
                       const std::string& file,
                       const std::string& baseDir);

/**
 * Import the HPCC simulator topology-file format:
 * line 1 "nodes switches links", line 2 the switch ids, then "src dst rate delay error_rate"
 * per link (rate like 100Gbps, delay like 0.001ms or 1us).
 */
Topology ParseHpccTopology(std::istream& in, const std::string& file);

/**
 * Per-node next-hop sets per destination host, computed by BFS from each destination
 * (hosts never forward). Memory: one uint16 set id per (node, destination host) plus a small
 * deduplicated table of port sets per node, so a 10,000-host fat-tree builds in seconds.
 *
 * Destinations whose set of attached nodes is identical (the hosts of one ToR) share every
 * route except at the attached nodes themselves, so one BFS runs per distinct attachment set
 * (a "destination group"), and the set id is stored per (node, destination group); the attached
 * nodes keep a per-host set id.
 *
 * Ports are numbered per node in the order the node appears in Topology::links (the k-th link
 * touching node n is port k of n); PortPeer gives the far end.
 */
class Routing
{
  public:
    /// Compute routes; links whose id is set in linkDown are ignored.
    Routing(const Topology& topo, const std::vector<bool>& linkDown = {});

    /// Next-hop ports of node `node` toward host `dstHost` (empty if unreachable).
    const std::vector<uint16_t>& NextHops(uint32_t node, uint32_t dstHost) const;

    /// Number of ports of a node.
    uint32_t NumPorts(uint32_t node) const;

    /// Link id behind port `port` of node `node`.
    uint32_t PortLink(uint32_t node, uint32_t port) const;

    /// Node at the far end of port `port` of node `node`.
    uint32_t PortPeer(uint32_t node, uint32_t port) const;

    /// Hop count (links) from host a to host b along shortest paths; UINT32_MAX if unreachable.
    uint32_t HopCount(uint32_t srcHost, uint32_t dstHost) const;

    /// True when every host can reach every other host.
    bool AllReachable() const;

    /// One shortest path from host a to host b as link ids in order (first next hop each time).
    std::vector<uint32_t> Path(uint32_t srcHost, uint32_t dstHost) const;

    /// Number of distinct destination groups (one BFS each).
    uint32_t NumDestinationGroups() const
    {
        return m_numGroups;
    }

  private:
    /// A node attached to a destination host and its set id toward that host.
    struct Attach
    {
        uint32_t node;
        uint16_t set;
    };

    uint32_t m_numNodes = 0;
    uint32_t m_numGroups = 0;
    std::vector<uint32_t> m_portStart;   ///< CSR offsets into m_portLink/m_portPeer, per node
    std::vector<uint32_t> m_portLink;    ///< link id per (node, port)
    std::vector<uint32_t> m_portPeer;    ///< far-end node per (node, port)
    std::vector<uint32_t> m_hostNode;    ///< host index -> node id
    std::vector<uint32_t> m_hostGroup;   ///< host index -> destination group
    std::vector<uint32_t> m_attachStart; ///< CSR offsets into m_attach, per host
    std::vector<Attach> m_attach;        ///< attached nodes of each destination host
    std::vector<uint16_t> m_table;       ///< set id at [group * m_numNodes + node]
    std::vector<std::vector<std::vector<uint16_t>>> m_sets; ///< per node: set id -> ports
    bool m_allReachable = true;
};

} // namespace fabricsim

#endif
