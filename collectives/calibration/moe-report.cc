#include "moe-report.h"

#include "calibration-metrics.h"

#include <cmath>
#include <map>
#include <sstream>

namespace fabricsim
{

namespace
{

double
ErrorPct(double predicted, double measured)
{
    return (predicted - measured) / measured * 100;
}

} // namespace

std::string
MoeCsv(const std::vector<MoePoint>& moe, const std::vector<MoePrediction>& predicted)
{
    std::ostringstream csv;
    csv.precision(8);
    csv << "mode,tokens,hidden,topk,experts,sms,dispatch_us,predicted_dispatch_us,dispatch_"
           "error_pct,combine_us,"
           "predicted_combine_us,combine_error_pct,nodes,source,dispatch_contradicted,"
           "combine_contradicted\n";
    const std::vector<bool> slowD = ContradictedMoePoints(moe, true);
    const std::vector<bool> slowC = ContradictedMoePoints(moe, false);
    for (size_t i = 0; i < moe.size(); ++i)
    {
        const MoePoint& p = moe[i];
        const double d = predicted[i].dispatchUs;
        const double c = predicted[i].combineUs;
        csv << p.mode << "," << p.tokens << "," << p.hidden << "," << p.topk << "," << p.experts
            << "," << p.sms << "," << p.dispatchUs << "," << d << "," << ErrorPct(d, p.dispatchUs)
            << "," << p.combineUs << "," << c << "," << ErrorPct(c, p.combineUs) << "," << p.nodes
            << "," << p.source << "," << int(slowD[i]) << "," << int(slowC[i]) << "\n";
    }
    return csv.str();
}

nlohmann::json
MoeErrorReport(const std::vector<MoePoint>& moe, const std::vector<MoePrediction>& predicted)
{
    std::map<std::string, std::vector<double>> errs;
    // Points the tables contradict (slower by more than 15 % than a larger call of the same
    // shape): reported apart too, as no model growing with the tokens can hold them.
    const std::vector<bool> slowD = ContradictedMoePoints(moe, true);
    const std::vector<bool> slowC = ContradictedMoePoints(moe, false);
    for (size_t i = 0; i < moe.size(); ++i)
    {
        const MoePoint& p = moe[i];
        const double de = ErrorPct(predicted[i].dispatchUs, p.dispatchUs);
        const double ce = ErrorPct(predicted[i].combineUs, p.combineUs);
        const std::string range = p.tokens < 128    ? "tokens < 128"
                                  : p.tokens < 4096 ? "tokens 128-4095"
                                                    : "tokens >= 4096";
        errs[p.mode + " dispatch " + range].push_back(de);
        errs[p.mode + " combine " + range].push_back(ce);
        if (p.mode == "normal")
        {
            // Normal-mode kernels are SM-bound: the error by SM budget shows it.
            errs["normal dispatch sms " + std::to_string(p.sms)].push_back(de);
            errs["normal combine sms " + std::to_string(p.sms)].push_back(ce);
        }
        if (p.nodes > 1)
        {
            // Across servers: RDMA and forwarding, by the EP size.
            const std::string ep = " ep " + std::to_string(8 * p.nodes);
            errs[p.mode + " dispatch" + ep].push_back(de);
            errs[p.mode + " combine" + ep].push_back(ce);
        }
        errs[p.mode + " dispatch"].push_back(de);
        errs[p.mode + " combine"].push_back(ce);
        if (!slowD[i])
        {
            errs[p.mode + " dispatch but contradicted"].push_back(de);
        }
        if (!slowC[i])
        {
            errs[p.mode + " combine but contradicted"].push_back(ce);
        }
    }
    nlohmann::json m;
    for (const auto& [k, v] : errs)
    {
        double abs = 0;
        double bias = 0;
        double worst = 0;
        for (double e : v)
        {
            abs += std::fabs(e);
            bias += e;
            worst = std::fabs(e) > std::fabs(worst) ? e : worst;
        }
        m[k] = {{"points", v.size()},
                {"mape_pct", abs / v.size()},
                {"bias_pct", bias / v.size()},
                {"worst_pct", worst}};
    }
    return m;
}

} // namespace fabricsim
