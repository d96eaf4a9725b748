"""scripts/fit-benchmark-overheads: its coordinate search, its score and its refusals."""

import math
import os
import json
import tempfile
import unittest

from script_test_util import ScriptTestCase

from fabricsim_tools import benchmark_fit


class BenchmarkFitTest(ScriptTestCase):
    def test_search_finds_the_minimum_of_a_separable_bowl(self):
        target = [0.1, 4e-5, 0.02, 7e-6]

        def loss(p):
            return sum(math.log(x / t) ** 2 for x, t in zip(p, target))

        best, value, evals = benchmark_fit.coordinate_search(
            loss, [0.06, 3e-5, 0.04, 1e-5], min_factor=1.01, max_evals=400, log=lambda _: None)
        for b, t in zip(best, target):
            self.assertAlmostEqual(b / t, 1.0, delta=0.03)
        self.assertLess(value, 1e-3)
        self.assertLessEqual(evals, 400)

    def test_search_stops_at_its_evaluation_budget(self):
        calls = []

        def loss(p):
            calls.append(p)
            return sum(p)

        benchmark_fit.coordinate_search(loss, [1, 1, 1, 1], max_evals=5, log=lambda _: None)
        self.assertEqual(len(calls), 5)
        with self.assertRaises(SystemExit):
            benchmark_fit.coordinate_search(loss, [1, 0, 1, 1], log=lambda _: None)

    def test_score_is_the_mean_squared_log_ratio_of_the_headline_metrics(self):
        rows = [{"metric": "median_ttft_ms", "measured": "100", "simulated": "200"},
                {"metric": "output_throughput", "measured": "50", "simulated": "25"},
                {"metric": "p99_ttft_ms", "measured": "1", "simulated": "1000"}]
        self.assertAlmostEqual(benchmark_fit.score(rows), math.log(2) ** 2)
        with self.assertRaises(SystemExit):
            benchmark_fit.score(rows[2:])

    def test_fitting_set_lists_concurrencies(self):
        self.assertEqual(benchmark_fit.fit_concurrencies("conc=48,8,8"), [8, 48])

    def test_sets_name_every_cost_in_its_unit(self):
        args = benchmark_fit.sets([0.1, 4e-5, 0.02, 7e-6], 1)
        self.assertEqual(args[1], "serving.execution.frontend_servers=1")
        self.assertIn("serving.execution.request_overhead=100ms", args)
        self.assertIn("serving.execution.prompt_token_overhead=40us", args)
        self.assertIn("serving.execution.prefill_overhead=20ms", args)
        self.assertIn("serving.execution.prefill_token_overhead=7us", args)

    def test_runs_start_with_the_most_requests(self):
        # A fitting set of C = 8 and 48 at two ISLs: the four C = 48 and C = 8 runs must not
        # share a process by name order; the largest (C, then ISL) start first.
        with tempfile.TemporaryDirectory() as d:
            names = []
            for isl in (1024, 8192):
                for c in (48, 8):
                    name = os.path.join(d, f"m_vllm_tep8_isl{isl}_osl128_conc{c}.json")
                    with open(name, "w") as f:
                        json.dump({"max_concurrency": c}, f)
                    names.append(name)
            order = [os.path.basename(p) for p in benchmark_fit.longest_first(sorted(names))]
            self.assertEqual(order, ["m_vllm_tep8_isl8192_osl128_conc48.json",
                                     "m_vllm_tep8_isl1024_osl128_conc48.json",
                                     "m_vllm_tep8_isl8192_osl128_conc8.json",
                                     "m_vllm_tep8_isl1024_osl128_conc8.json"])

    def test_refuses_a_fitting_set_no_result_has(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "r.json"), "w") as f:
                json.dump({"max_concurrency": 4}, f)
            for fit in ("conc=8", "c8", "conc=4,8", "conc=4,", "conc=0"):
                with self.assertRaises(SystemExit) as e:
                    benchmark_fit.main([d, "--model", "M", "--hardware", "H200", "--fit", fit])
                self.assertIn("--fit", str(e.exception.code))


if __name__ == "__main__":
    unittest.main()
