#include "trace-replay.h"

#include "trace-replay-state.h"
#include "unit-conversions.h"

namespace fabricsim
{

int64_t
ScaledComputePs(const TraceOp& op, const ReplayOptions& opt)
{
    double f = op.opClass == OpClass::kHost ? 1.0 : opt.computeScale;
    auto it = opt.classScale.find(op.opClass);
    if (it != opt.classScale.end())
    {
        f *= it->second;
    }
    return units::RoundPs(double(op.durationPs) * f, "scaled compute time");
}

TraceReplayer::TraceReplayer(const ImportedTrace& trace, const ReplayOptions& opt)
    : m_state(std::make_unique<State>(trace, opt))
{
}

TraceReplayer::~TraceReplayer() = default;

void
TraceReplayer::Start(CollectiveApi& api)
{
    m_state->Begin(api);
}

ReplayRun
TraceReplayer::Finish() const
{
    return m_state->Result();
}

ReplayRun
ReplayTrace(const ImportedTrace& trace,
            const ReplayOptions& opt,
            CollectiveApi& api,
            const std::function<void()>& runEventLoop)
{
    TraceReplayer r(trace, opt);
    r.Start(api);
    runEventLoop();
    return r.Finish();
}

} // namespace fabricsim
