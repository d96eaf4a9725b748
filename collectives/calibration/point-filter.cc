#include "point-filter.h"

#include <algorithm>

namespace fabricsim
{

namespace
{

bool
Keeps(const PointFilter& f, const MeasuredPoint& p)
{
    bool keep
        = p.bytes >= f.minBytes && p.bytes <= f.maxBytes && (f.dtype.empty() || p.dtype == f.dtype);
    if (!f.collectives.empty())
    {
        bool any = false;
        for (const std::string& c : f.collectives)
        {
            CollectiveKind k;
            any = any || (CollectiveOfTestName(c, k) && k == p.kind);
        }
        keep = keep && any;
    }
    if (!f.ranks.empty())
    {
        keep = keep && std::find(f.ranks.begin(), f.ranks.end(), p.ranks) != f.ranks.end();
    }
    return keep;
}

} // namespace

MeasurementSet
ReadFilteredMeasurements(const std::vector<std::string>& files, const PointFilter& filter)
{
    MeasurementSet kept;
    for (const std::string& f : files)
    {
        MeasurementSet s = ReadMeasurements(f, filter.collectiveHint);
        for (const MeasuredPoint& p : s.collectives)
        {
            if (Keeps(filter, p))
            {
                kept.collectives.push_back(p);
            }
        }
        for (const MoePoint& p : s.moe)
        {
            if (filter.deepepMode.empty() || p.mode == filter.deepepMode)
            {
                kept.moe.push_back(p);
            }
        }
    }
    return kept;
}

} // namespace fabricsim
