/*
 * The fabricsim command line after the program's own set-up: the options every command takes
 * (--memory-limit, --SchedulerType), the sub-command, and exit codes (2 for bad input).
 */
#include "cli-main.h"

#include "cli-commands.h"
#include "input-error.h"
#include "memory-limit.h"
#include "output-writer.h"
#include "units.h"

#include "ns3/global-value.h"
#include "ns3/type-id.h"

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <new>

namespace
{

/// Takes --memory-limit SIZE (any command) out of \p args and applies it, or the default.
void
ApplyMemoryLimitOption(std::vector<std::string>& args)
{
    uint64_t limit = fabricsim::DefaultMemoryLimitBytes();
    for (size_t i = 0; i < args.size(); ++i)
    {
        std::string v;
        if (args[i] == "--memory-limit" && i + 1 < args.size())
        {
            v = args[i + 1];
            args.erase(args.begin() + long(i), args.begin() + long(i) + 2);
        }
        else if (args[i].rfind("--memory-limit=", 0) == 0)
        {
            v = args[i].substr(15);
            args.erase(args.begin() + long(i));
        }
        else
        {
            continue;
        }
        const auto b = fabricsim::ParseQuantity(v, fabricsim::UnitKind::Bytes);
        if (!b || !(*b >= 1e8) || !(*b < 0x1p63))
        {
            throw fabricsim::InputError(
                "<command line>", "--memory-limit", "a size of at least 100MB, like 16GB", v);
        }
        limit = uint64_t(*b);
        break;
    }
    fabricsim::SetMemoryLimit(limit);
}

/// Takes --SchedulerType=NAME (any command; ns-3's global value, spelled as ns-3 programs take
/// it) out of \p args and binds it: the event scheduler runs use (fabric-setup.h).
void
ApplySchedulerTypeOption(std::vector<std::string>& args)
{
    const std::string opt = "--SchedulerType=";
    for (size_t i = 0; i < args.size(); ++i)
    {
        if (args[i].rfind(opt, 0) != 0)
        {
            continue;
        }
        const std::string v = args[i].substr(opt.size());
        ns3::TypeId t;
        if (!ns3::TypeId::LookupByNameFailSafe(v, &t)
            || !t.IsChildOf(ns3::TypeId::LookupByName("ns3::Scheduler")))
        {
            throw fabricsim::InputError("<command line>",
                                        "--SchedulerType",
                                        "an ns-3 event scheduler (ns3::FabricScheduler, "
                                        "ns3::PriorityQueueScheduler, ns3::MapScheduler, ...)",
                                        "\"" + v + "\"");
        }
        ns3::GlobalValue::Bind("SchedulerType", ns3::TypeIdValue(t));
        args.erase(args.begin() + long(i));
        --i;
    }
}

std::string
OutOfMemoryMessage()
{
    return "fabricsim: error: out of memory: the run needs more than its memory limit of "
           + fabricsim::DescribeBytes(double(fabricsim::MemoryLimitBytes()))
           + " (--memory-limit SIZE; the default is 80% of this machine's memory); nothing was "
             "written";
}

} // namespace

namespace fabricsim
{

int
RunCli(std::vector<std::string> args)
{
    try
    {
        ApplyMemoryLimitOption(args);
        ApplySchedulerTypeOption(args);
        // An allocation that crashes instead of throwing (ns-3's Object mallocs unchecked).
        ReportOutOfMemoryCrashes(OutOfMemoryMessage() + "\n", &RemovePartialOutputNow);
        return Dispatch(args, std::cout, std::cerr);
    }
    catch (const InputError& e)
    {
        std::cerr << "fabricsim: error: " << e.what() << "\n";
        return 2;
    }
    catch (const std::bad_alloc&)
    {
        std::cerr << OutOfMemoryMessage() << "\n";
        // ns-3's global lists may hold objects half built when memory ran out: their teardown
        // at exit is not safe (it segfaulted), and there is nothing left to write.
        std::cout.flush();
        std::cerr.flush();
        std::_Exit(2);
    }
    catch (const std::exception& e)
    {
        std::cerr << "fabricsim: internal error: " << e.what() << "\n";
        return 1;
    }
}

} // namespace fabricsim
