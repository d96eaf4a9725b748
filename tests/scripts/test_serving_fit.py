"""scripts/fit-serving-overheads: its grid and score, and on the measured Llama-3.1-8B run the
defaults of serving.execution.step_overhead / sequence_overhead are the grid's best point."""

import os
import unittest

from script_test_util import SOURCE_DIR, ScriptTestCase, call_main, fabricsim_or_skip

from fabricsim_tools import serving_fit

LLAMA = os.path.join(SOURCE_DIR, "data", "serving", "llmservingsim-vllm", "RTXPRO6000",
                     "Llama-3.1-8B")


class ServingFitTest(ScriptTestCase):
    def test_grid_is_inclusive_and_refuses_bad_ranges(self):
        self.assertEqual(serving_fit.grid("0:1:0.5", "ms"), ["0ms", "0.5ms", "1ms"])
        self.assertEqual(serving_fit.grid("2.5:3.5:0.5", "us"), ["2.5us", "3us", "3.5us"])
        for bad in ("1:0:0.5", "0:1:0", "0:1"):
            with self.assertRaises(SystemExit):
                serving_fit.grid(bad, "ms")

    def test_score_is_the_rms_of_the_target_errors(self):
        metrics = {m: {"error_pct": e} for m, e in zip(serving_fit.TARGETS, (3, -4, 0, 0))}
        rms, errs = serving_fit.score({"runs": [{"metrics": metrics}]})
        self.assertEqual(errs, [3, -4, 0, 0])
        self.assertAlmostEqual(rms, 2.5)

    def test_defaults_are_the_best_point_on_the_llama_run(self):
        fabricsim = fabricsim_or_skip(self)
        self.assertTrue(os.path.isfile(os.path.join(LLAMA, "vllm", "meta.json")), "data/ ships it")
        proc = call_main("serving_fit", LLAMA, "--fabricsim", fabricsim,
                         "--step", "1.5:2.5:0.5", "--sequence", "0:10:5")
        self.assertRan(proc)
        self.assertEqual(proc.stdout.count("rms"), 3 * 3 + 1)
        best = proc.stdout.strip().splitlines()[-1]
        self.assertTrue(best.startswith("best: step_overhead 2ms, sequence_overhead 0us"), best)
        rms = float(best.split("rms ")[1].split("%")[0])
        self.assertLess(rms, 2.0, best)


if __name__ == "__main__":
    unittest.main()
