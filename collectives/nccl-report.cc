#include "nccl-report.h"

#include "input-error.h"

#include <cctype>
#include <cstdio>
#include <sstream>

namespace fabricsim
{

namespace
{

bool
PerRankCount(CollectiveKind kind)
{
    return kind == CollectiveKind::kAllGather || kind == CollectiveKind::kReduceScatter
           || kind == CollectiveKind::kAllToAll;
}

bool
Reduces(CollectiveKind kind)
{
    return kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduceScatter
           || kind == CollectiveKind::kReduce;
}

std::string
Format(const char* fmt, double v)
{
    char buf[64];
    std::snprintf(buf, sizeof(buf), fmt, v);
    return buf;
}

/// nccl-tests prints fewer decimals as the time grows.
std::string
TimeText(double us)
{
    return us >= 10000.0 ? Format("%7.0f", us)
           : us >= 100.0 ? Format("%7.1f", us)
                         : Format("%7.2f", us);
}

} // namespace

uint64_t
ParseNcclSize(const std::string& text, const std::string& field)
{
    std::string t = text;
    if (!t.empty() && (t.back() == 'B' || t.back() == 'b'))
    {
        t.pop_back();
    }
    uint64_t mult = 1;
    if (!t.empty())
    {
        switch (std::toupper(static_cast<unsigned char>(t.back())))
        {
        case 'K':
            mult = 1ULL << 10;
            break;
        case 'M':
            mult = 1ULL << 20;
            break;
        case 'G':
            mult = 1ULL << 30;
            break;
        default:
            break;
        }
        if (mult != 1)
        {
            t.pop_back();
        }
    }
    bool digits = !t.empty();
    for (char c : t)
    {
        digits = digits && std::isdigit(static_cast<unsigned char>(c));
    }
    if (!digits || t.size() > 12)
    {
        throw fabricsim::InputError(
            "<command line>",
            field,
            "a size in bytes with an optional K, M or G suffix (e.g. 8, 64K, 1G)",
            "\"" + text + "\"");
    }
    const uint64_t v = std::stoull(t) * mult;
    if (v == 0)
    {
        throw fabricsim::InputError("<command line>", field, "a size > 0", "\"" + text + "\"");
    }
    return v;
}

std::vector<uint64_t>
SizeSweep(uint64_t minBytes, uint64_t maxBytes, uint64_t factor)
{
    std::vector<uint64_t> sizes;
    for (uint64_t s = minBytes; s <= maxBytes && s > 0; s *= factor)
    {
        sizes.push_back(s);
        if (factor < 2 || s > maxBytes / factor)
        {
            break;
        }
    }
    return sizes;
}

uint64_t
AlignedSize(CollectiveKind kind, uint64_t bytes, int ranks)
{
    uint64_t elements = bytes / kNcclTypeBytes;
    if (PerRankCount(kind) && ranks > 0)
    {
        elements -= elements % uint64_t(ranks);
    }
    return elements * kNcclTypeBytes;
}

uint64_t
ElementCount(CollectiveKind kind, uint64_t bytes, int ranks)
{
    const uint64_t elements = bytes / kNcclTypeBytes;
    return PerRankCount(kind) && ranks > 0 ? elements / uint64_t(ranks) : elements;
}

double
BusBandwidthFactor(CollectiveKind kind, int ranks)
{
    const double n = ranks;
    switch (kind)
    {
    case CollectiveKind::kAllReduce:
        return 2.0 * (n - 1) / n;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll:
        return (n - 1) / n;
    default:
        return 1.0;
    }
}

NcclRow
MakeNcclRow(CollectiveKind kind, int ranks, uint64_t bytes, double timeUs, int64_t wrong, int root)
{
    NcclRow r;
    r.m_sizeBytes = bytes;
    r.m_count = ElementCount(kind, bytes, ranks);
    r.m_redop = Reduces(kind) ? "sum" : "none";
    r.m_root = (kind == CollectiveKind::kBroadcast || kind == CollectiveKind::kReduce) ? root : -1;
    r.m_timeUs = timeUs;
    // GB/s with GB = 1e9 bytes: bytes / (us * 1e3).
    r.m_algbwGbps = timeUs > 0 ? double(bytes) / (timeUs * 1e3) : 0;
    r.m_busbwGbps = r.m_algbwGbps * BusBandwidthFactor(kind, ranks);
    r.m_wrong = wrong;
    return r;
}

std::string
NcclTableHeader()
{
    char buf[512];
    std::string out = "#\n";
    std::snprintf(
        buf,
        sizeof(buf),
        "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place\n",
        "",
        "",
        "",
        "",
        "");
    out += buf;
    std::snprintf(buf,
                  sizeof(buf),
                  "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n",
                  "size",
                  "count",
                  "type",
                  "redop",
                  "root",
                  "time",
                  "algbw",
                  "busbw",
                  "#wrong",
                  "time",
                  "algbw",
                  "busbw",
                  "#wrong");
    out += buf;
    std::snprintf(buf,
                  sizeof(buf),
                  "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n",
                  "(B)",
                  "(elements)",
                  "",
                  "",
                  "",
                  "(us)",
                  "(GB/s)",
                  "(GB/s)",
                  "",
                  "(us)",
                  "(GB/s)",
                  "(GB/s)",
                  "");
    out += buf;
    return out;
}

std::string
NcclTableLine(const NcclRow& row)
{
    char head[128];
    std::snprintf(head,
                  sizeof(head),
                  "%12llu  %12llu  %8s  %6s  %6i",
                  (unsigned long long)row.m_sizeBytes,
                  (unsigned long long)row.m_count,
                  row.m_type.c_str(),
                  row.m_redop.c_str(),
                  row.m_root);
    const std::string wrong = row.m_wrong < 0 ? "N/A" : std::to_string(row.m_wrong);
    char group[128];
    std::snprintf(group,
                  sizeof(group),
                  "  %7s  %6.2f  %6.2f  %6s",
                  TimeText(row.m_timeUs).c_str(),
                  row.m_algbwGbps,
                  row.m_busbwGbps,
                  wrong.c_str());
    return std::string(head) + group + group + "\n";
}

double
AverageBusBandwidth(const std::vector<NcclRow>& rows)
{
    double sum = 0;
    int n = 0;
    for (const NcclRow& r : rows)
    {
        if (r.m_complete)
        {
            sum += r.m_busbwGbps;
            n++;
        }
    }
    return n ? sum / n : 0;
}

std::string
NcclAverageLine(const std::vector<NcclRow>& rows)
{
    std::ostringstream os;
    os << "# Avg bus bandwidth    : " << AverageBusBandwidth(rows) << " \n";
    return os.str();
}

nlohmann::json
NcclRowsJson(const std::vector<NcclRow>& rows)
{
    nlohmann::json a = nlohmann::json::array();
    for (const NcclRow& r : rows)
    {
        nlohmann::json j = {{"size_bytes", r.m_sizeBytes},
                            {"count", r.m_count},
                            {"type", r.m_type},
                            {"redop", r.m_redop},
                            {"root", r.m_root},
                            {"complete", r.m_complete}};
        if (r.m_complete)
        {
            j["time_us"] = r.m_timeUs;
            j["algbw_gbps"] = r.m_algbwGbps;
            j["busbw_gbps"] = r.m_busbwGbps;
        }
        else
        {
            j["time_us"] = nullptr;
            j["algbw_gbps"] = nullptr;
            j["busbw_gbps"] = nullptr;
        }
        j["wrong"] = r.m_wrong < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.m_wrong);
        a.push_back(j);
    }
    return a;
}

std::string
NcclRowsCsv(const std::vector<NcclRow>& rows)
{
    std::ostringstream os;
    os << "size_bytes,count,type,redop,root,time_us,algbw_gbps,busbw_gbps,wrong,complete\n";
    os.precision(10);
    for (const NcclRow& r : rows)
    {
        os << r.m_sizeBytes << ',' << r.m_count << ',' << r.m_type << ',' << r.m_redop << ','
           << r.m_root << ',';
        if (r.m_complete)
        {
            os << r.m_timeUs << ',' << r.m_algbwGbps << ',' << r.m_busbwGbps;
        }
        else
        {
            os << ",,";
        }
        os << ',' << (r.m_wrong < 0 ? std::string() : std::to_string(r.m_wrong)) << ','
           << (r.m_complete ? "true" : "false") << '\n';
    }
    return os.str();
}

} // namespace fabricsim
