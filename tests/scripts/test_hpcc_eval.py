"""The HPCC-style evaluation scenarios: generated files, accepted by the CLI, and the paper's
qualitative results on the scaled-down incast scenario (HPCC's queue far below DCQCN's; PFC
pauses with DCQCN and TIMELY, none with HPCC)."""

import csv
import json
import os
import tempfile

from script_test_util import SCENARIOS, ScriptTestCase, fabricsim_or_skip, run_script

from fabricsim_tools import hpcc_eval

EVAL_DIR = os.path.join(SCENARIOS, "hpcc-eval")


class HpccEvalScenarios(ScriptTestCase):
    def test_committed_files_are_what_the_generator_writes(self):
        files = hpcc_eval.all_files()
        self.assertEqual(len(files), 16)  # 2 scales x 2 workloads x 2 loads x with/without incast
        self.assertEqual(sorted(f for f in os.listdir(EVAL_DIR) if f.endswith(".json")), sorted(files))
        for name, text in files.items():
            with open(os.path.join(EVAL_DIR, name)) as f:
                self.assertEqual(f.read(), text, "%s differs: run python3 scripts/fabricsim_tools/hpcc_eval.py" % name)

    def test_incast_is_2_percent_of_every_host_spread_over_senders(self):
        doc = json.loads(hpcc_eval.all_files()["paper-websearch-30-incast.json"])
        incasts = doc["traffic"]["incast"]
        self.assertEqual([i["receiver"] for i in incasts], list(range(320)))
        sent = [0] * 320
        for i in incasts:
            self.assertEqual(len(set(i["senders"])), 60)
            self.assertNotIn(i["receiver"], i["senders"])
            self.assertEqual((i["size_bytes"], i["load"]), (500000, 0.02))
            for s in i["senders"]:
                sent[s] += 1
        self.assertEqual(set(sent), {60})  # every host sends in exactly 60 receivers' incasts

    def test_every_scenario_is_accepted_by_the_cli(self):
        env = {"FABRICSIM": fabricsim_or_skip(self)}
        with tempfile.TemporaryDirectory() as tmp:
            for name in sorted(os.listdir(EVAL_DIR)):
                # Stopped at 1 ns, with 20 us of web search / Hadoop arrivals: every key is
                # checked and the fabric and traffic are built, in a fraction of a second.
                proc = run_script("sweep", os.path.join(EVAL_DIR, name), "--set", "stop_ns=1",
                                  "--set", "traffic.poisson.duration_ns=20000", "--out", os.path.join(tmp, name),
                                  env=env)
                self.assertRan(proc)


class HpccEvalRegression(ScriptTestCase):
    def test_hpcc_keeps_queues_low_and_needs_no_pfc(self):
        env = {"FABRICSIM": fabricsim_or_skip(self)}
        base = os.path.join(EVAL_DIR, "small-websearch-30-incast.json")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            # The scaled-down incast scenario with web search arrivals cut to 0.5 ms (the incast
            # events keep their 4 ms window) so that three runs take seconds.
            proc = run_script("sweep", base, "--grid", "transport.cc=dcqcn,timely,hpcc",
                              "--set", "traffic.poisson.duration_ns=500000", "--set", "monitor.interval_ns=0",
                              "-j", "2", "--out", out, env=env)
            self.assertRan(proc)
            with open(os.path.join(out, "results.csv")) as f:
                rows = {r["transport.cc"]: r for r in csv.DictReader(f)}
            point = os.path.join(out, "points", rows["hpcc"]["point"])
            with open(os.path.join(point, "summary.json")) as f:
                flows = json.load(f)["flows"]
            starts = {}
            for fl in flows:
                if fl["size_bytes"] == 500000:
                    key = (fl["dst"], fl["start_ns"])
                    starts[key] = starts.get(key, 0) + 1
            self.assertIn(60, starts.values(), "the run must contain a 60-to-1 incast event to test anything")
        for cc, r in rows.items():
            self.assertEqual(r["status"], "ok", cc)
            self.assertEqual(r["flows_completed"], r["flows_total"], cc)
            self.assertEqual(r["drops_total"], "0", cc)
        q = {cc: int(r["queue_p99_bytes"]) for cc, r in rows.items()}
        pauses = {cc: int(r["pfc_pause_frames"]) for cc, r in rows.items()}
        msg = "queue p99 %s, PFC pauses %s" % (q, pauses)
        self.assertLess(q["hpcc"] * 5, q["dcqcn"], msg)
        self.assertLess(q["hpcc"] * 5, q["timely"], msg)
        self.assertGreater(pauses["dcqcn"], 0, msg)
        self.assertGreater(pauses["timely"], 0, msg)
        self.assertEqual(pauses["hpcc"], 0, msg)
