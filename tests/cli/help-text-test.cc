// Every command's --help lists every option its parser takes: the options are read from the
// parser's source (TakeOption(a, i, "--x"), a[i] == "--x") and looked up in the help text, so an
// option added to a parser without its help line fails here.
#include "cli-commands.h"
#include "generators.h"
#include "scenario-runner.h"
#include "schedule-ir.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>

namespace
{

/// The body of the function defined as `name(` at the start of a line in \p file.
std::string
FunctionBody(const std::string& file, const std::string& name)
{
    const std::string src
        = fabricsim::test::ReadFile(std::string(FABRICSIM_SOURCE_DIR) + "/" + file);
    const size_t at = src.find("\n" + name + "(");
    EXPECT_NE(at, std::string::npos) << name << " not defined in " << file;
    if (at == std::string::npos)
    {
        return "";
    }
    const size_t end = src.find("\n}\n", at);
    return src.substr(at, end - at);
}

std::set<std::string>
ParsedOptions(const std::string& body)
{
    std::set<std::string> opts;
    static const std::regex kOption(
        R"re((?:TakeOption\(a, i, |a\[i\] == |a\[i\]\.rfind\()"(-[-A-Za-z0-9_:]+)")re");
    for (auto it = std::sregex_iterator(body.begin(), body.end(), kOption);
         it != std::sregex_iterator();
         ++it)
    {
        opts.insert((*it)[1]);
    }
    return opts;
}

std::string
Help(const std::string& command)
{
    std::ostringstream out;
    std::ostringstream err;
    EXPECT_EQ(fabricsim::Dispatch({command, "--help"}, out, err), 0) << command;
    return out.str();
}

/// True when \p option stands in \p text as a whole word ("-b" is not "-bw").
bool
Lists(const std::string& text, const std::string& option)
{
    for (size_t at = text.find(option); at != std::string::npos; at = text.find(option, at + 1))
    {
        const size_t end = at + option.size();
        const bool startOk = at == 0 || text[at - 1] == ' ' || text[at - 1] == '['
                             || text[at - 1] == '(' || text[at - 1] == '|' || text[at - 1] == '\n';
        const bool endOk
            = end == text.size() || option.back() == ':'
              || !(std::isalnum((unsigned char)text[end]) || text[end] == '-' || text[end] == '_');
        if (startOk && endOk)
        {
            return true;
        }
    }
    return false;
}

struct Parser
{
    const char* command;
    const char* file;
    const char* function;
};

} // namespace

TEST(HelpText, EveryCommandsHelpListsEveryOptionItsParserTakes)
{
    const Parser parsers[] = {
        {"run", "scratch/fabricsim/cli-commands.cc", "CmdRun"},
        {"collective", "scratch/fabricsim/collective-command.cc", "ParseCollectiveArgs"},
        {"validate", "scratch/fabricsim/cli-commands.cc", "RunValidateArgs"},
        {"replay", "scratch/fabricsim/replay-command.cc", "ParseReplayArgs"},
        {"calibrate", "scratch/fabricsim/calibrate-command.cc", "ParseCalibrateArgs"},
        {"fit-compute", "scratch/fabricsim/fit-compute-command.cc", "ParseFitComputeArgs"},
        {"validate-serving",
         "scratch/fabricsim/validate-serving-command.cc",
         "ParseValidateServingArgs"},
    };
    for (const Parser& p : parsers)
    {
        const std::set<std::string> opts = ParsedOptions(FunctionBody(p.file, p.function));
        EXPECT_GE(opts.size(), 2u) << p.function << ": the option pattern found nothing";
        const std::string help = Help(p.command);
        for (const std::string& o : opts)
        {
            EXPECT_TRUE(Lists(help, o)) << p.command << " --help does not list " << o << ":\n"
                                        << help;
        }
        // Options every command takes (Dispatch handles them).
        EXPECT_TRUE(Lists(help, "--memory-limit")) << p.command << ":\n" << help;
        EXPECT_TRUE(Lists(help, "--overlay")) << p.command << ":\n" << help;
    }
}

// The values an option takes are listed where a user picks among names: every collective and
// every algorithm the generators have for it.
TEST(HelpText, CollectiveListsItsCollectivesAndAlgorithms)
{
    const std::string help = Help("collective");
    EXPECT_TRUE(Lists(help, "auto")) << help;
    for (const char* coll :
         {"allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "reduce"})
    {
        EXPECT_TRUE(Lists(help, coll)) << coll << ":\n" << help;
        for (const std::string& algo :
             fabricsim::AlgorithmsFor(*fabricsim::ParseCollectiveKind(coll)))
        {
            EXPECT_TRUE(Lists(help, algo)) << algo << ":\n" << help;
        }
    }
}
