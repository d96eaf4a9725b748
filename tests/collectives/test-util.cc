#include "test-util.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace fabricsim
{
namespace test
{

std::string
CorpusDir()
{
    const std::string dir = std::string(FABRICSIM_DATA_DIR) + "/msccl";
    struct stat st;
    return stat(dir.c_str(), &st) == 0 ? dir : "";
}

std::vector<CorpusEntry>
LoadManifest()
{
    std::vector<CorpusEntry> rows;
    std::ifstream in(std::string(FABRICSIM_SOURCE_DIR) + "/tests/collectives/msccl-corpus.tsv");
    std::string line;
    bool header = true;
    while (std::getline(in, line))
    {
        if (header)
        {
            header = false; // file source coll ngpus mode expected
            continue;
        }
        if (line.empty() || line[0] == '#')
        {
            continue;
        }
        std::vector<std::string> cols;
        std::stringstream ss(line);
        std::string col;
        while (std::getline(ss, col, '\t'))
        {
            cols.push_back(col);
        }
        if (cols.size() < 6)
        {
            continue;
        }
        CorpusEntry e;
        e.m_file = cols[0];
        e.m_source = cols[1];
        e.m_coll = cols[2];
        e.m_ngpus = std::stoi(cols[3]);
        e.m_mode = cols[4];
        e.m_expected = cols[5];
        rows.push_back(e);
    }
    return rows;
}

std::string
TempPath(const std::string& suffix)
{
    static std::atomic<int> counter{0};
    const char* tmp = std::getenv("TMPDIR");
    return std::string(tmp ? tmp : "/tmp") + "/fabricsim-coll-test-" + std::to_string(getpid())
           + "-" + std::to_string(counter++) + suffix;
}

std::string
WriteTemp(const std::string& content, const std::string& suffix)
{
    const std::string path = TempPath(suffix);
    std::ofstream(path) << content;
    return path;
}

Schedule
RingAllReduce(int n)
{
    Schedule s = Schedule::Create(CollectiveKind::kAllReduce, n, n, true);
    s.m_name = "test_ring_allreduce";
    const auto I = BufferKind::kInput;
    for (int r = 0; r < n; ++r)
    {
        auto mod = [n](int x)
        {
            return ((x % n) + n) % n;
        };
        Threadblock& tb = s.Rank(r).AddThreadblock(mod(r + 1), mod(r - 1), 0);
        tb.AddStep(StepOp::kSend, I, r, I, r, 1);
        for (int k = 1; k <= n - 2; ++k)
        {
            tb.AddStep(StepOp::kRecvReduceSend, I, mod(r - k), I, mod(r - k), 1);
        }
        tb.AddStep(StepOp::kRecvReduceCopySend, I, mod(r + 1), I, mod(r + 1), 1);
        for (int t = 1; t <= n - 2; ++t)
        {
            tb.AddStep(StepOp::kRecvCopySend, I, mod(r - t + 1), I, mod(r - t + 1), 1);
        }
        tb.AddStep(StepOp::kRecv, I, mod(r + 2), I, mod(r + 2), 1);
    }
    return s;
}

Schedule
DirectAllToAll(int n)
{
    Schedule s = Schedule::Create(CollectiveKind::kAllToAll, n, n, false);
    s.m_name = "test_direct_alltoall";
    const auto I = BufferKind::kInput;
    const auto O = BufferKind::kOutput;
    for (int r = 0; r < n; ++r)
    {
        RankProgram& p = s.Rank(r);
        p.AddThreadblock(-1, -1, 0).AddStep(StepOp::kCopy, I, r, O, r, 1);
        for (int peer = 0; peer < n; ++peer)
        {
            if (peer == r)
            {
                continue;
            }
            Threadblock& tb = p.AddThreadblock(peer, peer, 0);
            tb.AddStep(StepOp::kSend, I, peer, O, r, 1);
            tb.AddStep(StepOp::kRecv, I, r, O, peer, 1);
        }
    }
    return s;
}

} // namespace test
} // namespace fabricsim
