#include "scenario-fields.h"

#include "input-error.h"
#include "json-describe.h"
#include "unit-conversions.h"
#include "units.h"

#include <algorithm>

namespace fabricsim
{

using nlohmann::json;

uint64_t
GetBytes(const JsonObject& o, const std::string& key, uint64_t def)
{
    const json* v = o.Find(key);
    if (!v || !v->is_string())
    {
        return o.OptionalUint(key, def);
    }
    const std::optional<double> b = ParseQuantity(v->get<std::string>(), UnitKind::Bytes);
    if (!b || !(*b >= 0) || !(*b < 0x1p64))
    {
        o.Fail(key, "a byte count like 4096 or \"100KB\"", DescribeJson(*v));
    }
    return uint64_t(*b + 0.5);
}

void
CheckFlowSize(const FabricScenario& sc,
              uint64_t bytes,
              const std::string& file,
              const std::string& field,
              const std::string& found)
{
    const uint64_t byPsn = 0xfffffffeULL * sc.transport.mtuBytes;
    double minRate = 0;
    for (const auto& l : sc.topology.links)
    {
        minRate = minRate == 0 ? l.spec.rateBps : std::min(minRate, l.spec.rateBps);
    }
    const double byTime = minRate / 8 * units::kMaxSeconds / 2;
    if (bytes > byPsn || (minRate > 0 && double(bytes) > byTime))
    {
        const bool psn = double(byPsn) <= byTime || minRate == 0;
        const uint64_t most = psn ? byPsn : uint64_t(byTime);
        throw InputError(
            file,
            field,
            "a flow size of at most " + std::to_string(most) + " bytes ("
                + (psn ? "2^32 - 2 packets of mtu_bytes " + std::to_string(sc.transport.mtuBytes)
                       : "53 days at the slowest link's rate, " + DescribeJson(json(minRate))
                             + " b/s")
                + ")",
            found.empty() ? std::to_string(bytes) : found);
    }
}

void
CheckWindowEnd(uint64_t startNs,
               uint64_t durationNs,
               const std::string& file,
               const std::string& path)
{
    if (durationNs > units::kMaxNs - startNs)
    {
        throw InputError(file,
                         JsonPath(path, "duration_ns"),
                         "start_ns + duration_ns at most " + std::to_string(units::kMaxNs)
                             + " (106 days)",
                         std::to_string(startNs) + " + " + std::to_string(durationNs));
    }
}

uint32_t
GetHost(const json& v, const Topology& topo, const std::string& file, const std::string& field)
{
    const std::optional<uint64_t> h = JsonObject::AsUint(v);
    if (!h || *h >= topo.NumHosts())
    {
        throw InputError(file,
                         field,
                         "a host index in [0, " + std::to_string(topo.NumHosts() - 1) + "]",
                         DescribeJson(v));
    }
    return uint32_t(*h);
}

std::vector<uint32_t>
GetHostList(const JsonObject& o, const Topology& topo, const std::string& key)
{
    std::vector<uint32_t> v;
    if (!o.Has(key))
    {
        return v;
    }
    const json& a = o.Array(key);
    for (size_t i = 0; i < a.size(); ++i)
    {
        v.push_back(GetHost(a[i], topo, o.File(), JsonIndex(o.Field(key), i)));
    }
    return v;
}

std::string
Resolve(const std::string& dir, const std::string& p)
{
    if (p.empty() || p[0] == '/' || dir.empty())
    {
        return p;
    }
    return dir + "/" + p;
}

} // namespace fabricsim
