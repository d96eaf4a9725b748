/*
 * `fabricsim calibrate`'s predictor: runs measured points (nccl-tests collectives through an
 * NCCL-like tuner, DeepEP dispatch / combine on the one EP model) on one version of a scenario
 * (the scenario document with the parameters being fitted applied).
 */
#ifndef FABRICSIM_CALIBRATE_PREDICTOR_H
#define FABRICSIM_CALIBRATE_PREDICTOR_H

#include "fabric-backend.h"
#include "fabric-scenario.h"
#include "measurement-reader.h"
#include "schedule-ir.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace fabricsim
{

/// What the predictor runs the points with.
struct PredictorOptions
{
    std::string scenario;                           ///< the scenario file (for errors, paths)
    BackendKind backend = BackendKind::kAnalytical; ///< of the collective points
    std::string deepepDispatchDtype = "fp8";        ///< normal-mode DeepEP dispatch payload
    std::vector<std::string> ns3Args;               ///< --ns3::Type::Attr=value
};

/// Runs the points of a measurement set on one version of the scenario.
class Predictor
{
  public:
    explicit Predictor(const PredictorOptions& opt);

    /**
     * Predicted times (us) of \p points on the scenario \p doc. Like NCCL's tuner, each point
     * takes the fastest candidate: every protocol of ns3::NcclTuner::Protocols (the scenario's
     * Simple launch and step latencies and LL's link rate scaled by the tuner's NCCL-derived
     * ratios) and, for all-reduce on a switch that reduces, the in-switch algorithm (Simple,
     * analytical backend). \p choices (optional) receives "algorithm/protocol" per point.
     */
    std::vector<double> Collectives(const nlohmann::json& doc,
                                    const std::vector<MeasuredPoint>& points,
                                    std::vector<std::string>* choices = nullptr);

    /// Predicted (dispatch, combine) times (us) of a DeepEP point on \p doc.
    std::pair<double, double> Moe(const nlohmann::json& doc, const MoePoint& p);

    uint64_t Runs() const;

  private:
    const Schedule& ScheduleFor(
        const FabricScenario& sc, CollectiveKind kind, uint64_t bytes, int n, std::string& algo);

    double AllToAllUs(const FabricScenario& sc,
                      uint32_t n,
                      double pairBytes,
                      int64_t kernelLaunchPs,
                      int64_t kernelMinPs);

    /// An all-to-all(v) of copies[i][j] x \p bytesPerCopy from rank i to rank j (own entries
    /// stay local) over the scenario's first ranks.
    double AllToAllUs(const FabricScenario& sc,
                      const std::vector<std::vector<double>>& copies,
                      double bytesPerCopy,
                      int64_t kernelLaunchPs,
                      int64_t kernelMinPs,
                      int64_t kernelFillPs = 0);

    PredictorOptions m_opt;
    std::map<std::tuple<int, std::string, int, int>, Schedule> m_schedules;
    uint64_t m_runs = 0;
};

} // namespace fabricsim

#endif
