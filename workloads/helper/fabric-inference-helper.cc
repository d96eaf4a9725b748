#include "fabric-inference-helper.h"

#include "input-error.h"
#include "kv-cache.h"
#include "rank-placement.h"
#include "serving-simulation.h"
#include "step-program-builder.h"

#include <algorithm>
#include <memory>

namespace ns3
{

FabricInferenceHelper::FabricInferenceHelper(FabricCollectiveHelper& collectives)
    : m_collectives(collectives)
{
}

fabricsim::InferenceScenario
FabricInferenceHelper::Place(const fabricsim::InferenceScenario& sc)
{
    fabricsim::InferenceScenario placed = sc;
    const uint32_t hosts = m_collectives.GetTransport().NumRanks();
    if (hosts < sc.NumAccelerators())
    {
        throw InputError(sc.file,
                         "topology",
                         "at least " + std::to_string(sc.NumAccelerators())
                             + " hosts (accelerators) for the parallelism and pools",
                         std::to_string(hosts) + " hosts");
    }
    // Placement checks hosts against this bound.
    placed.placement.numHosts = hosts;
    return placed;
}

fabricsim::ServingResult
FabricInferenceHelper::RunServing(const fabricsim::InferenceScenario& sc,
                                  const fabricsim::ServingHooks& hooks)
{
    const fabricsim::InferenceScenario placed = Place(sc);
    return fabricsim::RunServing(
        placed, Api(), [this] { m_collectives.RunEventLoop(); }, hooks);
}

fabricsim::CollectiveApi&
FabricInferenceHelper::Api()
{
    if (m_memo)
    {
        return *m_memo;
    }
    return m_collectives.GetCollectiveApi();
}

bool
FabricInferenceHelper::EnableMemo()
{
    fabricsim::MemoFabric* fabric = m_collectives.GetTransport().GetMemoFabric();
    if (!fabric)
    {
        return false;
    }
    if (!m_memo)
    {
        m_memo = std::make_unique<fabricsim::CollectiveMemo>(m_collectives.GetCollectiveApi(),
                                                             *fabric);
    }
    return true;
}

InferenceStepResult
FabricInferenceHelper::RunStep(const fabricsim::InferenceScenario& sc,
                               const fabricsim::StepBatch& batch)
{
    const fabricsim::InferenceScenario placed = Place(sc);
    const fabricsim::PoolSpec& pool = placed.pool;
    // A programmatic scenario skipped the parser's checks: the layout must suit the model and
    // the weights must fit, as for a scenario file.
    pool.par.Validate(placed.model, placed.file, "parallelism");
    fabricsim::KvCacheBudget::Compute(
        placed.model, placed.hw, pool.par, pool.batching, placed.kv, placed.file, "parallelism");
    const std::vector<uint32_t> hosts
        = fabricsim::PoolHosts(pool, placed.placement, placed.file, "serving.placement");

    InferenceStepResult r;
    fabricsim::StepExecutor exec(m_collectives.GetCollectiveApi());
    const int64_t launchPs = m_collectives.GetTransport().NowPs();
    uint32_t engine = 0;
    for (const fabricsim::EngineLayout& layout : fabricsim::SplitEngines(pool, hosts))
    {
        fabricsim::StepProgramBuilder builder(placed, layout);
        // Engines get distinct step ids: collective keys carry the step, so members of
        // different engines never meet in one collective.
        auto prog = std::make_shared<fabricsim::StepProgram>(
            builder.Build(engine, std::vector<fabricsim::StepBatch>(layout.groups, batch)));
        prog->engine = engine;
        r.programs.push_back(*prog);
        exec.Submit(prog, [&r](const fabricsim::StepStats& s) { r.stats.push_back(s); });
        engine++;
    }
    m_collectives.RunEventLoop();

    r.complete = r.stats.size() == r.programs.size();
    int64_t endPs = launchPs;
    for (const auto& s : r.stats)
    {
        endPs = std::max(endPs, s.endPs);
    }
    r.stepPs = endPs - launchPs;
    if (!r.complete)
    {
        r.stuck = exec.Blocked();
        for (const std::string& line : StuckReports())
        {
            r.stuck.push_back(line);
        }
    }
    return r;
}

std::vector<std::string>
FabricInferenceHelper::StuckReports()
{
    std::vector<std::string> lines = m_collectives.GetCollectiveApi().StuckReports();
    for (const std::string& line : m_collectives.GetTransport().StuckReport())
    {
        lines.push_back(line);
    }
    return lines;
}

} // namespace ns3
