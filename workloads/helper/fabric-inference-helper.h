/*
 * ns-3 style helper that runs inference workloads over a fabric: a whole serving run (the
 * serving loop of workloads/serving) or one engine step, with the step's per-rank programs
 * (roofline compute and the collectives it issues) executed over the Collective API of a
 * FabricCollectiveHelper. `fabricsim run` on an inference scenario is built on it.
 */
#ifndef FABRICSIM_FABRIC_INFERENCE_HELPER_H
#define FABRICSIM_FABRIC_INFERENCE_HELPER_H

#include "inference-scenario.h"
#include "serving-metrics.h"
#include "serving-simulation.h"
#include "step-batch.h"
#include "step-executor.h"
#include "step-program.h"

#include "ns3/collective-memo.h"
#include "ns3/fabric-collective-helper.h"

#include <memory>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \brief One engine step of every engine of a pool, run together on the fabric.
 */
struct InferenceStepResult
{
    bool complete = false;                        //!< every rank finished its program
    int64_t stepPs = 0;                           //!< first launch to the last rank done
    std::vector<fabricsim::StepProgram> programs; //!< one per engine: what each rank ran
    std::vector<fabricsim::StepStats> stats;      //!< one per finished engine step
    std::vector<std::string> stuck;               //!< why the step could not finish
};

/**
 * \brief Runs inference workloads over a fabric (see the file comment).
 *
 * \code
 *   FabricCollectiveHelper coll(fabric);             // packet transport on the fabric
 *   FabricInferenceHelper inference(coll);
 *   fabricsim::InferenceScenario sc;                 // or InferenceScenario::Load(path)
 *   sc.model = fabricsim::ModelSpec::Preset("Qwen3-30B-A3B");
 *   sc.hw = fabricsim::HardwareSpec::Preset("H100");
 *   sc.pool.par.tp = 2; ...
 *   InferenceStepResult r = inference.RunStep(sc, fabricsim::StepBatch::Decode(16, 1024));
 * \endcode
 *
 * Ranks are placed on hosts by the scenario's placement rules (docs/inference.md), so a
 * scenario program and a scenario file place the same ranks on the same hosts.
 */
class FabricInferenceHelper
{
  public:
    /// Run over \p collectives' Collective API and event loop (it must outlive this).
    explicit FabricInferenceHelper(FabricCollectiveHelper& collectives);

    /**
     * \brief The serving loop of \p sc until every request has finished or the fabric has
     * nothing left to do; \p hooks follow it (progress after every step, recorded programs
     * streamed). Throws fabricsim::InputError when the layout does not fit the hosts.
     */
    fabricsim::ServingResult RunServing(const fabricsim::InferenceScenario& sc,
                                        const fabricsim::ServingHooks& hooks = {});

    /**
     * \brief One step of every engine of \p sc's pool (disaggregation off), each attention
     * group running \p batch, all launched at the current time; returns when the fabric has
     * nothing left to do. Throws fabricsim::InputError when the layout does not fit the hosts or
     * the model does not fit the accelerators.
     */
    InferenceStepResult RunStep(const fabricsim::InferenceScenario& sc,
                                const fabricsim::StepBatch& batch);

    /**
     * \brief Why a run could not finish: unfinished collectives of the Collective API and, on
     * the packet backend, transfers still in flight.
     */
    std::vector<std::string> StuckReports();

    /**
     * \brief \p sc bounded to the fabric's hosts (placement.numHosts). Throws fabricsim::InputError
     * (naming the scenario file, field "topology") when the fabric has fewer hosts than the
     * accelerators the scenario needs. RunServing and RunStep call it; call it yourself to
     * check a scenario before anything is written.
     */
    fabricsim::InferenceScenario Place(const fabricsim::InferenceScenario& sc);

    /**
     * \brief Simulate repeated collectives once (fabricsim::CollectiveMemo) in RunServing:
     * results are byte-identical to a run without. Needs the packet transport: returns false
     * (and leaves it off) on any other.
     */
    bool EnableMemo();

    /// The memo (nullptr when it is off).
    fabricsim::CollectiveMemo* Memo()
    {
        return m_memo.get();
    }

  private:
    fabricsim::CollectiveApi& Api();

    FabricCollectiveHelper& m_collectives;
    std::unique_ptr<fabricsim::CollectiveMemo> m_memo;
};

} // namespace ns3

#endif
