#include "serving-memory.h"

#include "input-error.h"
#include "memory-limit.h"

#include <algorithm>
#include <cstdio>

namespace fabricsim
{

double
EstimateServingBytes(double requests, double outputTokens, double maxNumSeqs)
{
    const double steps = outputTokens / std::max(maxNumSeqs, 1.0);
    return requests * ServingMemoryCost::kPerRequest
           + outputTokens * ServingMemoryCost::kPerOutputToken
           + steps * ServingMemoryCost::kPerStep;
}

double
EstimateTimelineBytes(double steps, double engineRanks, double layers)
{
    return steps * engineRanks * std::max(layers, 1.0)
           * ServingMemoryCost::kTimelinePerRankLayerStep;
}

void
CheckServingFitsMemory(double requests,
                       double outputTokens,
                       double maxNumSeqs,
                       const std::string& file,
                       const std::string& field,
                       double recordingBytes)
{
    const double bytes = EstimateServingBytes(requests, outputTokens, maxNumSeqs) + recordingBytes;
    const double limit = double(MemoryLimitBytes());
    if (bytes <= limit)
    {
        return;
    }
    char found[256];
    std::snprintf(found,
                  sizeof found,
                  "%.4g requests generating %.4g output tokens: about %s%s%s%s",
                  requests,
                  outputTokens,
                  DescribeBytes(bytes).c_str(),
                  recordingBytes > 0 ? " (the timeline " : "",
                  recordingBytes > 0 ? DescribeBytes(recordingBytes).c_str() : "",
                  recordingBytes > 0 ? "; record.max_steps bounds it)" : "");
    throw InputError(file,
                     field,
                     "requests whose serving run fits the memory limit of " + DescribeBytes(limit)
                         + " (--memory-limit)",
                     found);
}

} // namespace fabricsim
