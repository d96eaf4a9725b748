#include "calibration-parameters.h"
#include "chakra-import.h"
#include "compressed-file.h"
#include "fuzz-targets.h"
#include "kineto-import.h"
#include "measurement-reader.h"
#include "model-spec.h"
#include "msccl-xml.h"
#include "schedule-json.h"
#include "topology.h"

#include <sstream>

namespace fabricsim
{

int
FuzzTopology(const uint8_t* data, size_t size)
{
    return FuzzGuard(
        [&]()
        {
            const std::string text = FuzzText(data, size);
            if (!text.empty() && text[0] == '{')
            {
                nlohmann::json spec;
                try
                {
                    spec = nlohmann::json::parse(text);
                }
                catch (const nlohmann::json::exception&)
                {
                    return;
                }
                BuildTopology(spec, "fuzz.json");
                return;
            }
            std::istringstream in(text);
            ParseHpccTopology(in, "fuzz-topology.txt");
        });
}

int
FuzzMscclXml(const uint8_t* data, size_t size)
{
    return FuzzGuard(
        [&]()
        {
            const std::string text = FuzzText(data, size);
            if (!text.empty() && text[0] == '{')
            {
                ParseScheduleJson(text, "fuzz.json");
                return;
            }
            ParseMscclXml(text, "fuzz.xml");
        });
}

int
FuzzModelConfig(const uint8_t* data, size_t size)
{
    return FuzzGuard(
        [&]()
        {
            nlohmann::json j;
            try
            {
                j = nlohmann::json::parse(FuzzText(data, size));
            }
            catch (const nlohmann::json::exception&)
            {
                return;
            }
            if (j.is_object())
            {
                ModelSpec::Load(j, "config.json", "model");
            }
        });
}

int
FuzzKineto(const uint8_t* data, size_t size)
{
    return FuzzGuard(
        [&]()
        {
            std::string text = FuzzText(data, size);
            if (IsGzip(text))
            {
                text = Gunzip(text, "fuzz.json.gz", 64 << 20);
            }
            ImportedTrace t;
            ImportKinetoText(text, "fuzz.json", 0, {}, t);
            CompleteRanks(t);
            SummarizeTrace(t);
        });
}

int
FuzzChakra(const uint8_t* data, size_t size)
{
    return FuzzGuard(
        [&]()
        {
            ChakraTrace c = ParseChakra(std::string_view(reinterpret_cast<const char*>(data), size),
                                        "fuzz.et");
            ImportedTrace t;
            ImportChakraTrace(c, "fuzz.0.et", 0, {}, t);
            CompleteRanks(t);
            // What was read must write back and read again.
            ParseChakra(SerializeChakra(c), "fuzz-rewritten.et");
            ExportChakra(t, 0);
        });
}

int
FuzzNcclLog(const uint8_t* data, size_t size)
{
    return FuzzGuard([&]()
                     { ParseNcclTestsLog(FuzzText(data, size), "fuzz_all_reduce_perf.txt"); });
}

int
FuzzMeasurementCsv(const uint8_t* data, size_t size)
{
    return FuzzGuard([&]() { ParseMeasurementCsv(FuzzText(data, size), "fuzz.csv"); });
}

int
FuzzOverlay(const uint8_t* data, size_t size)
{
    return FuzzGuard(
        [&]()
        {
            const std::string path = FuzzScratchFile(data, size, "-overlay.json");
            try
            {
                ReadOverlayParameters(path);
            }
            catch (const fabricsim::InputError&)
            {
            }
            ExpandOverlayArgs({"run", "--overlay", path, "s.json"});
        });
}

} // namespace fabricsim
