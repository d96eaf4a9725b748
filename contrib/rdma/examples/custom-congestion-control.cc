/*
 * A user-defined congestion control plugged in through the interface, without touching the
 * rdma module: a plain AIMD on ECN echoes. Registered under the scenario name "aimd" and used
 * for a 4-to-1 incast on one switch; prints each flow's completion time.
 *
 *   build/bin/custom-congestion-control --senders=4 --flowKb=500
 *   build/bin/custom-congestion-control --ns3::ExampleAimd::Decrease=0.7
 */
#include "ns3/command-line.h"
#include "ns3/double.h"
#include "ns3/fabric-topology-helper.h"
#include "ns3/fabric-traffic-helper.h"
#include "ns3/simulator.h"

#include <iostream>

using namespace ns3;

/// Multiplicative decrease once per RTT on ECN echoes, additive increase per ACK otherwise.
class ExampleAimd : public CongestionControl
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::ExampleAimd")
                                .SetParent<CongestionControl>()
                                .AddConstructor<ExampleAimd>()
                                .AddAttribute("Decrease",
                                              "Rate factor applied on an ECN echo (once per RTT).",
                                              DoubleValue(0.5),
                                              MakeDoubleAccessor(&ExampleAimd::m_decrease),
                                              MakeDoubleChecker<double>(0, 1))
                                .AddAttribute("IncreaseBps",
                                              "Rate added per ACK without an echo (bits/s).",
                                              DoubleValue(50e6),
                                              MakeDoubleAccessor(&ExampleAimd::m_increase),
                                              MakeDoubleChecker<double>(0));
        return tid;
    }

    std::string Name() const override
    {
        return "aimd";
    }

    void OnAck(const AckSample& ack) override
    {
        Time now = Simulator::Now();
        if (ack.ecnEcho && now - m_lastCut > m_baseRtt)
        {
            m_lastCut = now;
            SetRate(uint64_t(double(GetRateBps()) * m_decrease));
        }
        else if (!ack.ecnEcho)
        {
            SetRate(GetRateBps() + uint64_t(m_increase));
        }
    }

  private:
    double m_decrease = 0.5;
    double m_increase = 50e6;
    Time m_lastCut;
};

NS_OBJECT_ENSURE_REGISTERED(ExampleAimd);

int
main(int argc, char** argv)
{
    Time::SetResolution(Time::PS);
    uint32_t senders = 4;
    uint32_t flowKb = 500;
    CommandLine cmd(__FILE__);
    cmd.AddValue("senders", "incast senders", senders);
    cmd.AddValue("flowKb", "kilobytes per sender", flowKb);
    cmd.Parse(argc, argv);

    // The whole plug-in step: give the algorithm a scenario name.
    CongestionControlFactory::Register("aimd", ObjectFactory("ns3::ExampleAimd"));

    fabricsim::Topology topo
        = fabricsim::BuildTopology({{"type", "single-switch"}, {"hosts", senders + 1}}, "example");
    FabricTopologyHelper fabric(topo);
    EcnConfig ecn; // mark from 100 KB per 25G (400 KB at 100G)
    fabric.SetEcn(ecn);
    fabric.Install();
    FabricTrafficHelper traffic(fabric);
    ObjectFactory cc = CongestionControlFactory::Get("aimd");
    for (uint32_t s = 0; s < senders; ++s)
    {
        traffic.AddFlow(s, senders, uint64_t(flowKb) * 1000, Time(0), 3, cc);
    }
    traffic.SetAllDoneCallback(Callback<void>([]() { Simulator::Stop(); }));
    Simulator::Stop(MilliSeconds(100));
    Simulator::Run();
    for (const auto& f : traffic.GetFlows())
    {
        std::cout << "flow " << f.id << " " << f.src << "->" << f.dst << " fct "
                  << (f.done ? (f.finish - f.start).GetMicroSeconds() : -1) << " us (ideal "
                  << f.ideal.GetMicroSeconds() << " us)\n";
    }
    bool ok = traffic.CompletedFlows() == traffic.GetFlows().size();
    Simulator::Destroy();
    return ok ? 0 : 1;
}
