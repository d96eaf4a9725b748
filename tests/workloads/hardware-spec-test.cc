#include "hardware-spec.h"
#include "input-error.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

using namespace fabricsim;
using nlohmann::json;

TEST(HardwarePresets, TableFigures)
{
    HardwareSpec h100 = HardwareSpec::Preset("H100");
    EXPECT_DOUBLE_EQ(h100.PeakFlops(DType::Bf16), 989e12);
    EXPECT_DOUBLE_EQ(h100.PeakFlops(DType::Fp8), 1979e12);
    EXPECT_DOUBLE_EQ(h100.hbmCapacityBytes, 80e9);
    EXPECT_DOUBLE_EQ(h100.hbmBwBytesPerSec, 3.35e12);
    EXPECT_DOUBLE_EQ(h100.scaleUpBwBytesPerSec, 450e9);
    EXPECT_DOUBLE_EQ(h100.nicBwBytesPerSec, 50e9);
    EXPECT_DOUBLE_EQ(h100.etaMemory, 0.85);
    EXPECT_DOUBLE_EQ(h100.etaCompute, 0.7);
    EXPECT_DOUBLE_EQ(h100.launchOverheadSec, 3e-6);

    EXPECT_DOUBLE_EQ(HardwareSpec::Preset("a100").PeakFlops(DType::Bf16), 312e12);
    EXPECT_DOUBLE_EQ(HardwareSpec::Preset("H200").hbmCapacityBytes, 141e9);
    EXPECT_DOUBLE_EQ(HardwareSpec::Preset("H200").hbmBwBytesPerSec, 4.8e12);
    EXPECT_DOUBLE_EQ(HardwareSpec::Preset("B200").PeakFlops(DType::Fp8), 4500e12);
    EXPECT_DOUBLE_EQ(HardwareSpec::Preset("GB200").nicBwBytesPerSec, 100e9);
    EXPECT_DOUBLE_EQ(HardwareSpec::Preset("MI300X").hbmCapacityBytes, 192e9);
    EXPECT_DOUBLE_EQ(HardwareSpec::Preset("MI300X").PeakFlops(DType::Fp8), 2615e12);
    // The measured serving runs' GPU and the other card 8B models are served on (PCIe only).
    const HardwareSpec pro = HardwareSpec::Preset("RTX-PRO-6000");
    EXPECT_DOUBLE_EQ(pro.hbmCapacityBytes, 96e9);
    EXPECT_DOUBLE_EQ(pro.hbmBwBytesPerSec, 1.792e12);
    EXPECT_DOUBLE_EQ(pro.PeakFlops(DType::Bf16), 500e12);
    EXPECT_DOUBLE_EQ(pro.scaleUpBwBytesPerSec, 64e9);
    EXPECT_DOUBLE_EQ(pro.collectiveBwBytesPerSec, 22.2e9);
    EXPECT_DOUBLE_EQ(HardwareSpec::Preset("H100").collectiveBwBytesPerSec, 0); // not measured
    // The Server Edition differs only in its memory clock: 512 bits at 25 Gb/s.
    const HardwareSpec server = HardwareSpec::Preset("RTX-PRO-6000-Server");
    EXPECT_DOUBLE_EQ(server.hbmBwBytesPerSec, 1.597e12);
    EXPECT_DOUBLE_EQ(server.hbmCapacityBytes, 96e9);
    EXPECT_DOUBLE_EQ(server.PeakFlops(DType::Bf16), 500e12);
    // SMs (whitepapers): what DeepEP's SM budget is a share of.
    for (const auto& [name, sms] :
         std::vector<std::pair<std::string, uint32_t>>{{"A100", 108},
                                                       {"H100", 132},
                                                       {"H800", 132},
                                                       {"H20", 78},
                                                       {"H200", 132},
                                                       {"B200", 148},
                                                       {"MI300X", 304},
                                                       {"RTX-PRO-6000", 188},
                                                       {"RTX-4090", 128}})
    {
        EXPECT_EQ(HardwareSpec::Preset(name).sms, sms) << name;
    }
    EXPECT_EQ(server.sms, 188u);
    const HardwareSpec g4090 = HardwareSpec::Preset("rtx-4090");
    EXPECT_DOUBLE_EQ(g4090.hbmCapacityBytes, 24e9);
    EXPECT_DOUBLE_EQ(g4090.hbmBwBytesPerSec, 1.008e12);
    EXPECT_DOUBLE_EQ(g4090.PeakFlops(DType::Bf16), 165.2e12);
    EXPECT_DOUBLE_EQ(g4090.PeakFlops(DType::Fp8), 330.3e12);
    // H800: H100's compute and memory, NVLink 200 GB/s per direction, 400 Gb/s NIC.
    const HardwareSpec h800 = HardwareSpec::Preset("H800");
    EXPECT_DOUBLE_EQ(h800.PeakFlops(DType::Fp8), 1979e12);
    EXPECT_DOUBLE_EQ(h800.hbmBwBytesPerSec, 3.35e12);
    EXPECT_DOUBLE_EQ(h800.scaleUpBwBytesPerSec, 200e9);
    EXPECT_DOUBLE_EQ(h800.nicBwBytesPerSec, 50e9);
    EXPECT_EQ(HardwareSpec::PresetNames().size(), 11u);
    for (const auto& n : HardwareSpec::PresetNames())
    {
        EXPECT_GT(HardwareSpec::Preset(n).pricePerHour, 0.0) << n;
    }
}

TEST(HardwareSpec, DtypeFallbacks)
{
    HardwareSpec a100 = HardwareSpec::Preset("A100");
    EXPECT_DOUBLE_EQ(a100.PeakFlops(DType::Fp8), 312e12);  // no fp8: 16-bit peak
    EXPECT_DOUBLE_EQ(a100.PeakFlops(DType::Fp32), 156e12); // TF32
    EXPECT_DOUBLE_EQ(a100.EffectiveFlops(DType::Bf16), 312e12 * 0.7);
    EXPECT_DOUBLE_EQ(a100.EffectiveHbmBw(), 2.039e12 * 0.85);
}

TEST(HardwareSpec, PresetOverriddenFieldByField)
{
    HardwareSpec h = HardwareSpec::Load(json{{"preset", "H100"}, {"hbm_bw", "3.0TB/s"}});
    EXPECT_DOUBLE_EQ(h.hbmBwBytesPerSec, 3.0e12);
    EXPECT_DOUBLE_EQ(h.PeakFlops(DType::Bf16), 989e12); // untouched
    HardwareSpec g = HardwareSpec::Load(
        json{{"preset", "h100"}, {"peak_flops", {{"fp8", "2PFLOPS"}}}, {"eta_memory", 0.9}});
    EXPECT_DOUBLE_EQ(g.PeakFlops(DType::Fp8), 2e15);
    EXPECT_DOUBLE_EQ(g.PeakFlops(DType::Bf16), 989e12);
    EXPECT_DOUBLE_EQ(g.etaMemory, 0.9);
    EXPECT_EQ(HardwareSpec::Load(json("MI300X")).name, "MI300X");
}

TEST(HardwareSpec, CustomAccelerator)
{
    json j = {{"name", "NPU-1"},
              {"peak_flops", {{"bf16", "500TFLOPS"}, {"fp8", 1e15}}},
              {"hbm_capacity", "96GiB"},
              {"hbm_bw", "4TB/s"},
              {"eta_compute", 0.6},
              {"launch_overhead", "5us"},
              {"scale_up_bw", "200GB/s"},
              {"nic_bw", "800Gb/s"},
              {"price_per_hour", 2.2}};
    HardwareSpec h = HardwareSpec::FromJson(j, "hw.json");
    EXPECT_EQ(h.name, "NPU-1");
    EXPECT_DOUBLE_EQ(h.PeakFlops(DType::Fp8), 1e15);
    EXPECT_DOUBLE_EQ(h.hbmCapacityBytes, 96.0 * (1ULL << 30));
    EXPECT_DOUBLE_EQ(h.launchOverheadSec, 5e-6);
    EXPECT_DOUBLE_EQ(h.etaMemory, 0.85); // default
    EXPECT_DOUBLE_EQ(h.nicBwBytesPerSec, 100e9);
    EXPECT_DOUBLE_EQ(h.pricePerHour, 2.2);
}

TEST(HardwareSpec, ErrorsNameTheField)
{
    auto fieldOf = [](const json& j)
    {
        try
        {
            HardwareSpec::FromJson(j, "hw.json", "hardware");
        }
        catch (const fabricsim::InputError& e)
        {
            EXPECT_EQ(e.File(), "hw.json");
            return e.Field();
        }
        return std::string("no error");
    };
    EXPECT_EQ(fieldOf(json{{"preset", "H100"}, {"hbm_bw", "fast"}}), "hardware.hbm_bw");
    EXPECT_EQ(fieldOf(json{{"preset", "H100"}, {"eta_memory", 1.5}}), "hardware.eta_memory");
    EXPECT_EQ(fieldOf(json{{"preset", "H100"}, {"hbm_bandwidth", "3TB/s"}}),
              "hardware.hbm_bandwidth");
    EXPECT_EQ(fieldOf(json{{"preset", "H900"}}), "hardware.preset");
    EXPECT_EQ(fieldOf(json{{"hbm_capacity", "80GB"}, {"hbm_bw", "3TB/s"}}),
              "hardware.peak_flops.bf16");
    EXPECT_EQ(fieldOf(json{{"peak_flops", {{"bf16", "1PFLOPS"}}}, {"hbm_bw", "3TB/s"}}),
              "hardware.hbm_capacity");
    EXPECT_EQ(fieldOf(json{{"peak_flops", {{"int4", "1PFLOPS"}}}}), "hardware.peak_flops.int4");
}
