/*
 * One inference step of a Mixture-of-Experts model with tensor and expert parallelism, on the
 * packet-level fabric.
 *
 * The layout (vLLM / SGLang "DP attention"): attention runs in tensor-parallel groups of `tp`
 * ranks, `dp` such groups side by side; the MoE layers run expert-parallel over `ep` ranks (the
 * E experts split ep ways), so ep / tp attention groups exchange their tokens with all-to-alls
 * (dispatch and combine) in every MoE layer. With the defaults (tp 2, ep 4, dp 4 on 4 servers x
 * 2 GPUs) a TP group is one server's two GPUs (scale-up), and an EP group spans two servers, so
 * its all-to-alls cross the NICs.
 *
 * The workloads layer turns the step into one program per rank: compute items timed by the
 * roofline model of the accelerator, and the collectives the step issues. The programs run over
 * the Collective API on the fabric; the output is each rank's compute and communication time,
 * the collectives one rank issued, and the step time.
 *
 *   build/bin/tp-ep-inference-step --batch=32 --context=2048
 *   build/bin/tp-ep-inference-step --prefill=512 --batch=2 --layers=8
 *   build/bin/tp-ep-inference-step --tp=2 --ep=8 --servers=4 --gpus=2
 *
 * Exit codes: 0 the step finished; 1 it could not (the stuck ranks are printed); 2 bad input
 * (a layout that does not fit the model or the fabric, an unknown model, bad arguments).
 */
#include "input-error.h"
#include "topology.h"

#include "ns3/command-line.h"
#include "ns3/fabric-collective-helper.h"
#include "ns3/fabric-inference-helper.h"
#include "ns3/fabric-topology-helper.h"
#include "ns3/simulator.h"

#include <iomanip>
#include <iostream>
#include <map>
#include <tuple>

using namespace ns3;

namespace
{

std::string
GroupText(const std::vector<uint32_t>& group)
{
    std::string s = "[";
    for (size_t i = 0; i < group.size(); ++i)
    {
        s += (i ? "," : "") + std::to_string(group[i]);
    }
    return s + "]";
}

} // namespace

int
main(int argc, char** argv)
{
    Time::SetResolution(Time::PS);

    std::string model = "Qwen3-30B-A3B";
    std::string hardware = "H100";
    uint32_t layers = 0;
    uint32_t tp = 2;
    uint32_t ep = 4;
    uint32_t dp = 4;
    uint32_t servers = 4;
    uint32_t gpus = 2;
    uint32_t batch = 16;
    uint32_t context = 1024;
    uint32_t prefill = 0;
    CommandLine cmd(__FILE__);
    cmd.AddValue("model", "model preset (a MoE model: Qwen3-30B-A3B, Mixtral-8x7B, ...)", model);
    cmd.AddValue("layers", "run only this many layers of the model (0 = all)", layers);
    cmd.AddValue("hardware", "accelerator preset", hardware);
    cmd.AddValue("tp", "tensor-parallel size of attention", tp);
    cmd.AddValue("ep", "expert-parallel size of the MoE layers (a multiple of tp)", ep);
    cmd.AddValue("dp", "attention groups (data parallel); world = tp x dp", dp);
    cmd.AddValue("servers", "servers of the rail-optimised fabric", servers);
    cmd.AddValue("gpus", "accelerators per server (a scale-up domain)", gpus);
    cmd.AddValue("batch", "sequences per attention group", batch);
    cmd.AddValue("context", "decode: tokens already in each sequence's KV cache", context);
    cmd.AddValue(
        "prefill", "prompt tokens per sequence for a prefill step (0 = decode step)", prefill);
    cmd.Parse(argc, argv);

    int rc = 0;
    try
    {
        // The fabric: 400G NICs on rails and spines, a scale-up switch per server.
        const nlohmann::json spec = {{"type", "rail-optimized"},
                                     {"servers", servers},
                                     {"accels_per_server", gpus},
                                     {"spines", 2},
                                     {"host_link", {{"rate", "400Gbps"}, {"delay", "1us"}}},
                                     {"fabric_link", {{"rate", "400Gbps"}, {"delay", "1us"}}},
                                     {"scale_up", {{"rate", "450GBps"}, {"delay", "100ns"}}}};
        const fabricsim::Topology topo = fabricsim::BuildTopology(spec, "<command line>");
        FabricTopologyHelper fabric(topo);
        fabric.Install();
        FabricCollectiveHelper collectives(fabric);
        collectives.SetCongestionControl("dcqcn");
        FabricInferenceHelper inference(collectives);

        // The workload, as a scenario file would give it (docs/inference.md, docs/workloads.md).
        fabricsim::InferenceScenario sc;
        sc.file = "<command line>";
        nlohmann::json modelField = model;
        if (layers > 0)
        {
            modelField = {{"preset", model}, {"num_hidden_layers", layers}};
        }
        sc.model = fabricsim::ModelSpec::Load(modelField, sc.file, "--model");
        sc.hw = fabricsim::HardwareSpec::Preset(hardware);
        sc.pool.par.tp = tp;
        sc.pool.par.ep = ep;
        sc.pool.par.dp = dp;
        sc.pool.par.dpAttention = ep > tp; // EP groups larger than a TP group span attention groups
        sc.placement.accelsPerServer = gpus;
        const fabricsim::StepBatch work = prefill > 0
                                              ? fabricsim::StepBatch::Prefill(batch, prefill)
                                              : fabricsim::StepBatch::Decode(batch, context);

        InferenceStepResult r = inference.RunStep(sc, work);

        std::cout << std::fixed << std::setprecision(1);
        std::cout << "# " << (prefill > 0 ? "prefill" : "decode") << " step of " << sc.model.name
                  << " (" << sc.model.numLayers << " layers) on " << tp * dp << " x " << sc.hw.name
                  << ": tp " << tp << ", ep " << ep << ", dp " << dp << "; " << batch
                  << " sequences per attention group, " << r.programs.size() << " engine(s)\n";

        // The collectives rank 0's program issued, by kind and group.
        std::map<std::tuple<std::string, std::string, std::string>, std::pair<int, uint64_t>>
            issued;
        for (const auto& item : r.programs.at(0).ranks.at(0).items)
        {
            if (item.type == fabricsim::ProgramItem::Type::Comm)
            {
                auto& e = issued[{
                    item.category, fabricsim::CommOpName(item.op), GroupText(item.group)}];
                e.first++;
                e.second += item.bytes;
            }
        }
        std::cout
            << "# collectives issued by rank " << r.programs.at(0).ranks.at(0).rank << "\n"
            << "#   category          op              ranks               count     bytes total\n";
        for (const auto& [key, e] : issued)
        {
            std::cout << "    " << std::left << std::setw(18) << std::get<0>(key) << std::setw(16)
                      << std::get<1>(key) << std::setw(20) << std::get<2>(key) << std::right
                      << std::setw(5) << e.first << std::setw(16) << e.second << "\n";
        }

        // Where each rank's time went.
        std::cout << "# per rank (us)    compute    exposed comm    sync wait    done at\n";
        for (const auto& s : r.stats)
        {
            for (const auto& rank : s.ranks)
            {
                int64_t comm = 0;
                for (const auto& [category, ps] : rank.commPs)
                {
                    comm += ps;
                }
                std::cout << "    rank " << std::setw(3) << rank.rank << std::setw(14)
                          << rank.computePs * 1e-6 << std::setw(16) << comm * 1e-6 << std::setw(13)
                          << rank.syncPs * 1e-6 << std::setw(11) << (rank.endPs - s.launchPs) * 1e-6
                          << "\n";
                if (rank.computePs <= 0)
                {
                    std::cerr << "rank " << rank.rank << " computed nothing\n";
                    rc = 1;
                }
            }
        }
        if (!r.complete)
        {
            std::cerr << "tp-ep-inference-step: the step did not finish:\n";
            for (const auto& line : r.stuck)
            {
                std::cerr << "  " << line << "\n";
            }
            rc = 1;
        }
        else
        {
            std::cout << "# step time on the packet fabric: " << r.stepPs * 1e-6 << " us\n";
        }
    }
    catch (const InputError& e)
    {
        std::cerr << "tp-ep-inference-step: " << e.what() << "\n";
        rc = 2;
    }
    Simulator::Destroy();
    return rc;
}
