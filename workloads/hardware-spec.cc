#include "hardware-spec.h"

#include "compute-calibration.h"
#include "input-error.h"
#include "json-read.h"

#include <utility>

namespace fabricsim
{

using nlohmann::json;

namespace
{

/**
 * (name, JSON) of every preset. Figures from vendor datasheets (dense, no sparsity) as collected
 * in the reference table. price_per_hour is an ASSUMPTION: rounded 2025 on-demand prices per
 * GPU-hour at GPU clouds; override it for real cost studies.
 */
std::vector<std::pair<std::string, json>>
HardwarePresets()
{
    std::vector<std::pair<std::string, json>> p;
    p.emplace_back("A100",
                   json{{"peak_flops", {{"bf16", "312TFLOPS"}, {"fp16", "312TFLOPS"}}},
                        {"sms", 108},
                        {"hbm_capacity", "80GB"},
                        {"hbm_bw", "2.039TB/s"},
                        {"scale_up_bw", "300GB/s"},
                        {"nic_bw", "200Gb/s"},
                        {"price_per_hour", 1.8}});
    p.emplace_back(
        "H100",
        json{{"peak_flops", {{"bf16", "989TFLOPS"}, {"fp16", "989TFLOPS"}, {"fp8", "1979TFLOPS"}}},
             {"sms", 132},
             {"hbm_capacity", "80GB"},
             {"hbm_bw", "3.35TB/s"},
             {"scale_up_bw", "450GB/s"},
             {"nic_bw", "400Gb/s"},
             {"price_per_hour", 3.0}});
    // H800 SXM: H100 SXM's compute and HBM with NVLink cut to 400 GB/s (both directions, so 200
    // per direction; DeepEP quotes about 160 GB/s achieved), 400 Gb/s InfiniBand (CX7) NICs.
    // price_per_hour ASSUMED as H100's (not sold on the clouds the other prices come from).
    p.emplace_back(
        "H800",
        json{{"peak_flops", {{"bf16", "989TFLOPS"}, {"fp16", "989TFLOPS"}, {"fp8", "1979TFLOPS"}}},
             {"sms", 132},
             {"hbm_capacity", "80GB"},
             {"hbm_bw", "3.35TB/s"},
             {"scale_up_bw", "200GB/s"},
             {"nic_bw", "400Gb/s"},
             {"price_per_hour", 3.0}});
    // H20 (the export Hopper): 78 SMs, 96 GB HBM3 at 4.0 TB/s, dense BF16 148 and FP8 296
    // TFLOPS, NVLink 900 GB/s (450 per direction) as H100's; NIC ASSUMED 400 Gb/s and
    // price_per_hour ASSUMED as H100's. DeepEP's NVLink low-latency kernels were measured on it
    // (its PR #173).
    p.emplace_back(
        "H20",
        json{{"peak_flops", {{"bf16", "148TFLOPS"}, {"fp16", "148TFLOPS"}, {"fp8", "296TFLOPS"}}},
             {"sms", 78},
             {"hbm_capacity", "96GB"},
             {"hbm_bw", "4.0TB/s"},
             {"scale_up_bw", "450GB/s"},
             {"nic_bw", "400Gb/s"},
             {"price_per_hour", 3.0}});
    p.emplace_back(
        "H200",
        json{{"peak_flops", {{"bf16", "989TFLOPS"}, {"fp16", "989TFLOPS"}, {"fp8", "1979TFLOPS"}}},
             {"sms", 132},
             {"hbm_capacity", "141GB"},
             {"hbm_bw", "4.8TB/s"},
             {"scale_up_bw", "450GB/s"},
             {"nic_bw", "400Gb/s"},
             {"price_per_hour", 3.8}});
    // HBM bandwidth quoted 7.7-8 TB/s depending on SKU; NIC 400-800 Gb/s (HGX B200: 400G CX-7).
    p.emplace_back("B200",
                   json{{"peak_flops",
                         {{"bf16", "2250TFLOPS"}, {"fp16", "2250TFLOPS"}, {"fp8", "4500TFLOPS"}}},
                        {"sms", 148},
                        {"hbm_capacity", "180GB"},
                        {"hbm_bw", "8TB/s"},
                        {"scale_up_bw", "900GB/s"},
                        {"nic_bw", "400Gb/s"},
                        {"price_per_hour", 5.5}});
    // One GPU of a GB200 NVL72 rack: 72 GPUs share one NVLink domain at 900 GB/s each.
    p.emplace_back("GB200",
                   json{{"peak_flops",
                         {{"bf16", "2500TFLOPS"}, {"fp16", "2500TFLOPS"}, {"fp8", "5000TFLOPS"}}},
                        {"sms", 148},
                        {"hbm_capacity", "186GB"},
                        {"hbm_bw", "8TB/s"},
                        {"scale_up_bw", "900GB/s"},
                        {"nic_bw", "800Gb/s"},
                        {"price_per_hour", 6.5}});
    // Workstation GPUs, joined by PCIe only (no NVLink): scale_up_bw is PCIe x16 per direction
    // (Gen5 64 GB/s, Gen4 32 GB/s). nic_bw is an ASSUMPTION (no NIC is in their measured runs).
    // RTX PRO 6000 Blackwell Workstation Edition (GB202, 188 SMs, 600 W): 96 GB GDDR7 on 512
    // bits at 28 Gb/s = 1792 GB/s; the datasheet's 4 PFLOPS FP4 is with sparsity, so dense FP4
    // is 2000, FP8 1000 and BF16 500 TFLOPS (halving per doubling of width, FP32 accumulation at
    // full rate on the professional card): derived, not printed in the datasheet.
    p.emplace_back(
        "RTX-PRO-6000",
        json{{"peak_flops", {{"bf16", "500TFLOPS"}, {"fp16", "500TFLOPS"}, {"fp8", "1000TFLOPS"}}},
             {"sms", 188},
             {"hbm_capacity", "96GB"},
             {"hbm_bw", "1.792TB/s"},
             {"scale_up_bw", "64GB/s"},
             // NCCL all-reduce bus bandwidth measured on RTX PRO 6000 systems with direct-attached
             // Gen5 x16 GPUs and NCCL's default channels (32 MB, dual-socket Turin): 22.2 GB/s,
             // against 53-56 GB/s of raw peer-to-peer writes (public user measurements,
             // github.com/voipmonitor/rtx6kpro hardware/pcie-bandwidth.md).
             {"collective_bw", "22.2GB/s"},
             {"nic_bw", "100Gb/s"},
             {"price_per_hour", 1.2}});
    // RTX PRO 6000 Blackwell Server Edition: the same GB202 and 96 GB, its GDDR7 at 1597 GB/s
    // (datasheet; 512 bits at 25 Gb/s); compute taken as the Workstation Edition's (ASSUMED:
    // both are 600 W parts with 188 SMs).
    json server = p.back().second;
    server["hbm_bw"] = "1.597TB/s";
    p.emplace_back("RTX-PRO-6000-Server", server);
    // GeForce RTX 4090 (AD102, 128 SMs): 24 GB GDDR6X at 1008 GB/s; tensor FP16/BF16 with FP32
    // accumulation 165.2 TFLOPS dense (GeForce halves it against FP16 accumulation), FP8 330.3
    // (Ada whitepaper).
    p.emplace_back(
        "RTX-4090",
        json{{"peak_flops",
              {{"bf16", "165.2TFLOPS"}, {"fp16", "165.2TFLOPS"}, {"fp8", "330.3TFLOPS"}}},
             {"sms", 128},
             {"hbm_capacity", "24GB"},
             {"hbm_bw", "1.008TB/s"},
             {"scale_up_bw", "32GB/s"},
             {"nic_bw", "100Gb/s"},
             {"price_per_hour", 0.4}});
    p.emplace_back("MI300X",
                   json{{"peak_flops",
                         {{"bf16", "1307TFLOPS"}, {"fp16", "1307TFLOPS"}, {"fp8", "2615TFLOPS"}}},
                        {"sms", 304},
                        {"hbm_capacity", "192GB"},
                        {"hbm_bw", "5.3TB/s"},
                        {"scale_up_bw", "448GB/s"},
                        {"nic_bw", "400Gb/s"},
                        {"price_per_hour", 2.5}});
    return p;
}

/// Read the fields present in \p o into \p h (everything optional here; checked after).
void
ApplyFields(HardwareSpec& h, const JsonObject& o)
{
    o.CheckKeys({"preset",
                 "name",
                 "peak_flops",
                 "sms",
                 "hbm_capacity",
                 "hbm_bw",
                 "eta_compute",
                 "eta_memory",
                 "launch_overhead",
                 "scale_up_bw",
                 "collective_bw",
                 "nic_bw",
                 "price_per_hour",
                 "compute_calibration"});
    h.name = o.OptionalString("name", h.name);
    if (const json* pf = o.Find("peak_flops"))
    {
        if (!pf->is_object())
        {
            o.Fail("peak_flops",
                   "an object of dtype -> rate, e.g. {\"bf16\": \"989TFLOPS\"}",
                   DescribeJson(*pf));
        }
        JsonObject peaks(*pf, o.File(), o.Field("peak_flops"));
        for (auto it = pf->begin(); it != pf->end(); ++it)
        {
            auto t = ParseDType(it.key());
            if (!t)
            {
                peaks.Fail(it.key(), "a dtype key (bf16, fp16, fp8, fp32)", "\"" + it.key() + "\"");
            }
            h.peakFlops[DTypeName(*t)] = peaks.Quantity(it.key(), UnitKind::FlopsPerSec);
        }
    }
    h.sms = uint32_t(o.OptionalUint("sms", h.sms, 0, 1u << 20));
    h.hbmCapacityBytes = o.OptionalQuantity("hbm_capacity", UnitKind::Bytes, h.hbmCapacityBytes);
    h.hbmBwBytesPerSec = o.OptionalQuantity("hbm_bw", UnitKind::BytesPerSec, h.hbmBwBytesPerSec);
    h.etaCompute = o.OptionalNumber("eta_compute", h.etaCompute, 0.01, 1.0);
    h.etaMemory = o.OptionalNumber("eta_memory", h.etaMemory, 0.01, 1.0);
    h.launchOverheadSec
        = o.OptionalQuantity("launch_overhead", UnitKind::Seconds, h.launchOverheadSec, true);
    h.scaleUpBwBytesPerSec
        = o.OptionalQuantity("scale_up_bw", UnitKind::BytesPerSec, h.scaleUpBwBytesPerSec, true);
    h.collectiveBwBytesPerSec = o.OptionalQuantity(
        "collective_bw", UnitKind::BytesPerSec, h.collectiveBwBytesPerSec, true);
    h.nicBwBytesPerSec
        = o.OptionalQuantity("nic_bw", UnitKind::BytesPerSec, h.nicBwBytesPerSec, true);
    h.pricePerHour = o.OptionalNumber("price_per_hour", h.pricePerHour, 0.0, 1e6);
    if (o.Has("compute_calibration"))
    {
        const std::string rel = o.String("compute_calibration");
        h.computeCalibrationFile = (!rel.empty() && rel[0] != '/') ? DirOf(o.File()) + rel : rel;
        try
        {
            h.computeCalibration = std::make_shared<const ComputeCalibration>(
                ComputeCalibration::Read(h.computeCalibrationFile));
        }
        catch (const fabricsim::InputError& e)
        {
            // Name the scenario field that pointed at the file as well as the file's own error.
            throw fabricsim::InputError(o.File(),
                                        o.Field("compute_calibration"),
                                        "a readable compute calibration file",
                                        e.what());
        }
    }
}

} // namespace

HardwareSpec
HardwareSpec::FromJson(const json& j, const std::string& file, const std::string& prefix)
{
    if (!j.is_object())
    {
        throw fabricsim::InputError(file, prefix, "an accelerator object", DescribeJson(j));
    }
    JsonObject o(j, file, prefix);
    HardwareSpec h;
    if (o.Has("preset"))
    {
        std::string name = o.OptionalString("preset", "");
        try
        {
            h = Preset(name);
        }
        catch (const fabricsim::InputError& e)
        {
            throw fabricsim::InputError(file, o.Field("preset"), e.Expected(), e.Found());
        }
    }
    ApplyFields(h, o);
    if (h.peakFlops.count("bf16") == 0 && h.peakFlops.count("fp16") == 0)
    {
        throw fabricsim::InputError(file,
                                    o.Field("peak_flops") + ".bf16",
                                    "a 16-bit peak, e.g. \"989TFLOPS\"",
                                    "nothing (field missing)");
    }
    if (h.hbmCapacityBytes <= 0)
    {
        throw fabricsim::InputError(
            file, o.Field("hbm_capacity"), "a size like \"80GB\"", "nothing (field missing)");
    }
    if (h.hbmBwBytesPerSec <= 0)
    {
        throw fabricsim::InputError(
            file, o.Field("hbm_bw"), "a bandwidth like \"3.35TB/s\"", "nothing (field missing)");
    }
    if (h.name.empty())
    {
        h.name = "custom";
    }
    return h;
}

HardwareSpec
HardwareSpec::Load(const json& v, const std::string& file, const std::string& field)
{
    if (v.is_string())
    {
        try
        {
            return Preset(v.get<std::string>());
        }
        catch (const fabricsim::InputError& e)
        {
            throw fabricsim::InputError(file, field, e.Expected(), e.Found());
        }
    }
    return FromJson(v, file, field);
}

HardwareSpec
HardwareSpec::Preset(const std::string& name)
{
    std::string list;
    for (auto& [n, j] : HardwarePresets())
    {
        if (NormalizeName(n) == NormalizeName(name))
        {
            HardwareSpec h;
            h.name = n;
            ApplyFields(h, JsonObject(j, "", "preset " + n));
            return h;
        }
        list += (list.empty() ? "" : ", ") + n;
    }
    throw fabricsim::InputError("", "preset", "one of " + list, "\"" + name + "\"");
}

std::vector<std::string>
HardwareSpec::PresetNames()
{
    std::vector<std::string> names;
    for (auto& [n, j] : HardwarePresets())
    {
        names.push_back(n);
    }
    return names;
}

double
HardwareSpec::PeakFlops(DType t) const
{
    auto find = [this](const char* k)
    {
        auto it = peakFlops.find(k);
        return it == peakFlops.end() ? 0.0 : it->second;
    };
    double bf16 = find("bf16");
    double fp16 = find("fp16");
    double half = bf16 > 0 ? bf16 : fp16;
    switch (t)
    {
    case DType::Bf16:
        return bf16 > 0 ? bf16 : fp16;
    case DType::Fp16:
        return fp16 > 0 ? fp16 : bf16;
    case DType::Fp8:
    {
        double fp8 = find("fp8");
        return fp8 > 0 ? fp8 : half;
    }
    case DType::Fp32:
    {
        double fp32 = find("fp32");
        return fp32 > 0 ? fp32 : half / 2.0;
    }
    }
    return half;
}

double
HardwareSpec::EffectiveFlops(DType t) const
{
    return PeakFlops(t) * etaCompute;
}

double
HardwareSpec::EffectiveHbmBw() const
{
    return hbmBwBytesPerSec * etaMemory;
}

} // namespace fabricsim
