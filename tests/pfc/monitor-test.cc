// Monitor time series: CSV headers and plausible values (per-QP DCQCN rates fall below line
// rate in an incast, CNP counts add up to the NIC totals, pause state matches PFC activity);
// off by default, where it writes nothing and schedules no event.
#include "pfc-scenarios.h"
#include "scenario-runner.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

using nlohmann::json;
using namespace fabricsim::test;
namespace fs = std::filesystem;

namespace
{

const std::map<std::string, std::string> kHeaders
    = {{"queue.csv", "time_ns,node,port,priority,bytes"},
       {"link_util.csv", "time_ns,node,port,utilisation"},
       {"qp_rate.csv", "time_ns,host,qpn,dst,sport,priority,rate_gbps"},
       {"cnp.csv", "time_ns,host,qpn,dst,sport,cnps,cnps_total"},
       {"pause.csv", "time_ns,node,port,priority,paused_ns"}};

std::string
Header(const Csv& c)
{
    std::string h;
    for (size_t i = 0; i < c.header.size(); ++i)
    {
        h += (i ? "," : "") + c.header[i];
    }
    return h;
}

json
WithMonitor(json sc, json monitor)
{
    sc["monitor"] = monitor;
    return sc;
}

} // namespace

TEST(Monitor, DcqcnIncastSeries)
{
    auto dir = TempDir("mon-dcqcn");
    json s = RunScenario(WithMonitor(Incast("dcqcn", 8, 1000000), {{"interval_ns", 10000}}), dir);
    for (auto& [file, header] : kHeaders)
    {
        ASSERT_TRUE(fs::exists(dir + "/" + file)) << file;
        EXPECT_EQ(Header(ReadCsv(dir + "/" + file)), header) << file;
    }
    // Per-QP rate: every sender starts at line rate and DCQCN cuts it on CNPs.
    Csv rates = ReadCsv(dir + "/qp_rate.csv");
    ASSERT_GT(rates.rows.size(), 8u);
    double lo = 1e9;
    for (auto& r : rates.rows)
    {
        double g = std::stod(r["rate_gbps"]);
        EXPECT_GT(g, 0.0);
        EXPECT_LE(g, 100.0);
        EXPECT_EQ(r["dst"], "8");
        lo = std::min(lo, g);
    }
    EXPECT_LT(lo, 50.0);
    // CNPs per QP add up to the NIC totals, interval by interval and cumulatively.
    Csv cnps = ReadCsv(dir + "/cnp.csv");
    uint64_t sum = 0;
    std::map<std::string, uint64_t> perQp;
    std::map<std::string, uint64_t> lastTotal;
    for (auto& r : cnps.rows)
    {
        std::string qp = r["host"] + "/" + r["qpn"];
        uint64_t n = std::stoull(r["cnps"]);
        EXPECT_GT(n, 0u);
        perQp[qp] += n;
        sum += n;
        EXPECT_EQ(std::stoull(r["cnps_total"]), perQp[qp]) << qp;
        lastTotal[qp] = std::stoull(r["cnps_total"]);
    }
    uint64_t nic = s["nic"]["cnps_received"].get<uint64_t>();
    EXPECT_GT(nic, 0u);
    EXPECT_EQ(sum, nic);
    EXPECT_EQ(perQp.size(), 8u);
    // Queue samples stay within the run's maximum; the receiver's link runs near line rate.
    Csv q = ReadCsv(dir + "/queue.csv");
    ASSERT_FALSE(q.rows.empty());
    for (auto& r : q.rows)
    {
        EXPECT_LE(std::stoull(r["bytes"]), s["queue"]["max_bytes"].get<uint64_t>());
        EXPECT_EQ(r["priority"], "3");
    }
    // Frames count when they start, so one interval may hold one frame more than fits.
    const double oneFrame = 1082.0 * 8 / (100e9 * 10e-6);
    Csv l = ReadCsv(dir + "/link_util.csv");
    double busy = 0;
    int busyRows = 0;
    for (auto& r : l.rows)
    {
        double u = std::stod(r["utilisation"]);
        EXPECT_GT(u, 0.0);
        EXPECT_LE(u, 1.0 + oneFrame + 1e-9) << r["node"] << " " << r["port"] << " " << r["time_ns"];
        if (r["node"] == "sw0" && r["port"] == "8" && std::stoll(r["time_ns"]) >= 100000
            && std::stoll(r["time_ns"]) <= 600000)
        {
            busy += u;
            busyRows++;
        }
    }
    // The receiver's link is saturated through the incast (8 MB take 0.67 ms at 100 Gb/s).
    ASSERT_GT(busyRows, 40);
    EXPECT_NEAR(busy / busyRows, 1.0, 0.01);
}

TEST(Monitor, PauseStateFollowsPfc)
{
    auto dir = TempDir("mon-pause");
    json s = RunScenario(
        WithMonitor(Incast("none", 8, 1000000), {{"interval_ns", 5000}, {"pause_state", true}}),
        dir);
    ASSERT_GT(s["pfc"]["pause_frames_sent"].get<uint64_t>(), 0u);
    Csv p = ReadCsv(dir + "/pause.csv");
    ASSERT_FALSE(p.rows.empty());
    for (auto& r : p.rows)
    {
        // The switch pauses the senders' NICs; nobody pauses the switch.
        EXPECT_EQ(r["node"].rfind("host", 0), 0u) << r["node"];
        EXPECT_NE(r["node"], "host8");
        EXPECT_EQ(r["priority"], "3");
        EXPECT_GE(std::stoll(r["paused_ns"]), 0);
        EXPECT_LE(std::stoll(r["paused_ns"]), std::stoll(r["time_ns"]));
    }
}

TEST(Monitor, SeriesAreSelectableAndWindowed)
{
    auto dir = TempDir("mon-select");
    RunScenario(WithMonitor(Incast("dcqcn", 4, 500000),
                            {{"interval_ns", 10000},
                             {"start_ns", 20000},
                             {"end_ns", 60000},
                             {"queues", false},
                             {"qp_rates", false}}),
                dir);
    EXPECT_FALSE(fs::exists(dir + "/queue.csv"));
    EXPECT_FALSE(fs::exists(dir + "/qp_rate.csv"));
    EXPECT_TRUE(fs::exists(dir + "/cnp.csv"));
    EXPECT_TRUE(fs::exists(dir + "/pause.csv"));
    Csv l = ReadCsv(dir + "/link_util.csv");
    ASSERT_FALSE(l.rows.empty());
    for (auto& r : l.rows)
    {
        // The sample at start_ns only sets the baseline.
        EXPECT_GT(std::stoll(r["time_ns"]), 20000);
        EXPECT_LE(std::stoll(r["time_ns"]), 60000);
    }
}

TEST(Monitor, OffByDefaultWritesNothingAndSchedulesNothing)
{
    json base = Incast("dcqcn", 4, 500000);
    auto a = TempDir("mon-none");
    json sa = RunScenario(base, a);
    auto b = TempDir("mon-zero");
    json sb
        = RunScenario(WithMonitor(base, {{"interval_ns", 0}, {"queues", true}, {"cnps", true}}), b);
    for (auto& [file, header] : kHeaders)
    {
        EXPECT_FALSE(fs::exists(a + "/" + file)) << file;
        EXPECT_FALSE(fs::exists(b + "/" + file)) << file;
    }
    // The event count is in timing.json (summary.json holds only what the run found).
    auto eventsOf = [](const std::string& dir)
    {
        return json::parse(ReadFile(dir + "/timing.json"))["events"].get<uint64_t>();
    };
    EXPECT_FALSE(sa["sim"].contains("events"));
    uint64_t events = eventsOf(a);
    EXPECT_EQ(eventsOf(b), events);
    // Switched on, it adds exactly its sampling events and changes nothing else.
    const uint64_t interval = 10000;
    auto c = TempDir("mon-on");
    json sc = RunScenario(WithMonitor(base, {{"interval_ns", interval}}), c);
    uint64_t end = sa["sim"]["simulated_ns"].get<uint64_t>();
    ASSERT_EQ(sc["sim"]["simulated_ns"].get<uint64_t>(), end);
    uint64_t samples = (end + interval - 1) / interval; // at 0, interval, ... before the end
    uint64_t extra = eventsOf(c) - events;
    EXPECT_TRUE(extra == samples || (end % interval == 0 && extra == samples + 1))
        << extra << " vs " << samples;
    EXPECT_EQ(ReadFile(a + "/fct.csv"), ReadFile(c + "/fct.csv"));
}
