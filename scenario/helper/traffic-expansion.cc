#include "traffic-expansion.h"

#include "input-error.h"
#include "memory-limit.h"

#include "ns3/random-variable-stream.h"

#include <algorithm>
#include <string>

namespace fabricsim
{

using namespace ns3;

namespace
{

double
SampleCdf(const std::vector<std::pair<double, double>>& cdf, double pct)
{
    for (size_t i = 1; i < cdf.size(); ++i)
    {
        if (pct <= cdf[i].second)
        {
            double span = cdf[i].second - cdf[i - 1].second;
            double f = span > 0 ? (pct - cdf[i - 1].second) / span : 1.0;
            return cdf[i - 1].first + f * (cdf[i].first - cdf[i - 1].first);
        }
    }
    return cdf.back().first;
}

uint64_t
HostRateBps(const FabricTopologyHelper& fabric, uint32_t host)
{
    return fabric.GetNic(host, 0)->GetRateBps();
}

} // namespace

/// Memory a flow takes for the whole run (spec, queue pair, application, FCT record): 3.1 kB
/// measured on the hpcc-eval small runs (548 and 7 926 flows), rounded up.
constexpr double kBytesPerFlow = 4096;

/**
 * Refuses, before anything is materialised, traffic whose flows would not fit the memory limit
 * (a flood of 1-byte Poisson flows grew at 400 MB/s until the machine ran out): the expected
 * flow count of each generator, from its load, duration and the hosts' link rates.
 */
void
CheckTrafficFitsMemory(const FabricScenario& sc, const FabricTopologyHelper& fabric)
{
    const double limit = double(MemoryLimitBytes());
    const double maxFlows = limit / kBytesPerFlow;
    double flows = double(sc.flows.size());
    auto fail = [&](const std::string& field, double expected, const std::string& how)
    {
        throw InputError(sc.file,
                         field,
                         "traffic whose flows fit the memory limit of " + DescribeBytes(limit)
                             + " (--memory-limit; about " + std::to_string(uint64_t(maxFlows))
                             + " flows of 4 kB)",
                         "about " + std::to_string(uint64_t(expected)) + " flows (" + how + ", "
                             + DescribeBytes(expected * kBytesPerFlow) + ")");
    };
    for (size_t i = 0; i < sc.poisson.size(); ++i)
    {
        const PoissonSpec& ps = sc.poisson[i];
        const std::string field = "traffic.poisson[" + std::to_string(i) + "]";
        const double mean = CdfMean(LoadFlowCdf(ps.cdfPath, {sc.file, field + ".cdf"}));
        double n = 0;
        const uint32_t hosts = ps.hosts.empty() ? sc.topology.NumHosts() : ps.hosts.size();
        for (uint32_t k = 0; k < hosts; ++k)
        {
            const uint32_t h = ps.hosts.empty() ? k : ps.hosts[k];
            n += double(HostRateBps(fabric, h)) * ps.load * double(ps.durationNs) * 1e-9
                 / (8.0 * std::max(mean, 1.0));
        }
        flows += n;
        if (flows > maxFlows)
        {
            fail(field + ".load", n, "load and duration_ns over the CDF's mean size");
        }
    }
    for (size_t i = 0; i < sc.incasts.size(); ++i)
    {
        const IncastSpec& is = sc.incasts[i];
        double rounds = 1;
        if (is.load > 0)
        {
            const double bytes = double(is.sizeBytes) * double(is.senders.size());
            rounds = double(HostRateBps(fabric, is.receiver)) * is.load * double(is.durationNs)
                     * 1e-9 / (8.0 * bytes);
        }
        const double n = rounds * double(is.senders.size());
        flows += n;
        if (flows > maxFlows)
        {
            fail("traffic.incast[" + std::to_string(i) + "].load", n, "rounds of its senders");
        }
    }
}

std::vector<FlowSpec>
ExpandTraffic(const FabricScenario& sc, const FabricTopologyHelper& fabric)
{
    CheckTrafficFitsMemory(sc, fabric);
    std::vector<FlowSpec> flows = sc.flows;
    int64_t stream = 100;
    for (size_t i = 0; i < sc.poisson.size(); ++i)
    {
        const PoissonSpec& ps = sc.poisson[i];
        auto cdf
            = LoadFlowCdf(ps.cdfPath, {sc.file, "traffic.poisson[" + std::to_string(i) + "].cdf"});
        double mean = CdfMean(cdf);
        std::vector<uint32_t> hosts = ps.hosts;
        if (hosts.empty())
        {
            for (uint32_t h = 0; h < sc.topology.NumHosts(); ++h)
            {
                hosts.push_back(h);
            }
        }
        if (hosts.size() < 2)
        {
            throw InputError(
                sc.file, "traffic.poisson.hosts", "at least 2 hosts", std::to_string(hosts.size()));
        }
        auto gap = CreateObject<ExponentialRandomVariable>();
        auto uni = CreateObject<UniformRandomVariable>();
        gap->SetStream(stream++);
        uni->SetStream(stream++);
        for (uint32_t h : hosts)
        {
            // load = payload bytes / capacity: mean gap = mean size * 8 / (rate * load)
            double meanGapNs = mean * 8.0 / (double(HostRateBps(fabric, h)) * ps.load) * 1e9;
            double t = double(ps.startNs);
            while (true)
            {
                t += gap->GetValue(meanGapNs, 0);
                if (t >= double(ps.startNs + ps.durationNs))
                {
                    break;
                }
                FlowSpec f;
                f.src = h;
                do
                {
                    f.dst = hosts[uni->GetInteger(0, uint32_t(hosts.size() - 1))];
                } while (f.dst == h);
                f.sizeBytes
                    = std::max<uint64_t>(1, uint64_t(SampleCdf(cdf, uni->GetValue(0, 100))));
                f.startNs = uint64_t(t);
                f.priority = sc.transport.priority;
                f.tag = "poisson";
                flows.push_back(f);
            }
        }
    }
    for (const IncastSpec& is : sc.incasts)
    {
        std::vector<uint64_t> starts;
        if (is.load > 0)
        {
            auto gap = CreateObject<ExponentialRandomVariable>();
            gap->SetStream(stream++);
            double bytes = double(is.sizeBytes) * double(is.senders.size());
            double meanGapNs
                = bytes * 8.0 / (double(HostRateBps(fabric, is.receiver)) * is.load) * 1e9;
            double t = double(is.startNs);
            while (true)
            {
                t += gap->GetValue(meanGapNs, 0);
                if (t >= double(is.startNs + is.durationNs))
                {
                    break;
                }
                starts.push_back(uint64_t(t));
            }
        }
        else
        {
            starts.push_back(is.startNs);
        }
        for (uint64_t st : starts)
        {
            for (uint32_t s : is.senders)
            {
                FlowSpec f;
                f.src = s;
                f.dst = is.receiver;
                f.sizeBytes = is.sizeBytes;
                f.startNs = st;
                f.priority = sc.transport.priority;
                f.tag = "incast";
                flows.push_back(f);
            }
        }
    }
    std::stable_sort(flows.begin(),
                     flows.end(),
                     [](const FlowSpec& a, const FlowSpec& b) { return a.startNs < b.startNs; });
    return flows;
}

} // namespace fabricsim
