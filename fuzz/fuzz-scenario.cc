#include "fabric-scenario.h"
#include "fuzz-targets.h"

#include <sstream>

namespace fabricsim
{

int
FuzzScenario(const uint8_t* data, size_t size)
{
    return FuzzGuard(
        [&]()
        {
            std::string text = FuzzText(data, size);
            std::vector<std::string> sets;
            while (text.rfind("#set ", 0) == 0)
            {
                const size_t nl = text.find('\n');
                sets.push_back(
                    text.substr(5, nl == std::string::npos ? std::string::npos : nl - 5));
                text = nl == std::string::npos ? "" : text.substr(nl + 1);
            }
            nlohmann::json doc;
            try
            {
                doc = nlohmann::json::parse(text);
            }
            catch (const nlohmann::json::exception&)
            {
                return; // LoadScenarioJson reports this as an InputError; the parse is nlohmann's
            }
            for (const std::string& s : sets)
            {
                ApplySet(doc, s, "fuzz.json");
            }
            ParseFabricScenario(doc, "fuzz.json");
        });
}

int
FuzzFlowFile(const uint8_t* data, size_t size)
{
    return FuzzGuard(
        [&]()
        {
            const std::string path = FuzzScratchFile(data, size, "-flows.txt");
            nlohmann::json doc = {{"topology", {{"type", "single-switch"}, {"hosts", 4}}},
                                  {"traffic", {{"flow_file", path}}}};
            try
            {
                ParseFabricScenario(doc, "fuzz.json");
            }
            catch (const fabricsim::InputError&)
            {
            }
            LoadFlowCdf(path, {"", "traffic.poisson.cdf"});
        });
}

} // namespace fabricsim
