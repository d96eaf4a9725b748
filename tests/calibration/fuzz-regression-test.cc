#include "calibration-test-util.h"
#include "fuzz-targets.h"

#include <filesystem>
#include <fstream>

namespace fabricsim
{
namespace
{

/// The seed corpus and the saved findings of \p target, through its fuzz entry point: each
/// input is read or refused with an InputError, never anything else.
void
Replay(const FuzzTarget& target, size_t& inputs)
{
    for (const char* folder : {"corpus", "regressions"})
    {
        const std::filesystem::path dir
            = std::filesystem::path(FABRICSIM_SOURCE_DIR) / "fuzz" / folder / target.name;
        if (!std::filesystem::exists(dir))
        {
            continue;
        }
        std::vector<std::filesystem::path> files;
        for (const auto& e : std::filesystem::directory_iterator(dir))
        {
            files.push_back(e.path());
        }
        std::sort(files.begin(), files.end());
        for (const auto& f : files)
        {
            std::ifstream in(f, std::ios::binary);
            const std::string bytes((std::istreambuf_iterator<char>(in)),
                                    std::istreambuf_iterator<char>());
            EXPECT_NO_THROW(
                target.run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()))
                << target.name << ": " << f;
            ++inputs;
        }
    }
}

TEST(FuzzRegressions, SeedsAndFindingsOfEveryParserAreHandled)
{
    size_t inputs = 0;
    for (const FuzzTarget& t : FuzzTargets())
    {
        const size_t before = inputs;
        Replay(t, inputs);
        EXPECT_GT(inputs, before) << "no seed for " << t.name;
    }
    EXPECT_EQ(FuzzTargets().size(), 11u);
}

TEST(FuzzRegressions, TruncationsOfEverySeedAreHandled)
{
    // Every prefix length of each seed (up to 2 KiB): the classic way parsers read past the end.
    for (const FuzzTarget& t : FuzzTargets())
    {
        const std::filesystem::path dir
            = std::filesystem::path(FABRICSIM_SOURCE_DIR) / "fuzz" / "corpus" / t.name;
        for (const auto& e : std::filesystem::directory_iterator(dir))
        {
            std::ifstream in(e.path(), std::ios::binary);
            const std::string bytes((std::istreambuf_iterator<char>(in)),
                                    std::istreambuf_iterator<char>());
            const size_t step = std::max<size_t>(1, bytes.size() / 97);
            for (size_t n = 0; n < std::min<size_t>(bytes.size(), 2048); n += step)
            {
                EXPECT_NO_THROW(t.run(reinterpret_cast<const uint8_t*>(bytes.data()), n))
                    << t.name << ": " << e.path() << " cut at " << n;
            }
        }
    }
}

} // namespace
} // namespace fabricsim
