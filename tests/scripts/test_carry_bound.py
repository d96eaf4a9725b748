"""scripts/carry-bound on tables generated from its own model (exact recovery), bad input, and the
corpus tables (the claim docs/validation.md makes about A100)."""

import os
import re
import statistics
import tempfile

from script_test_util import DATA, SOURCE_DIR, ScriptTestCase, call_main, run_script, write_json

SHARED = os.path.join(DATA, "measurements", "nccl")
SYSTEMS = os.path.join(SOURCE_DIR, "collectives", "calibration", "systems")
HEADER = "framework,version,device,op_name,kernel_source,nccl_dtype,num_gpus,message_size,latency\n"


def scenario(path, link, hbm, clock, in_switch):
    return write_json(path, {"topology": {"type": "single-switch", "hosts": 8,
                                          "host_link": {"rate": link, "delay": "100ns"}},
                             "attributes": {"ns3::CollectiveExecutor::MemoryBandwidth": hbm,
                                            "ns3::NcclTuner::GpuClock": str(clock),
                                            "ns3::NcclTuner::InNetworkReduction": str(in_switch).lower()}})


def model_us(op, n, size, link, hbm, clock_ratio, launch, wire, copy, in_switch):
    """The test's own statement of the model (bytes/s rates)."""
    if op == "all_reduce":
        link_bytes = 2 * (n - 1) / n * size
        if in_switch:
            link_bytes = min(link_bytes, size * (1 + 1 / n) / 0.85)
    else:
        link_bytes = (n - 1) / n * size
    own = size / n / hbm * 1e6 if op in ("all_gather", "reduce_scatter") else 0
    return launch * clock_ratio + wire * link_bytes / link * 1e6 + copy * own


def table(path, link, hbm, clock_ratio, launch, wire=1.2, copy=2.5, in_switch=False):
    with open(path, "w") as f:
        f.write(HEADER)
        for op in ("all_reduce", "all_gather", "reduce_scatter", "alltoall"):
            for n in (2, 4, 8):
                for k in range(19, 29):  # 1 MiB .. 512 MiB of half
                    us = model_us(op, n, 2 * (1 << k), link, hbm, clock_ratio, launch, wire, copy, in_switch)
                    f.write("T,1,GPU,%s,NCCL,half,%d,%d,%r\n" % (op, n, 1 << k, us / 1e3))
    return path


class CarryBound(ScriptTestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.tmp.name
        self.fit_s = scenario(os.path.join(d, "fit.json"), "400GBps", "4000GBps", 2000, True)
        self.car_s = scenario(os.path.join(d, "car.json"), "1600Gbps", "2TBps", 1000, False)
        self.fit_t = table(os.path.join(d, "fit.csv"), 400e9, 4000e9, 1.0, 10.0, in_switch=True)
        self.d = d

    def tearDown(self):
        self.tmp.cleanup()

    def run_bound(self, *args):
        return call_main("carry_bound", "--fit", self.fit_t + ":" + self.fit_s, *args)

    def test_recovers_the_model_and_carries_exactly(self):
        # Carried system: half the clock (launch x 2), 200 GB/s links, 2 TB/s HBM, no in-switch.
        car_t = table(os.path.join(self.d, "car.csv"), 200e9, 2000e9, 2.0, 10.0)
        proc = self.run_bound("--carry", car_t + ":" + self.car_s)
        self.assertRan(proc)
        self.assertIn("t = 10.00 us x clock ratio + 1.200 x link bytes / link rate + 2.500 x own share", proc.stdout)
        self.assertRegex(proc.stdout, r"car\.csv\s+120\s+0\.00\s+0\.00")
        ratios = re.findall(r"launch x ([\d.]+)  bandwidth x ([\d.]+)", proc.stdout)
        self.assertEqual(len(ratios), 12)
        self.assertTrue(all(r == ("1.00", "1.00") for r in ratios), ratios)

    def test_a_slower_launch_shows_in_every_cell(self):
        car_t = table(os.path.join(self.d, "car.csv"), 200e9, 2000e9, 2.0, 15.0)
        proc = self.run_bound("--carry", car_t + ":" + self.car_s, "--min-bytes", "4MiB")
        self.assertRan(proc)
        ratios = re.findall(r"launch x ([\d.]+)  bandwidth x ([\d.]+)", proc.stdout)
        self.assertEqual(len(ratios), 12)
        self.assertTrue(all(r == ("1.50", "1.00") for r in ratios), ratios)
        carried = float(re.search(r"car\.csv\s+\d+\s+([\d.]+)", proc.stdout).group(1))
        self.assertGreater(carried, 0.5)

    def test_bad_input_exits_2_naming_file_and_field(self):
        bad = os.path.join(self.d, "bad.csv")
        with open(bad, "w") as f:
            f.write(HEADER + "T,1,GPU,broadcast,NCCL,half,8,1024,0.01\n")
        proc = call_main("carry_bound", "--fit", bad + ":" + self.fit_s)
        self.assertRan(proc, rc=2)
        self.assertIn("bad.csv:2: field 'op_name'", proc.stderr)
        noclock = write_json(os.path.join(self.d, "noclock.json"),
                             {"topology": {"host_link": {"rate": "400GBps"}},
                              "attributes": {"ns3::CollectiveExecutor::MemoryBandwidth": "4TBps"}})
        proc = call_main("carry_bound", "--fit", self.fit_t + ":" + noclock)
        self.assertRan(proc, rc=2)
        self.assertIn("field 'attributes.ns3::NcclTuner::GpuClock'", proc.stderr)
        bad_topology = write_json(os.path.join(self.d, "badtopo.json"), {"topology": "single-switch"})
        proc = call_main("carry_bound", "--fit", self.fit_t + ":" + bad_topology)
        self.assertRan(proc, rc=2)
        self.assertIn("field 'topology': expected an object, found str", proc.stderr)
        proc = run_script("carry-bound", "--fit", self.fit_t)
        self.assertRan(proc, rc=2)
        self.assertIn("TABLE.csv:SCENARIO.json", proc.stderr)

    def test_corpus_a100_intercept_does_not_carry(self):
        paths = {s: os.path.join(SHARED, f) for s, f in (("h100", "h100_sxm-nccl-2.29.2.csv"),
                                                        ("h200", "h200_sxm-nccl-2.29.2.csv"),
                                                        ("a100", "a100_sxm-nccl-2.27.3.csv"))}
        arg = {s: "%s:%s" % (p, os.path.join(SYSTEMS, s + "-8gpu.json")) for s, p in paths.items()}
        proc = call_main("carry_bound", "--fit", arg["h100"], "--carry", arg["h200"], "--carry", arg["a100"],
                         "--min-bytes", "4MiB")
        self.assertRan(proc)
        h200, a100 = proc.stdout.split("\n  " + os.path.basename(paths["h200"]))[1].split(
            "\n  " + os.path.basename(paths["a100"]))
        launch = {k: [float(x) for x in re.findall(r"launch x ([\d.]+)", v)] for k, v in (("h200", h200),
                                                                                         ("a100", a100))}
        band = {k: [float(x) for x in re.findall(r"bandwidth x ([\d.]+)", v)] for k, v in (("h200", h200),
                                                                                          ("a100", a100))}
        # H200 is H100 with more HBM: every cell's intercept and bandwidth carry within 15 %.
        self.assertTrue(all(0.85 <= x <= 1.15 for x in launch["h200"] + band["h200"]), (launch, band))
        # A100: bandwidth carries within 15 % per cell, the intercept (already scaled by the clock)
        # is typically 1.2 x more.
        self.assertTrue(all(0.85 <= x <= 1.15 for x in band["a100"]), band)
        self.assertGreater(statistics.median(launch["a100"]), 1.2)
