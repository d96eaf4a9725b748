// Scenario keys of PFC safety and monitors: defaults, and bad values named by field.
#include "fabric-scenario.h"
#include "input-error.h"
#include "pfc-scenarios.h"

#include <gtest/gtest.h>

using fabricsim::ParseFabricScenario;
using nlohmann::json;

namespace
{

/// The InputError message for `doc`, or "" when it parses.
std::string
ErrorOf(const json& doc)
{
    try
    {
        ParseFabricScenario(doc, "s.json");
    }
    catch (const fabricsim::InputError& e)
    {
        return e.what();
    }
    return "";
}

} // namespace

TEST(ScenarioKeys, Defaults)
{
    auto sc = ParseFabricScenario(fabricsim::test::Incast("dcqcn", 2, 1000), "s.json");
    EXPECT_EQ(sc.monitor.intervalNs, 0u);
    EXPECT_FALSE(sc.sw.watchdog.enabled);
    EXPECT_EQ(sc.deadlock.checkIntervalNs, 100000u);
    EXPECT_TRUE(sc.deadlock.stop);
    EXPECT_TRUE(sc.routes.empty());

    json d = fabricsim::test::Incast("dcqcn", 2, 1000);
    d["switch"]["pfc_watchdog"] = json::object();
    sc = ParseFabricScenario(d, "s.json");
    EXPECT_TRUE(sc.sw.watchdog.enabled);
    EXPECT_EQ(sc.sw.watchdog.action, "drop");
    EXPECT_EQ(sc.sw.watchdog.detectionNs, 200000000u);
    EXPECT_FALSE(sc.deadlock.stop); // the watchdog resolves deadlocks, the detector reports them
    d["switch"]["pfc_watchdog"]["action"] = "report";
    EXPECT_TRUE(ParseFabricScenario(d, "s.json").deadlock.stop);
}

TEST(ScenarioKeys, RoutesResolveNeighboursToPorts)
{
    auto sc = ParseFabricScenario(fabricsim::test::RingDeadlock(1000), "s.json");
    ASSERT_EQ(sc.routes.size(), 3u);
    // sw0: port 0 host0, port 1 sw1, port 2 sw2.
    EXPECT_EQ(sc.routes[0].node, sc.topology.FindNode("sw0"));
    EXPECT_EQ(sc.routes[0].dstHosts, std::vector<uint32_t>{2});
    EXPECT_EQ(sc.routes[0].ports, std::vector<uint16_t>{1});
    json d = fabricsim::test::RingDeadlock(1000);
    d["routes"] = json::array({{{"switch", "sw1"}, {"dst", json::array({0, 2})}, {"port", 0}}});
    sc = ParseFabricScenario(d, "s.json");
    EXPECT_EQ(sc.routes[0].dstHosts, (std::vector<uint32_t>{0, 2}));
    EXPECT_EQ(sc.routes[0].ports, std::vector<uint16_t>{0});
}

struct BadKey
{
    const char* name;
    const char* pointer; ///< JSON pointer to set
    const char* value;   ///< JSON text
    const char* field;   ///< field the error must name
};

class ScenarioBadKey : public testing::TestWithParam<BadKey>
{
};

TEST_P(ScenarioBadKey, NamesTheField)
{
    json d = fabricsim::test::RingDeadlock(1000);
    d[json::json_pointer(GetParam().pointer)] = json::parse(GetParam().value);
    std::string e = ErrorOf(d);
    ASSERT_FALSE(e.empty());
    EXPECT_NE(e.find("s.json"), std::string::npos) << e;
    EXPECT_NE(e.find(GetParam().field), std::string::npos) << e;
}

INSTANTIATE_TEST_SUITE_P(
    Cases,
    ScenarioBadKey,
    testing::Values(
        BadKey{"monitor_bool", "/monitor/qp_rates", "\"yes\"", "monitor.qp_rates"},
        BadKey{"monitor_window", "/monitor", "{\"start_ns\": 10, \"end_ns\": 5}", "monitor.end_ns"},
        BadKey{"monitor_unknown", "/monitor/rates", "true", "rates"},
        BadKey{"wd_action",
               "/switch/pfc_watchdog",
               "{\"action\": \"reboot\"}",
               "switch.pfc_watchdog.action"},
        BadKey{"wd_poll",
               "/switch/pfc_watchdog",
               "{\"poll_interval_ns\": 0}",
               "switch.pfc_watchdog.poll_interval_ns"},
        BadKey{"on_detect", "/deadlock", "{\"on_detect\": \"panic\"}", "deadlock.on_detect"},
        BadKey{"route_switch", "/routes/0/switch", "\"host0\"", "routes[0].switch"},
        BadKey{"route_next", "/routes/1/next", "\"sw1\"", "routes[1].next"},
        BadKey{"route_port", "/routes/2/port", "7", "routes[2]"},
        BadKey{"route_dst", "/routes/0/dst", "9", "routes[0].dst"},
        BadKey{"routes_type", "/routes", "{}", "routes"}),
    [](const testing::TestParamInfo<BadKey>& i) { return std::string(i.param.name); });

TEST(ScenarioKeys, LossRecoveryKeys)
{
    json d = fabricsim::test::Incast("dcqcn", 2, 1000);
    auto sc = ParseFabricScenario(d, "s.json");
    EXPECT_EQ(sc.transport.lossRecovery, "go-back-n");
    EXPECT_EQ(sc.transport.rtoNs, 1000000u);
    EXPECT_EQ(sc.transport.rtoBackoff, 2.0);
    EXPECT_EQ(sc.transport.retryLimit, 7u);
    // NCCL's local ACK timeout: 4.096 us x 2^20, fixed.
    d["transport"]["local_ack_timeout"] = 20;
    sc = ParseFabricScenario(d, "s.json");
    EXPECT_EQ(sc.transport.rtoNs, 4294967296u);
    EXPECT_EQ(sc.transport.rtoBackoff, 1.0);
    d["transport"]["rto_ns"] = 1000;
    EXPECT_NE(ErrorOf(d).find("field 'transport.local_ack_timeout': expected either "
                              "local_ack_timeout or rto_ns, found both"),
              std::string::npos)
        << ErrorOf(d);
    d["transport"].erase("rto_ns");
    d["transport"]["local_ack_timeout"] = 32;
    EXPECT_NE(ErrorOf(d).find("transport.local_ack_timeout"), std::string::npos);
    d["transport"].erase("local_ack_timeout");
    d["transport"]["loss_recovery"] = "irn";
    EXPECT_NE(ErrorOf(d).find("field 'transport.loss_recovery': expected \"go-back-n\" or "
                              "\"selective\", found \"irn\""),
              std::string::npos)
        << ErrorOf(d);
    d["transport"]["loss_recovery"] = "selective";
    d["transport"]["rto_max_ns"] = 10;
    EXPECT_NE(ErrorOf(d).find("transport.rto_max_ns"), std::string::npos);
}
