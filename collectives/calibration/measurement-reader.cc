#include "measurement-reader.h"

#include "csv-table.h"
#include "file-reader.h"
#include "input-error.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <sstream>

namespace fabricsim
{

namespace
{

std::vector<std::string>
Lines(std::string_view text)
{
    std::vector<std::string> lines;
    size_t start = 0;
    while (start <= text.size())
    {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos)
        {
            if (start < text.size())
            {
                lines.emplace_back(text.substr(start));
            }
            break;
        }
        lines.emplace_back(text.substr(start, end - start));
        start = end + 1;
    }
    return lines;
}

/// A non-negative integer (whole number, no sign, no exponent).
bool
ParseCount(const std::string& s, uint64_t& v)
{
    if (s.empty() || s.size() > 19)
    {
        return false;
    }
    v = 0;
    for (char c : s)
    {
        if (c < '0' || c > '9')
        {
            return false;
        }
        v = v * 10 + uint64_t(c - '0');
    }
    return true;
}

/// A finite number > 0.
bool
ParsePositive(const std::string& s, double& v)
{
    if (s.empty() || s.size() > 40)
    {
        return false;
    }
    char* end = nullptr;
    v = std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size() && std::isfinite(v) && v > 0;
}

uint32_t
BytesOfType(const std::string& t)
{
    static const std::map<std::string, uint32_t> sizes
        = {{"int8", 1},    {"uint8", 1}, {"char", 1},    {"fp8", 1},    {"f8e4m3", 1},
           {"f8e5m2", 1},  {"half", 2},  {"float16", 2}, {"fp16", 2},   {"bfloat16", 2},
           {"bf16", 2},    {"int32", 4}, {"uint32", 4},  {"int", 4},    {"float", 4},
           {"float32", 4}, {"fp32", 4},  {"int64", 8},   {"uint64", 8}, {"double", 8},
           {"float64", 8}, {"fp64", 8}};
    auto it = sizes.find(t);
    return it == sizes.end() ? 0 : it->second;
}

} // namespace

bool
CollectiveOfTestName(const std::string& name, CollectiveKind& kind)
{
    std::string s;
    for (char c : name)
    {
        if (std::isalnum(static_cast<unsigned char>(c)))
        {
            s.push_back(char(std::tolower(static_cast<unsigned char>(c))));
        }
    }
    const std::pair<const char*, CollectiveKind> names[]
        = {{"allreduce", CollectiveKind::kAllReduce},
           {"allgather", CollectiveKind::kAllGather},
           {"reducescatter", CollectiveKind::kReduceScatter},
           {"alltoall", CollectiveKind::kAllToAll},
           {"broadcast", CollectiveKind::kBroadcast},
           {"reduce", CollectiveKind::kReduce}};
    for (const auto& [n, k] : names)
    {
        if (s.find(n) != std::string::npos)
        {
            kind = k;
            return true;
        }
    }
    return false;
}

MeasurementSet
ParseMeasurementCsv(std::string_view text, const std::string& file)
{
    MeasurementSet set;
    const CsvTable t = CsvTable::Parse(text, file);
    const bool deepep = t.Has("dispatch_avg_t_us") || t.Has("dispatch_transmit_us");
    const bool ll = t.Has("dispatch_avg_t_us");
    // Every column a row reads is required up front (a DeepEP table names its mode's times).
    std::vector<std::string> required
        = deepep ? std::vector<std::string>{"op_name",
                                            "hidden_size",
                                            "num_token",
                                            "num_topk",
                                            "num_experts"}
                 : std::vector<std::string>{
                     "op_name", "nccl_dtype", "num_gpus", "message_size", "latency"};
    if (deepep && ll)
    {
        required.insert(required.end(), {"dispatch_avg_t_us", "combine_avg_t_us"});
    }
    else if (deepep)
    {
        required.insert(required.end(),
                        {"dispatch_sms", "dispatch_transmit_us", "combine_transmit_us"});
    }
    t.Require(required);
    const size_t opCol = t.Column("op_name");
    for (size_t row = 0; row < t.Rows(); ++row)
    {
        auto count = [&](const char* c, uint64_t lo, uint64_t hi)
        {
            return t.Count(row, t.Column(c), lo, hi);
        };
        auto positive = [&](const char* c)
        {
            return t.Positive(row, t.Column(c));
        };
        const std::string source = file + ":" + t.Where(row).substr(5);
        if (deepep)
        {
            MoePoint p;
            p.mode = t.Text(row, opCol);
            p.hidden = uint32_t(count("hidden_size", 1, 1 << 20));
            p.tokens = uint32_t(count("num_token", 1, 1 << 24));
            p.topk = uint32_t(count("num_topk", 1, 1024));
            p.experts = uint32_t(count("num_experts", 1, 1 << 16));
            // DeepEP's groups are whole servers of 8 GPUs; 4096 servers is 32768 GPUs.
            p.nodes = t.Has("node_num") ? uint32_t(count("node_num", 1, 4096)) : 1;
            p.device = t.Has("device") ? t.Text(row, t.Column("device")) : "";
            if (p.topk > p.experts)
            {
                t.Fail(row,
                       t.Column("num_topk"),
                       "at most num_experts (" + std::to_string(p.experts) + ")",
                       std::to_string(p.topk));
            }
            if (ll)
            {
                p.dispatchUs = positive("dispatch_avg_t_us");
                p.combineUs = positive("combine_avg_t_us");
            }
            else
            {
                p.sms = uint32_t(count("dispatch_sms", 1, 100000));
                p.dispatchUs = positive("dispatch_transmit_us");
                p.combineUs = positive("combine_transmit_us");
            }
            p.source = source;
            set.moe.push_back(p);
            continue;
        }
        MeasuredPoint p;
        if (!CollectiveOfTestName(t.Text(row, opCol), p.kind))
        {
            t.Fail(row,
                   opCol,
                   "all_reduce, all_gather, reduce_scatter, alltoall, broadcast or reduce",
                   "\"" + t.Text(row, opCol).substr(0, 40) + "\"");
        }
        p.dtype = t.Text(row, t.Column("nccl_dtype"));
        const uint32_t elem = BytesOfType(p.dtype);
        if (elem == 0)
        {
            t.Fail(row,
                   t.Column("nccl_dtype"),
                   "a dtype such as half, bfloat16, float or int8",
                   "\"" + p.dtype.substr(0, 40) + "\"");
        }
        p.ranks = uint32_t(count("num_gpus", 1, 1 << 20));
        // message_size counts ELEMENTS (README of the corpus); latency is in MILLISECONDS.
        p.bytes = count("message_size", 1, (uint64_t(1) << 50) / elem) * elem;
        p.timeUs = positive("latency") * 1000.0;
        if (t.Has("device"))
        {
            p.device = t.Text(row, t.Column("device"));
        }
        p.source = source;
        set.collectives.push_back(p);
    }
    return set;
}

std::vector<MeasuredPoint>
ParseNcclTestsLog(std::string_view text, const std::string& file, const std::string& collectiveHint)
{
    std::vector<std::string> lines = Lines(text);
    CollectiveKind kind = CollectiveKind::kAllReduce;
    bool haveKind = false;
    uint64_t nThread = 1;
    uint64_t nGpus = 1;
    uint32_t rankLines = 0;
    std::string device;
    for (const std::string& l : lines)
    {
        const size_t cts = l.find("Collective test starting:");
        if (cts != std::string::npos)
        {
            haveKind = CollectiveOfTestName(l.substr(cts + 25), kind);
        }
        if (l.rfind("# nThread", 0) == 0)
        {
            std::istringstream ss(l.substr(1));
            std::string key;
            while (ss >> key)
            {
                std::string v;
                if ((key == "nThread" || key == "nGpus") && ss >> v)
                {
                    uint64_t x = 0;
                    if (!ParseCount(v, x) || x == 0 || x > 100000)
                    {
                        throw fabricsim::InputError(
                            file, key, "a positive count", "\"" + v.substr(0, 20) + "\"");
                    }
                    (key == "nThread" ? nThread : nGpus) = x;
                }
            }
        }
        if (l.rfind("#  Rank", 0) == 0 || l.rfind("# Rank", 0) == 0)
        {
            rankLines++;
            const size_t dev = l.find(']');
            if (dev != std::string::npos && device.empty())
            {
                device = l.substr(dev + 1);
                device.erase(0, device.find_first_not_of(' '));
            }
        }
    }
    if (!haveKind)
    {
        haveKind = CollectiveOfTestName(file.substr(file.find_last_of('/') + 1), kind)
                   || (!collectiveHint.empty() && CollectiveOfTestName(collectiveHint, kind));
    }
    if (!haveKind)
    {
        throw fabricsim::InputError(
            file,
            "collective",
            "a '# Collective test starting: <name>_perf' line, a collective in "
            "the file name (all_reduce_perf.txt) or --coll",
            "none of them");
    }
    const uint32_t ranks = rankLines > 0 ? rankLines : uint32_t(nThread * nGpus);
    std::vector<MeasuredPoint> points;
    for (size_t ln = 0; ln < lines.size(); ++ln)
    {
        const std::string& l = lines[ln];
        const size_t first = l.find_first_not_of(" \t");
        if (first == std::string::npos || l[first] == '#'
            || !std::isdigit(static_cast<unsigned char>(l[first])))
        {
            continue; // comments, banners and the closing lines
        }
        std::istringstream ss(l);
        std::vector<std::string> f;
        std::string w;
        while (ss >> w)
        {
            f.push_back(w);
        }
        const std::string where = "line " + std::to_string(ln + 1);
        // size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong
        if (f.size() < 9)
        {
            throw fabricsim::InputError(file,
                                        where,
                                        "size count type redop root time algbw busbw #wrong ...",
                                        "\"" + l.substr(0, 80) + "\"");
        }
        MeasuredPoint p;
        p.kind = kind;
        p.ranks = ranks;
        p.dtype = f[2];
        p.device = device;
        uint64_t size = 0;
        double t = 0;
        if (!ParseCount(f[0], size) || size == 0 || size > (uint64_t(1) << 50))
        {
            throw fabricsim::InputError(
                file, where + " size", "a size in bytes", "\"" + f[0].substr(0, 30) + "\"");
        }
        if (!ParsePositive(f[5], t))
        {
            throw fabricsim::InputError(file,
                                        where + " time",
                                        "the out-of-place time in us",
                                        "\"" + f[5].substr(0, 30) + "\"");
        }
        p.bytes = size;
        p.timeUs = t;
        p.source = file + ":" + std::to_string(ln + 1);
        points.push_back(p);
    }
    if (points.empty())
    {
        throw fabricsim::InputError(
            file, "", "nccl-tests result rows (size count type ...)", "none");
    }
    return points;
}

MeasurementSet
ReadMeasurements(const std::string& path, const std::string& collectiveHint)
{
    const std::string text = ReadFileBounded(path, "measurement table", kDataFileLimits);
    const std::string first = text.substr(0, text.find('\n'));
    if (first.find(',') != std::string::npos && first[0] != '#')
    {
        return ParseMeasurementCsv(text, path);
    }
    MeasurementSet set;
    set.collectives = ParseNcclTestsLog(text, path, collectiveHint);
    return set;
}

} // namespace fabricsim
