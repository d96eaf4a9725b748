/*
 * Indirect (Clos-family) builders: single switch, leaf-spine, k-ary fat-tree (and the HPCC
 * paper's fat-tree) and rail-optimised accelerator fabrics. Hosts are created first, so a
 * host's node id equals its host index (as in HPCC flow files).
 */
#include "input-error.h"
#include "json-describe.h"
#include "topology-json.h"

namespace fabricsim
{

Topology
BuildSingleSwitch(const JsonObject& spec)
{
    spec.CheckKeys(CommonKeys({"hosts"}));
    const CommonLinks links = ParseCommonLinks(spec);
    const uint32_t n = uint32_t(spec.Uint("hosts", 1, 65535));
    Topology t;
    for (uint32_t i = 0; i < n; ++i)
    {
        t.AddHost("host" + std::to_string(i), i);
    }
    const uint32_t sw = t.AddSwitch("sw0", 0);
    for (uint32_t i = 0; i < n; ++i)
    {
        t.AddLink(t.hosts[i], sw, links.host);
    }
    return t;
}

Topology
BuildLeafSpine(const JsonObject& spec)
{
    spec.CheckKeys(
        CommonKeys({"leaves", "spines", "hosts_per_leaf", "oversubscription", "links_per_spine"}));
    CommonLinks links = ParseCommonLinks(spec);
    const uint32_t leaves = uint32_t(spec.Uint("leaves", 1, 65535));
    const uint32_t spines = uint32_t(spec.Uint("spines", 1, 65535));
    const uint32_t perLeaf = uint32_t(spec.Uint("hosts_per_leaf", 1, 65535));
    const uint32_t perSpine = uint32_t(spec.OptionalUint("links_per_spine", 1, 1, 1024));
    if (spec.Has("oversubscription"))
    {
        const auto& v = spec.Json().at("oversubscription");
        if (!v.is_number() || !(v.get<double>() > 0))
        {
            throw fabricsim::InputError(spec.File(),
                                        spec.Field("oversubscription"),
                                        "a positive ratio (downlink / uplink capacity, e.g. 2)",
                                        DescribeJson(v));
        }
        if (spec.Has("fabric_link") && spec.Json().at("fabric_link").contains("rate"))
        {
            throw fabricsim::InputError(spec.File(),
                                        spec.Field("fabric_link.rate"),
                                        "no rate when \"oversubscription\" is given (it sets the "
                                        "uplink rate)",
                                        DescribeJson(spec.Json().at("fabric_link").at("rate")));
        }
        // Oversubscription scales the uplink rate; the number of uplinks stays spines x links.
        // The rate it gives must be one a link may have (as a rate given directly must be):
        // 1e12 gave 0.4 b/s, which ns-3 aborted on.
        const double down = perLeaf * links.host.rateBps;
        const double up = down / (v.get<double>() * spines * perSpine);
        if (!(up >= 1 && up <= 1e15))
        {
            throw fabricsim::InputError(spec.File(),
                                        spec.Field("oversubscription"),
                                        "a ratio giving uplinks from 1bps to 1000Tbps: from "
                                            + DescribeJson(down / (1e15 * spines * perSpine))
                                            + " to " + DescribeJson(down / (spines * perSpine)),
                                        DescribeJson(v));
        }
        links.fabric.rateBps = up;
    }
    Topology t;
    for (uint32_t i = 0; i < leaves * perLeaf; ++i)
    {
        t.AddHost("host" + std::to_string(i), i);
    }
    std::vector<uint32_t> leaf(leaves);
    std::vector<uint32_t> spine(spines);
    for (uint32_t l = 0; l < leaves; ++l)
    {
        leaf[l] = t.AddSwitch("leaf" + std::to_string(l), 0);
    }
    for (uint32_t s = 0; s < spines; ++s)
    {
        spine[s] = t.AddSwitch("spine" + std::to_string(s), 1);
    }
    for (uint32_t i = 0; i < leaves * perLeaf; ++i)
    {
        t.AddLink(t.hosts[i], leaf[i / perLeaf], links.host);
    }
    for (uint32_t l = 0; l < leaves; ++l)
    {
        for (uint32_t s = 0; s < spines; ++s)
        {
            for (uint32_t m = 0; m < perSpine; ++m)
            {
                t.AddLink(leaf[l], spine[s], links.fabric);
            }
        }
    }
    return t;
}

namespace
{

/// The HPCC paper's fat-tree: 5 pods x (4 ToR x 16 hosts + 4 Agg), 16 cores, HPCC's numbering.
Topology
BuildHpccPaperFatTree(const JsonObject& spec)
{
    LinkSpec host;
    host.rateBps = 100e9;
    LinkSpec fabric;
    fabric.rateBps = 400e9;
    if (spec.Has("host_link"))
    {
        host = ParseLinkSpec(spec.Object("host_link"), host);
    }
    if (spec.Has("fabric_link"))
    {
        fabric = ParseLinkSpec(spec.Object("fabric_link"), fabric);
    }
    const uint32_t pods = 5;
    const uint32_t torsPerPod = 4;
    const uint32_t aggsPerPod = 4;
    const uint32_t hostsPerTor = 16;
    const uint32_t coresPerAgg = 4;
    const uint32_t tors = pods * torsPerPod;
    const uint32_t aggs = pods * aggsPerPod;
    const uint32_t cores = aggsPerPod * coresPerAgg;
    Topology t;
    for (uint32_t i = 0; i < tors * hostsPerTor; ++i)
    {
        t.AddHost("host" + std::to_string(i), i);
    }
    std::vector<uint32_t> tor(tors);
    std::vector<uint32_t> agg(aggs);
    std::vector<uint32_t> core(cores);
    for (uint32_t i = 0; i < tors; ++i)
    {
        tor[i] = t.AddSwitch(
            "pod" + std::to_string(i / torsPerPod) + "-tor" + std::to_string(i % torsPerPod), 0);
    }
    for (uint32_t i = 0; i < aggs; ++i)
    {
        agg[i] = t.AddSwitch(
            "pod" + std::to_string(i / aggsPerPod) + "-agg" + std::to_string(i % aggsPerPod), 1);
    }
    for (uint32_t i = 0; i < cores; ++i)
    {
        core[i] = t.AddSwitch("core" + std::to_string(i), 2);
    }
    for (uint32_t i = 0; i < tors * hostsPerTor; ++i)
    {
        t.AddLink(t.hosts[i], tor[i / hostsPerTor], host);
    }
    for (uint32_t i = 0; i < tors; ++i)
    {
        const uint32_t pod = i / torsPerPod;
        for (uint32_t j = 0; j < aggsPerPod; ++j)
        {
            t.AddLink(tor[i], agg[pod * aggsPerPod + j], fabric);
        }
    }
    // Agg j of every pod links cores 4j..4j+3, so each core reaches one agg per pod.
    for (uint32_t i = 0; i < aggs; ++i)
    {
        const uint32_t j = i % aggsPerPod;
        for (uint32_t c = 0; c < coresPerAgg; ++c)
        {
            t.AddLink(agg[i], core[j * coresPerAgg + c], fabric);
        }
    }
    return t;
}

} // namespace

Topology
BuildFatTree(const JsonObject& spec)
{
    spec.CheckKeys(CommonKeys({"k", "variant"}));
    std::string variant = "classic";
    if (spec.Has("variant"))
    {
        const auto& v = spec.Json().at("variant");
        if (!v.is_string()
            || (v.get<std::string>() != "classic" && v.get<std::string>() != "hpcc-paper"))
        {
            throw fabricsim::InputError(spec.File(),
                                        spec.Field("variant"),
                                        "a fat-tree variant (one of: classic, hpcc-paper)",
                                        DescribeJson(v));
        }
        variant = v.get<std::string>();
    }
    if (variant == "hpcc-paper")
    {
        if (spec.Has("k"))
        {
            throw fabricsim::InputError(
                spec.File(),
                spec.Field("k"),
                "no \"k\" with variant \"hpcc-paper\" (its sizes are fixed)",
                DescribeJson(spec.Json().at("k")));
        }
        return BuildHpccPaperFatTree(spec);
    }
    const CommonLinks links = ParseCommonLinks(spec);
    const uint32_t k = uint32_t(spec.Uint("k", 2, 128));
    if (k % 2 != 0)
    {
        throw fabricsim::InputError(
            spec.File(), spec.Field("k"), "an even integer", std::to_string(k));
    }
    const uint32_t half = k / 2;
    const uint32_t hostsPerPod = half * half;
    Topology t;
    for (uint32_t i = 0; i < k * hostsPerPod; ++i)
    {
        t.AddHost("host" + std::to_string(i), i);
    }
    std::vector<uint32_t> edge(k * half);
    std::vector<uint32_t> agg(k * half);
    std::vector<uint32_t> core(half * half);
    for (uint32_t i = 0; i < k * half; ++i)
    {
        edge[i]
            = t.AddSwitch("pod" + std::to_string(i / half) + "-edge" + std::to_string(i % half), 0);
    }
    for (uint32_t i = 0; i < k * half; ++i)
    {
        agg[i]
            = t.AddSwitch("pod" + std::to_string(i / half) + "-agg" + std::to_string(i % half), 1);
    }
    for (uint32_t i = 0; i < half * half; ++i)
    {
        core[i] = t.AddSwitch("core" + std::to_string(i), 2);
    }
    for (uint32_t i = 0; i < k * hostsPerPod; ++i)
    {
        t.AddLink(t.hosts[i], edge[i / half], links.host);
    }
    for (uint32_t e = 0; e < k * half; ++e)
    {
        const uint32_t pod = e / half;
        for (uint32_t a = 0; a < half; ++a)
        {
            t.AddLink(edge[e], agg[pod * half + a], links.fabric);
        }
    }
    // Classic wiring: agg j of every pod links cores j*k/2 .. j*k/2 + k/2 - 1.
    for (uint32_t a = 0; a < k * half; ++a)
    {
        const uint32_t j = a % half;
        for (uint32_t c = 0; c < half; ++c)
        {
            t.AddLink(agg[a], core[j * half + c], links.fabric);
        }
    }
    return t;
}

Topology
BuildRailOptimized(const JsonObject& spec)
{
    spec.CheckKeys(CommonKeys({"servers", "accels_per_server", "spines", "scale_up"}));
    const CommonLinks links = ParseCommonLinks(spec);
    const uint32_t servers = uint32_t(spec.Uint("servers", 1, 65535));
    const uint32_t accels = uint32_t(spec.Uint("accels_per_server", 1, 1024));
    const uint32_t spines = uint32_t(spec.Uint("spines", 0, 65535));
    // "none" says outright that the servers have no scale-up domain (see Topology).
    const nlohmann::json* upSpec = spec.Find("scale_up");
    const bool declined = upSpec && upSpec->is_string() && upSpec->get<std::string>() == "none";
    const bool scaleUp = upSpec && !declined;
    if (scaleUp && !upSpec->is_object())
    {
        throw InputError(spec.File(),
                         spec.Field("scale_up"),
                         "a link object or \"none\"",
                         DescribeJson(*upSpec));
    }
    LinkSpec up;
    up.rateBps = 450e9 * 8; // NVLink-class: 450 GB/s per accelerator per direction
    up.delayPs = 100000;    // 100 ns
    if (scaleUp)
    {
        up = ParseLinkSpec(spec.Object("scale_up"), up);
    }
    Topology t;
    t.scaleUpDeclined = declined;
    for (uint32_t s = 0; s < servers; ++s)
    {
        for (uint32_t a = 0; a < accels; ++a)
        {
            t.AddHost("srv" + std::to_string(s) + "-acc" + std::to_string(a), s, a);
        }
    }
    std::vector<uint32_t> rail(accels);
    std::vector<uint32_t> spine(spines);
    std::vector<uint32_t> nvsw(scaleUp ? servers : 0);
    for (uint32_t a = 0; a < accels; ++a)
    {
        rail[a] = t.AddSwitch("rail" + std::to_string(a), 0);
    }
    for (uint32_t p = 0; p < spines; ++p)
    {
        spine[p] = t.AddSwitch("spine" + std::to_string(p), 1);
    }
    for (uint32_t s = 0; s < nvsw.size(); ++s)
    {
        nvsw[s] = t.AddSwitch("nvsw" + std::to_string(s), 0, true);
    }
    // Link order fixes port numbers: an accelerator's port 0 is its NIC, port 1 its scale-up.
    for (uint32_t h = 0; h < servers * accels; ++h)
    {
        t.AddLink(t.hosts[h], rail[h % accels], links.host);
    }
    for (uint32_t a = 0; a < accels; ++a)
    {
        for (uint32_t p = 0; p < spines; ++p)
        {
            t.AddLink(rail[a], spine[p], links.fabric);
        }
    }
    for (uint32_t h = 0; h < nvsw.size() * accels; ++h)
    {
        t.AddLink(t.hosts[h], nvsw[h / accels], up);
    }
    return t;
}

} // namespace fabricsim
