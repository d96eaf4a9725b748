#include "replay-command.h"

#include "chakra-import.h"
#include "cli-options.h"
#include "input-error.h"
#include "output-writer.h"

#include "ns3/fabric-backend.h"
#include "ns3/run-provenance.h"

#include <cmath>
#include <iomanip>
#include <iostream>

namespace fabricsim
{

namespace
{

const char* kCli = kCommandLineSource;

double
PositiveNumber(const std::string& v, const std::string& opt)
{
    size_t used = 0;
    double x = 0;
    try
    {
        x = std::stod(v, &used);
    }
    catch (const std::exception&)
    {
        used = 0;
    }
    if (used != v.size() || v.empty() || !(x > 0) || !std::isfinite(x) || x > 1e6)
    {
        throw fabricsim::InputError(kCli, opt, "a positive number", "\"" + v + "\"");
    }
    return x;
}

double
Us(int64_t ps)
{
    return double(ps) * 1e-6;
}

} // namespace

ReplayCommandOptions
ParseReplayArgs(const std::vector<std::string>& a)
{
    ReplayCommandOptions o;
    for (size_t i = 1; i < a.size(); ++i)
    {
        std::string v;
        if (TakeOption(a, i, "--scenario", v))
        {
            o.scenario = v;
        }
        else if (TakeOption(a, i, "--format", v))
        {
            if (v != "auto" && v != "kineto" && v != "chakra" && v != "program")
            {
                throw fabricsim::InputError(
                    kCli, "--format", "auto, kineto, chakra or program", "\"" + v + "\"");
            }
            o.format = v;
        }
        else if (TakeOption(a, i, "--step", v))
        {
            size_t used = 0;
            long long s = -1;
            try
            {
                s = std::stoll(v, &used);
            }
            catch (const std::exception&)
            {
                used = 0;
            }
            if (used != v.size() || s < 0)
            {
                throw fabricsim::InputError(
                    kCli, "--step", "a profiler step number >= 0", "\"" + v + "\"");
            }
            o.step = s;
        }
        else if (TakeOption(a, i, "--backend", v))
        {
            ParseBackendKind(v, kCli, "--backend");
            o.backend = v;
        }
        else if (TakeOption(a, i, "--algo", v))
        {
            o.algorithm = v;
        }
        else if (TakeOption(a, i, "--compute-scale", v))
        {
            o.computeScale = PositiveNumber(v, "--compute-scale");
        }
        else if (TakeOption(a, i, "--hw-from", v))
        {
            o.hwFrom = v;
        }
        else if (TakeOption(a, i, "--hw-to", v))
        {
            o.hwTo = v;
        }
        else if (TakeOption(a, i, "--ranks", v))
        {
            o.worldSize = uint32_t(PositiveNumber(v, "--ranks"));
            if (double(o.worldSize) != std::stod(v))
            {
                throw fabricsim::InputError(
                    kCli, "--ranks", "a whole number of ranks", "\"" + v + "\"");
            }
        }
        else if (a[i] == "--chakra-cpu-ops")
        {
            o.chakraCpuOps = true;
        }
        else if (a[i] == "--export-chakra")
        {
            o.exportChakra = true;
        }
        else if (TakeOption(a, i, "--memo", v))
        {
            ParseMemoOption(v, o.memo, o.memoVerify);
        }
        else if (TakeOption(a, i, "--out", v))
        {
            o.outDir = v;
        }
        else if (TakeOption(a, i, "--set", v))
        {
            o.sets.push_back(v);
        }
        else if (a[i].rfind("--ns3::", 0) == 0)
        {
            o.ns3Args.push_back(a[i]);
        }
        else if (!a[i].empty() && a[i][0] != '-')
        {
            o.traces.push_back(a[i]);
        }
        else
        {
            throw fabricsim::InputError(
                kCli, a[i], "a trace file or an option of 'fabricsim replay'", "\"" + a[i] + "\"");
        }
    }
    if (o.traces.empty())
    {
        throw fabricsim::InputError(
            kCli,
            "TRACE",
            "one or more trace files (fabricsim replay TRACE... --scenario S.json)",
            "nothing");
    }
    if ((o.memo || o.memoVerify > 0) && o.backend != "packet")
    {
        throw fabricsim::InputError(kCli,
                                    "--memo",
                                    "--backend packet (the memo replays packet-level collectives)",
                                    "--backend " + o.backend);
    }
    if (o.scenario.empty())
    {
        throw fabricsim::InputError(
            kCli, "--scenario", "the scenario whose fabric replays the trace", "nothing");
    }
    return o;
}

namespace
{

/// The printed report: the step times of the three replays, then one line per collective.
void
PrintReplay(std::ostream& out,
            const ReplayRunOptions& opt,
            const ReplayInputs& in,
            const ReplayResult& r)
{
    const ImportedTrace& trace = in.trace;
    const ReplayRun& a = r.recorded;
    const ReplayRun& b = r.computeScaled;
    const ReplayRun& c = r.replayed;
    const int64_t recordedPs = r.recordedPs;
    const uint32_t steps = r.steps;
    out << std::fixed << std::setprecision(1);
    out << "# fabricsim replay: " << trace.format << " trace, " << trace.worldSize << " ranks, "
        << steps << " step(s), on " << r.report["scenario"].get<std::string>() << " ("
        << opt.backend << ")\n";
    for (const std::string& n : trace.notes)
    {
        out << "# note: " << n << "\n";
    }
    out << "# recorded      "
        << (recordedPs < 0 ? std::string("unknown") : std::to_string(int64_t(Us(recordedPs))))
        << " us\n"
        << "# baseline      " << Us(a.spanPs)
        << " us (recorded compute and communication, replayed dependencies)\n"
        << "# compute       " << Us(b.spanPs) << " us (compute scaled, communication as recorded)\n"
        << "# replayed      " << Us(c.spanPs) << " us (" << Us(c.spanPs) / steps
        << " us per step)\n"
        << "# change        " << Us(c.spanPs - a.spanPs) << " us = compute "
        << Us(b.spanPs - a.spanPs) << " + communication " << Us(c.spanPs - b.spanPs) << "\n";
    out << "#\n#  collective          bytes  ranks  recorded_us  replayed_us  exposed_change_us\n";
    for (const nlohmann::json& x : r.report["communication"])
    {
        out << "  " << std::setw(14) << std::left
            << x["collective"].get<std::string>().substr(0, 14) << std::right << std::setw(14)
            << x["bytes"].get<uint64_t>() << std::setw(7) << x["members"].get<uint32_t>()
            << std::setw(13) << x["recorded_us"].get<double>() << std::setw(13)
            << x["replayed_us"].get<double>() << std::setw(19)
            << x["exposed_change_us"].get<double>()
            << (x["simulated"].get<bool>() ? "" : "  (as recorded)") << "\n";
    }
}

} // namespace

int
RunReplayCommand(const ReplayCommandOptions& opt, std::ostream& out, std::ostream& err)
{
    const ReplayInputs in = ReadReplayInputs(opt);
    OutputDir dir(opt.outDir);
    const ReplayResult r = ExecuteReplay(opt, in);
    dir.Write("replay.json",
              r.report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    dir.Write("communication.csv", r.communicationCsv);
    if (opt.exportChakra)
    {
        for (uint32_t rank = 0; rank < in.trace.ranks.size(); ++rank)
        {
            dir.Write("trace." + std::to_string(rank) + ".et",
                      SerializeChakra(ExportChakra(in.trace, rank)));
        }
    }
    PrintReplay(out, opt, in, r);
    if (!r.replayed.complete)
    {
        err << "fabricsim: replay did not complete:\n";
        for (const std::string& s : r.replayed.stuck)
        {
            err << "  " << s << "\n";
        }
    }
    if (!r.memo.is_null())
    {
        // Apart from replay.json: the replay's results are byte-identical with the memo off.
        dir.Write("memo.json", r.memo.dump(2) + "\n");
        out << "# memo          " << r.memo["hits"].get<uint64_t>() << " of "
            << r.memo["lookups"].get<uint64_t>() << " collectives replayed (memo.json)\n";
    }
    dir.Write("provenance.json", ProvenanceText(in.document, opt.ns3Args));
    dir.Commit();
    if (MemoDisagreed(r.memo, err))
    {
        return 1;
    }
    return r.report["complete"].get<bool>() ? 0 : 1;
}

} // namespace fabricsim
