"""scripts/fct-slowdown on synthetic FCT files whose per-bin percentiles are known exactly."""

import csv
import io
import math
import os
import random
import tempfile

from script_test_util import ScriptTestCase, call_main, run_script, skip_without_matplotlib, write_json

HEADER = "flow_id,src,dst,sport,dport,size_bytes,start_ns,fct_ns,ideal_fct_ns,slowdown\n"


def nearest_rank(values, q):
    """The test's own percentile: the ceil(q n)-th smallest value."""
    v = sorted(values)
    return v[max(1, math.ceil(q * len(v))) - 1]


def write_fct(path, flows):
    """flows: (size, fct_ns, ideal_ns[, dst, start_ns])."""
    with open(path, "w") as f:
        f.write(HEADER)
        for i, fl in enumerate(flows):
            size, fct, ideal = fl[:3]
            dst, start = (fl[3], fl[4]) if len(fl) > 3 else (i % 7 + 1, 1000 + 13 * i)
            f.write("%d,0,%d,49152,4791,%d,%d,%d,%d,%.6g\n" % (i, dst, size, start, fct, ideal, fct / ideal))
    return path


def fct_slowdown(*args):
    return call_main("fct_cli", *args)


def table_rows(stdout):
    return list(csv.DictReader(io.StringIO(stdout)))


class FctSlowdown(ScriptTestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_known_bins_exact_percentiles(self):
        # Bin (0, 1K]: slowdowns 1..20; (1K, 10K]: 2, 4, .., 200 (100 flows); (10K, inf): 7 and 9.
        flows = [(100 + i, 1000 * s, 1000) for i, s in enumerate(range(1, 21))]
        flows += [(1001 + 80 * i, 2000 * (i + 1), 1000) for i in range(100)]
        flows += [(50000, 7000, 1000), (60000, 9000, 1000)]
        random.Random(4).shuffle(flows)
        path = write_fct(os.path.join(self.dir, "fct.csv"), flows)
        proc = fct_slowdown("RUN=" + path, "--bins", "1K,10K", "--format", "csv")
        self.assertRan(proc)
        rows = table_rows(proc.stdout)
        got = [(r["bin_lo_bytes"], r["bin_hi_bytes"], int(r["flows"]), float(r["p50"]), float(r["p95"]),
                float(r["p99"])) for r in rows]
        # n = 20: 10th, 19th and 20th values; n = 100: 50th, 95th, 99th; n = 2: 1st, 2nd, 2nd.
        self.assertEqual(got, [("", "1000", 20, 10.0, 19.0, 20.0),
                               ("1000", "10000", 100, 100.0, 190.0, 198.0),
                               ("10000", "", 2, 7.0, 9.0, 9.0)])
        self.assertEqual({r["label"] for r in rows}, {"RUN"})

    def test_size_on_an_edge_belongs_to_the_lower_bin(self):
        path = write_fct(os.path.join(self.dir, "fct.csv"), [(1000, 3000, 1000), (1001, 5000, 1000)])
        rows = table_rows(fct_slowdown(path, "--bins", "1000", "--format", "csv").stdout)
        self.assertEqual([(r["bin_hi_bytes"], r["flows"], r["p50"]) for r in rows],
                         [("1000", "1", "3.0"), ("", "1", "5.0")])

    def test_random_flows_match_the_reference_computation(self):
        rng = random.Random(11)
        flows = [(rng.randint(1, 3000000), rng.randint(1000, 900000), rng.randint(1000, 9000)) for _ in range(700)]
        path = write_fct(os.path.join(self.dir, "fct.csv"), flows)
        edges = [10000, 100000, 1000000]
        proc = fct_slowdown(path, "--bins", ",".join(map(str, edges)), "--format", "csv")
        self.assertRan(proc)
        rows = table_rows(proc.stdout)
        bounds = [(None, 10000), (10000, 100000), (100000, 1000000), (1000000, None)]
        self.assertEqual(len(rows), len(bounds))
        for row, (lo, hi) in zip(rows, bounds):
            sl = [fct / ideal for size, fct, ideal in flows
                  if (lo is None or size > lo) and (hi is None or size <= hi)]
            self.assertEqual(int(row["flows"]), len(sl))
            for key, q in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99)):
                self.assertEqual(float(row[key]), nearest_rank(sl, q), (lo, hi, key))

    def test_quantile_bins_hold_equal_counts(self):
        flows = [(size, 1000 + size, 1000) for size in range(1, 101)]
        path = write_fct(os.path.join(self.dir, "fct.csv"), flows)
        rows = table_rows(fct_slowdown(path, "--bins", "quantile:4", "--format", "csv").stdout)
        self.assertEqual([(r["bin_hi_bytes"], int(r["flows"])) for r in rows],
                         [("25", 25), ("50", 25), ("75", 25), ("100", 25)])
        # Slowdown = 1 + size / 1000: the median of sizes 26..50 is 38 (13th of 25).
        self.assertEqual(float(rows[1]["p50"]), 1.038)

    def test_runs_side_by_side_labelled_by_congestion_control(self):
        for cc, scale in (("dcqcn", 3), ("hpcc", 1)):
            d = os.path.join(self.dir, cc)
            os.makedirs(d)
            write_fct(os.path.join(d, "fct.csv"), [(1000 * (i + 1), scale * 1000 * (i + 1), 1000) for i in range(10)])
            write_json(os.path.join(d, "summary.json"), {"transport": {"cc": cc}})
        proc = fct_slowdown(os.path.join(self.dir, "dcqcn"), os.path.join(self.dir, "hpcc"),
                          "--bins", "5K")
        self.assertRan(proc)
        header, first, second, total = proc.stdout.splitlines()
        self.assertIn("dcqcn p99", header)
        self.assertIn("hpcc p99", header)
        # (0, 5K]: sizes 1K..5K; dcqcn slowdowns 3..15 (median 9), hpcc 1..5 (median 3).
        self.assertEqual(first.split(), ["<=", "5K", "5", "9.00", "15.00", "15.00", "5", "3.00", "5.00", "5.00"])
        self.assertEqual(total.split()[:2], ["all", "10"])
        md = fct_slowdown(os.path.join(self.dir, "dcqcn"), os.path.join(self.dir, "hpcc"),
                        "--bins", "5K", "--format", "markdown").stdout.splitlines()
        self.assertTrue(md[0].startswith("| flow size (bytes) | dcqcn n |"))
        self.assertEqual(md[2], "| <= 5K | 5 | 9.00 | 15.00 | 15.00 | 5 | 3.00 | 5.00 | 5.00 |")

    def test_bin_labels_name_the_edges(self):
        path = write_fct(os.path.join(self.dir, "fct.csv"), [(150000, 1000, 1000), (16234, 1000, 1000),
                                                             (5000000, 1000, 1000)])
        md = fct_slowdown(path, "--bins", "16234,200K,1M", "--format", "markdown").stdout.splitlines()
        self.assertEqual([line.split(" | ")[0] for line in md[2:]],
                         ["| <= 16.2K", "| 16.2K-200K", "| 200K-1M", "| > 1M", "| all"])

    def test_exclude_incast_drops_flows_that_start_together(self):
        flows = [(500000, 9000, 1000, 5, 777)] * 3 + [(500000, 2000, 1000, 5, 778), (20000, 1000, 1000, 5, 777)]
        path = write_fct(os.path.join(self.dir, "fct.csv"), flows)
        rows = table_rows(fct_slowdown(path, "--bins", "100K", "--exclude-incast",
                                     "--format", "csv").stdout)
        self.assertEqual([(r["flows"], r["p99"]) for r in rows], [("1", "1.0"), ("1", "2.0")])

    def test_hpcc_fct_txt_reads_like_the_csv(self):
        txt = os.path.join(self.dir, "fct.txt")
        with open(txt, "w") as f:
            for i, (size, fct) in enumerate([(2000, 5000), (3000, 4000), (90000, 30000)]):
                f.write("0b000001 0b000101 %d 100 %d %d %d 1000\n" % (10000 + i, size, 2000000 + i, fct))
        rows = table_rows(fct_slowdown(txt, "--bins", "10K", "--format", "csv").stdout)
        self.assertEqual([(r["flows"], r["p50"], r["p99"]) for r in rows], [("2", "4.0", "5.0"), ("1", "30.0", "30.0")])

    def test_bad_input_exits_2_naming_file_line_and_field(self):
        path = os.path.join(self.dir, "fct.csv")
        with open(path, "w") as f:
            f.write(HEADER + "0,0,1,49152,4791,1000,0,5000,1000,5\n1,0,1,49152,4791,1000,0,5x,1000,5\n")
        proc = run_script("fct-slowdown", path)  # the script itself, as users run it
        self.assertRan(proc, 2)
        self.assertIn(path, proc.stderr)
        self.assertIn("line 3: fct_ns", proc.stderr)
        self.assertEqual(proc.stdout, "")
        with open(path, "w") as f:
            f.write("flow_id,size_bytes\n1,100\n")
        proc = fct_slowdown(path)
        self.assertRan(proc, 2)
        self.assertIn("header", proc.stderr)
        self.assertRan(fct_slowdown(os.path.join(self.dir, "missing.csv")), 2)
        good = write_fct(os.path.join(self.dir, "good.csv"), [(100, 100, 100)])
        proc = fct_slowdown(good, "--bins", "10K,1K")
        self.assertRan(proc, 2)
        self.assertIn("--bins", proc.stderr)

    def test_plot_writes_a_png(self):
        skip_without_matplotlib(self)
        path = write_fct(os.path.join(self.dir, "fct.csv"), [(100 * (i + 1), 1000 + i, 1000) for i in range(50)])
        png = os.path.join(self.dir, "slowdown.png")
        self.assertRan(fct_slowdown(path, "--plot", png, "--csv", os.path.join(self.dir, "b.csv")))
        with open(png, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        with open(os.path.join(self.dir, "b.csv")) as f:
            self.assertEqual(len(list(csv.DictReader(f))), 10)
