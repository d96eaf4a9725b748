#include "nccl-tuner.h"

#include "input-error.h"

#include <algorithm>
#include <sstream>

namespace fabricsim
{

double
TunerConfig::StepScale(Protocol p) const
{
    switch (p)
    {
    case Protocol::kLL:
        return llStepScale;
    case Protocol::kLL128:
        return ll128StepScale;
    case Protocol::kSimple:
        break;
    }
    return 1.0;
}

namespace
{

struct ProtocolLatency
{
    double base;
    double perStep;
};

ProtocolLatency
NcclRingLatency(Protocol p)
{
    using namespace nccl_latency;
    switch (p)
    {
    case Protocol::kLL:
        return {kLLBase, kLLStep};
    case Protocol::kLL128:
        return {kLL128Base, kLL128Step};
    case Protocol::kSimple:
        break;
    }
    return {kSimpleBase, kSimpleStep};
}

int
RingSteps(CollectiveKind kind, int ranks)
{
    const int n = std::max(ranks, 1);
    return kind == CollectiveKind::kAllReduce ? 2 * (n - 1) : n - 1;
}

double
WholeRingLatencyUs(Protocol p, int steps)
{
    const ProtocolLatency l = NcclRingLatency(p);
    return l.base + steps * l.perStep;
}

} // namespace

double
TunerConfig::LaunchScale(Protocol p, CollectiveKind kind, int ranks) const
{
    double fixed = 0;
    switch (p)
    {
    case Protocol::kLL:
        fixed = llLaunchScale;
        break;
    case Protocol::kLL128:
        fixed = ll128LaunchScale;
        break;
    case Protocol::kSimple:
        return 1.0;
    }
    if (fixed > 0)
    {
        return fixed;
    }
    const int steps = RingSteps(kind, ranks);
    return WholeRingLatencyUs(p, steps) / WholeRingLatencyUs(Protocol::kSimple, steps);
}

double
TunerConfig::NvlsLaunchScale(int ranks) const
{
    if (nvlsLaunchScale > 0)
    {
        return nvlsLaunchScale;
    }
    return nccl_latency::kNvls
           / WholeRingLatencyUs(Protocol::kSimple, RingSteps(CollectiveKind::kAllReduce, ranks));
}

double
TunerConfig::RateScale(Protocol p, CollectiveKind kind) const
{
    if (p != Protocol::kLL)
    {
        return 1.0;
    }
    // The executor already halves LL's payload rate.
    return 2.0
           * (kind == CollectiveKind::kAllReduce ? llAllReduceBandwidthScale : llBandwidthScale);
}

double
TunerConfig::RateScale(Protocol p, CollectiveKind kind, double linkBytesPerSecond) const
{
    const double scale = RateScale(p, kind);
    if (p != Protocol::kLL || !(llMaxBytesPerSecond > 0) || !(linkBytesPerSecond > 0))
    {
        return scale;
    }
    // The executor carries LL's payload at half the scaled link rate.
    const double payload = 0.5 * scale * linkBytesPerSecond;
    return payload > llMaxBytesPerSecond ? scale * llMaxBytesPerSecond / payload : scale;
}

double
TunerConfig::OwnShareCopyUs(CollectiveKind kind,
                            uint64_t bytes,
                            int ranks,
                            double memoryBytesPerSecond) const
{
    if (!(localCopyEfficiency > 0) || !(memoryBytesPerSecond > 0) || ranks < 2
        || (kind != CollectiveKind::kAllGather && kind != CollectiveKind::kReduceScatter))
    {
        return 0;
    }
    return double(bytes) / double(ranks) / (localCopyEfficiency * memoryBytesPerSecond) * 1e6;
}

std::vector<Protocol>
ParseProtocolList(const std::string& text, const std::string& field)
{
    std::vector<Protocol> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ','))
    {
        const std::optional<Protocol> p = ParseProtocol(item);
        if (!p || std::find(out.begin(), out.end(), *p) != out.end())
        {
            throw fabricsim::InputError(
                field,
                "",
                "a comma-separated list of distinct protocols among Simple, "
                "LL128, LL",
                "\"" + text + "\"");
        }
        out.push_back(*p);
    }
    if (out.empty())
    {
        throw fabricsim::InputError(field, "", "at least one protocol (Simple, LL128, LL)", "\"\"");
    }
    return out;
}

double
InSwitchAllReduceLinkBytes(uint64_t bytes, int ranks)
{
    return double(bytes) * (1.0 + 1.0 / double(std::max(ranks, 1)));
}

std::map<std::string, double>
CarryAcrossClocks(const std::map<std::string, double>& values, double fromMhz, double toMhz)
{
    std::map<std::string, double> out = values;
    if (!(fromMhz > 0) || !(toMhz > 0))
    {
        return out;
    }
    for (const char* k : {"launch_overhead", "step_latency"})
    {
        auto it = out.find(k);
        if (it != out.end())
        {
            it->second *= fromMhz / toMhz;
        }
    }
    return out;
}

} // namespace fabricsim
