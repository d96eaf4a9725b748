#include "fuzz-targets.h"

namespace fabricsim
{

const std::vector<FuzzTarget>&
FuzzTargets()
{
    static const std::vector<FuzzTarget> targets = {{"scenario", FuzzScenario},
                                                    {"topology", FuzzTopology},
                                                    {"flow-file", FuzzFlowFile},
                                                    {"msccl-xml", FuzzMscclXml},
                                                    {"model-config", FuzzModelConfig},
                                                    {"request-trace", FuzzRequestTrace},
                                                    {"kineto", FuzzKineto},
                                                    {"chakra", FuzzChakra},
                                                    {"nccl-log", FuzzNcclLog},
                                                    {"measurement-csv", FuzzMeasurementCsv},
                                                    {"overlay", FuzzOverlay}};
    return targets;
}

} // namespace fabricsim
