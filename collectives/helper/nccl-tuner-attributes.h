/*
 * The NCCL tuner's configuration (fabricsim::TunerConfig, collectives/calibration/nccl-tuner.h)
 * as typed ns-3 attributes, so that a scenario's "attributes" object, --ns3::NcclTuner::...
 * on the command line and Config set it like every other model parameter. The calibration
 * library itself is plain C++; only this holder knows ns-3.
 */
#ifndef FABRICSIM_NCCL_TUNER_ATTRIBUTES_H
#define FABRICSIM_NCCL_TUNER_ATTRIBUTES_H

#include "nccl-tuner.h"

#include "ns3/data-rate.h"
#include "ns3/object.h"

#include <string>

namespace ns3
{

/**
 * \brief Attribute holder for fabricsim::TunerConfig: how calibration chooses NCCL's algorithm
 * and protocol per point, and the system facts it needs.
 *
 * Attributes: Protocols, LL128StepScale, LLStepScale, LL128LaunchScale, LLLaunchScale,
 * NvlsLaunchScale, NvlsBandwidthScale, LLBandwidthScale, LLAllReduceBandwidthScale,
 * LLMaxBandwidth,
 * InNetworkReduction, GpuClock, LocalCopyEfficiency.
 */
class NcclTuner : public Object
{
  public:
    static TypeId GetTypeId();
    NcclTuner();

    /// The configuration these attribute values describe.
    /// \throws fabricsim::InputError on an invalid Protocols list
    fabricsim::TunerConfig GetConfig() const;

  private:
    std::string m_protocols;
    double m_ll128StepScale;
    double m_llStepScale;
    double m_ll128LaunchScale;
    double m_llLaunchScale;
    double m_nvlsLaunchScale;
    double m_nvlsBandwidthScale;
    double m_llBandwidthScale;
    double m_llAllReduceBandwidthScale;
    ns3::DataRate m_llMaxRate;
    bool m_inNetworkReduction;
    double m_gpuClockMhz;
    double m_localCopyEfficiency;
};

/// The tuner configuration of the current attribute defaults (scenario "attributes").
fabricsim::TunerConfig TunerConfigFromAttributes();

} // namespace ns3

#endif
