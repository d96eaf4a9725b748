#include "busbw-plot.h"
#include "calibration-metrics.h"
#include "calibration-parameters.h"
#include "calibration-test-util.h"
#include "input-error.h"
#include "nelder-mead.h"
#include "output-writer.h"

#include <cmath>
#include <fstream>

namespace fabricsim
{
namespace
{

TEST(NelderMead, FindsTheMinimumOfASmoothBowlInsideTheBox)
{
    std::vector<FitDimension> dims = {{"x", 0, 1, 0.9, false}, {"y", 0.1, 100, 30, true}};
    FitResult r = NelderMead(
        dims,
        [](const std::vector<double>& v)
        { return std::pow(v[0] - 0.3, 2) + std::pow(std::log(v[1] / 2.0), 2); },
        200,
        1e-9);
    EXPECT_NEAR(r.best[0], 0.3, 0.01);
    EXPECT_NEAR(r.best[1], 2.0, 0.05);
    EXPECT_LE(r.evaluations, 200);
    EXPECT_EQ(r.history.size(), size_t(r.evaluations));
    // A minimum outside the box ends on its edge.
    FitResult edge = NelderMead(
        {{"z", 1, 2, 1.5, false}}, [](const std::vector<double>& v) { return v[0]; }, 50);
    EXPECT_NEAR(edge.best[0], 1.0, 1e-6);
}

TEST(CalibrationParameters, AssignmentsActOnTheScenarioTheyAreGiven)
{
    nlohmann::json doc = {{"topology",
                           {{"type", "rail-optimized"},
                            {"servers", 1},
                            {"accels_per_server", 8},
                            {"spines", 0},
                            {"host_link", {{"rate", "400Gbps"}}},
                            {"scale_up", {{"rate", "450GBps"}, {"delay", "100ns"}}}}}};
    std::vector<std::string> s = ParameterAssignments(
        {{"link_efficiency", 0.8}, {"hop_latency", 250}, {"launch_overhead", 6.5}}, doc, "x.json");
    const std::vector<std::string> expected
        = {"topology.host_link.delay=250ns",
           "topology.scale_up.delay=250ns",
           "attributes.ns3::CollectiveExecutor::LaunchLatency=6500ns",
           "topology.host_link.rate=3.2e+11",
           "topology.scale_up.rate=2.88e+12"};
    EXPECT_EQ(std::vector<std::string>(s.begin(), s.end()).size(), expected.size());
    for (const std::string& e : expected)
    {
        EXPECT_NE(std::find(s.begin(), s.end(), e), s.end()) << e;
    }
    EXPECT_DOUBLE_EQ(CurrentParameterValue("hop_latency", doc),
                     1000); // host_link: the 1 us default
    EXPECT_DOUBLE_EQ(CurrentParameterValue("launch_overhead", doc), 4.0);
    FitDimension d = CalibrationDimension("step_latency", doc, "--fit");
    EXPECT_TRUE(d.logScale);
    EXPECT_DOUBLE_EQ(d.start, 0.5);
    EXPECT_THROW(CalibrationDimension("warp_speed", doc, "--fit"), fabricsim::InputError);
    nlohmann::json bare = {{"topology", {{"type", "single-switch"}, {"hosts", 2}}}};
    EXPECT_THROW(CalibrationDimension("link_efficiency", bare, "--fit"), fabricsim::InputError);
    EXPECT_THROW(ParameterAssignments({{"link_efficiency", 2.0}}, doc, "x"), fabricsim::InputError);
}

TEST(CalibrationParameters, OverlayFilesRoundTripAndExpandIntoSets)
{
    const std::string dir = ScratchDir("overlay");
    nlohmann::json doc
        = {{"topology",
            {{"type", "single-switch"}, {"hosts", 8}, {"host_link", {{"rate", "450GBps"}}}}}};
    nlohmann::json o = MakeOverlay({{"link_efficiency", 0.5}, {"step_latency", 1.25}},
                                   doc,
                                   "s.json",
                                   {{"scenario", "s.json"}});
    const std::string path = dir + "/overlay.json";
    WriteFileAtomic(path, o.dump(2));
    std::map<std::string, double> p = ReadOverlayParameters(path);
    EXPECT_DOUBLE_EQ(p["link_efficiency"], 0.5);
    EXPECT_DOUBLE_EQ(p["step_latency"], 1.25);
    std::vector<std::string> sets = ReadOverlaySets(path);
    ASSERT_EQ(sets.size(), 2u);
    std::vector<std::string> args
        = ExpandOverlayArgs({"collective", "s.json", "--overlay", path, "--set", "seed=2"});
    const std::vector<std::string> want
        = {"collective", "--set", sets[0], "--set", sets[1], "s.json", "--set", "seed=2"};
    EXPECT_EQ(args, want);
    WriteFileAtomic(dir + "/bad.json", "{\"fabricsim_overlay\": 1, \"set\": [3]}");
    EXPECT_THROW(ReadOverlaySets(dir + "/bad.json"), fabricsim::InputError);
    WriteFileAtomic(dir + "/notjson.json", "{");
    EXPECT_THROW(ReadOverlaySets(dir + "/notjson.json"), fabricsim::InputError);
    EXPECT_THROW(ExpandOverlayArgs({"run", "--overlay"}), fabricsim::InputError);
}

TEST(BusBwPlot, OnePanelPerCollectiveAndRankCount)
{
    std::vector<PredictedPoint> pts;
    for (uint32_t ranks : {2u, 8u})
    {
        for (uint64_t b = 1 << 20; b <= (64u << 20); b *= 4)
        {
            MeasuredPoint m;
            m.kind = CollectiveKind::kAllGather;
            m.ranks = ranks;
            m.bytes = b;
            m.timeUs = double(b) / 3e5;
            pts.push_back({m, double(b) / 3.3e5});
        }
    }
    const std::string svg = BusBwPlotSvg(pts, "t<1>");
    EXPECT_EQ(svg.rfind("<svg", 0), 0u);
    EXPECT_NE(svg.find("allgather, 2 ranks"), std::string::npos);
    EXPECT_NE(svg.find("allgather, 8 ranks"), std::string::npos);
    EXPECT_NE(svg.find("t&lt;1&gt;"), std::string::npos);
    EXPECT_EQ(std::count(svg.begin(), svg.end(), '\n') > 20, true);
    EXPECT_EQ(svg, BusBwPlotSvg(pts, "t<1>")); // deterministic
}

} // namespace
} // namespace fabricsim

// A DeepEP point measured more than 15 % slower than the same shape with more tokens is one its
// own table contradicts; repeats of the same tokens, other SM budgets and the other phase are
// not larger calls of it.
TEST(CalibrationMetrics, DeepEpPointsTheirOwnTableContradicts)
{
    using fabricsim::ContradictedMoePoints;
    using fabricsim::MoePoint;
    auto point = [](uint32_t tokens, double d, uint32_t sms = 4)
    {
        MoePoint p;
        p.mode = "normal";
        p.hidden = 4096;
        p.topk = 8;
        p.experts = 256;
        p.sms = sms;
        p.tokens = tokens;
        p.dispatchUs = d;
        p.combineUs = 30;
        return p;
    };
    // 40 us at one token against 33 at four; 34.5 at two is within 15 % of 33.
    std::vector<MoePoint> pts{point(1, 40), point(2, 34.5), point(4, 33), point(8, 36)};
    EXPECT_EQ(ContradictedMoePoints(pts, true), (std::vector<bool>{true, false, false, false}));
    EXPECT_EQ(ContradictedMoePoints(pts, false), std::vector<bool>(4, false));
    // A tolerance of 25 %: 33 is not below 0.75 x 40.
    EXPECT_EQ(ContradictedMoePoints(pts, true, 0.25), std::vector<bool>(4, false));
    // Another SM budget is another series.
    pts[2].sms = 8;
    EXPECT_EQ(ContradictedMoePoints(pts, true), std::vector<bool>(4, false));
    // A repeat of a call is not a larger one: two samples at 8 tokens, 40 and 29, contradict
    // neither each other nor the larger call after them, but both smaller calls fall.
    pts[2] = point(8, 40);
    pts[3] = point(8, 29);
    pts.push_back(point(16, 45));
    EXPECT_EQ(ContradictedMoePoints(pts, true),
              (std::vector<bool>{true, true, false, false, false}));
}
