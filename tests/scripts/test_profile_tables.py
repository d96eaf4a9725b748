"""scripts/llmservingsim-kernel-tables: LLMServingSim's per-layer profiles become GEMM rows of the
shapes one TP rank runs and elementwise rows with the bytes they move, which fabricsim
fit-compute reads."""

import csv
import os
import tempfile
import unittest

from script_test_util import ScriptTestCase, call_main, fabricsim_or_skip, write_json

import subprocess

# Qwen3-32B's attention and MLP widths (its HuggingFace config.json).
CONFIG = {"hidden_size": 5120, "num_attention_heads": 64, "num_key_value_heads": 8,
          "head_dim": 128, "intermediate_size": 25600}


def write_profile(root, tps=(1, 2), token_counts=(1, 16, 2048), attention=False):
    with open(os.path.join(root, "meta.yaml"), "w") as f:
        f.write("vllm_version: 0.19.0\ngpu: NVIDIA RTX PRO 6000 Blackwell Server Edition\n"
                "engine_effective:\n  gpu: nested, not top level\n")
    for tp in tps:
        os.makedirs(os.path.join(root, "tp%d" % tp))
        with open(os.path.join(root, "tp%d" % tp, "dense.csv"), "w") as f:
            f.write("layer,tokens,time_us\n")
            for layer in ("embedding", "layernorm", "qkv_proj", "rotary_emb", "o_proj",
                          "gate_up_proj", "act_fn", "down_proj"):
                for tokens in token_counts:
                    f.write("%s,%d,%g\n" % (layer, tokens, 10.0 * tokens / tp + 2))
        if attention:
            with open(os.path.join(root, "tp%d" % tp, "attention.csv"), "w") as f:
                f.write("prefill_chunk,kv_prefill,n_decode,kv_decode,time_us\n"
                        "0,0,4,1024,20\n"      # 4 decodes reading 1024 tokens each
                        "512,0,0,0,30\n"       # one 512-token prompt chunk
                        "256,512,2,64,40\n"    # mixed: left out
                        "256,512,0,0,35\n")    # a chunk after a cached prefix: left out


class ProfileTablesTest(ScriptTestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.profile = os.path.join(self.dir, "profile")
        os.makedirs(self.profile)
        self.config = write_json(os.path.join(self.dir, "config.json"), CONFIG)

    def tearDown(self):
        self.tmp.cleanup()

    def convert(self, *extra):
        out = os.path.join(self.dir, "gemm.csv")
        self.ew = os.path.join(self.dir, "elementwise.csv")
        return out, call_main("profile_tables", self.profile, "--config", self.config,
                              "--gemm-out", out, "--elementwise-out", self.ew, *extra)

    def test_linear_layers_become_the_gemms_of_one_tp_rank(self):
        write_profile(self.profile)
        out, proc = self.convert()
        self.assertRan(proc)
        with open(out) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 2 * 4 * 3)  # 2 TPs x 4 linear layers x 3 token counts
        shapes = {(r["m"], r["n"], r["k"]) for r in rows}
        h, d, inter = 5120, 128, 25600
        for tp in (1, 2):
            self.assertIn(("16", str((64 // tp + 2 * 8 // tp) * d), str(h)), shapes)  # qkv
            self.assertIn(("16", str(h), str(64 // tp * d)), shapes)  # o_proj
            self.assertIn(("16", str(2 * inter // tp), str(h)), shapes)  # gate_up
            self.assertIn(("16", str(h), str(inter // tp)), shapes)  # down
        tp2 = [r for r in rows if r["n"] == str(2 * inter // 2) and r["m"] == "2048"]
        self.assertEqual(len(tp2), 1)
        self.assertAlmostEqual(float(tp2[0]["latency"]), (10.0 * 2048 / 2 + 2) / 1000)
        self.assertEqual({r["device"] for r in rows},
                         {"NVIDIA RTX PRO 6000 Blackwell Server Edition"})
        self.assertEqual({r["gemm_dtype"] for r in rows}, {"bfloat16"})
        with open(self.ew) as f:
            ew = list(csv.DictReader(f))
        self.assertEqual(len(ew), 2 * 3 * 3)  # layernorm, rotary, act; embedding is no kernel of it
        by = {(r["kernel"], r["num_tokens"], float(r["latency"])): float(r["bytes"]) for r in ew}
        # TP 2 at 16 tokens: RMSNorm with the residual 4 T H b, SiLU-and-mul 3 T I / 2 b,
        # rotary on 32 q and 4 KV heads 2 T (32 + 4) d b.
        lat = (10.0 * 16 / 2 + 2) / 1000
        self.assertEqual(by[("rms_norm", "16", lat)], 4 * 16 * h * 2)
        self.assertEqual(by[("silu_and_mul", "16", lat)], 3 * 16 * inter // 2 * 2)
        self.assertEqual(by[("rotary_emb", "16", lat)], 2 * 16 * (32 + 4) * d * 2)

    def test_attention_rows_become_decode_and_prefill_calls(self):
        write_profile(self.profile, tps=(2,), attention=True)
        ctx, gen = os.path.join(self.dir, "ctx.csv"), os.path.join(self.dir, "gen.csv")
        out, proc = self.convert("--context-attention-out", ctx, "--generation-attention-out", gen)
        self.assertRan(proc)
        with open(gen) as f:
            g = list(csv.DictReader(f))
        with open(ctx) as f:
            c = list(csv.DictReader(f))
        self.assertEqual(len(g), 1)
        self.assertEqual((g[0]["batch_size"], g[0]["isl"], g[0]["step"]), ("4", "1", "1023"))
        self.assertEqual((g[0]["num_heads"], g[0]["num_key_value_heads"], g[0]["head_dim"]),
                         ("32", "4", "128"))
        self.assertEqual(g[0]["op_name"], "generation_attention")
        self.assertAlmostEqual(float(g[0]["latency"]), 0.02)
        self.assertEqual(len(c), 1)
        self.assertEqual((c[0]["batch_size"], c[0]["isl"], c[0]["step"]), ("1", "512", "0"))
        self.assertEqual(c[0]["op_name"], "context_attention")

    def test_kv_heads_fewer_than_ranks_are_replicated(self):
        write_profile(self.profile, tps=(16,))
        out, proc = self.convert()
        self.assertRan(proc)
        with open(out) as f:
            wide = {r["n"] for r in csv.DictReader(f) if r["k"] == "5120"}
        # qkv: 4 query heads and the 8 KV heads' one each (not 8 // 16 = 0); gate_up 3200.
        self.assertEqual(wide, {str((64 // 16 + 2) * 128), str(2 * 25600 // 16)})

    def test_bad_input_exits_2_and_writes_nothing(self):
        write_profile(self.profile)
        with open(os.path.join(self.profile, "tp2", "dense.csv"), "a") as f:
            f.write("qkv_proj,many,3\n")
        out, proc = self.convert()
        self.assertRan(proc, rc=2)
        self.assertIn("tp2/dense.csv", proc.stderr)
        self.assertIn("line", proc.stderr)
        self.assertFalse(os.path.exists(out))
        self.assertFalse(os.path.exists(self.ew))
        write_json(self.config, dict(CONFIG, intermediate_size="big"))
        out, proc = self.convert()
        self.assertRan(proc, rc=2)
        self.assertIn("intermediate_size", proc.stderr)

    def test_fit_compute_reads_the_table(self):
        fabricsim = fabricsim_or_skip(self)
        write_profile(self.profile, token_counts=range(1, 2049, 4))  # rows at every size
        out, proc = self.convert()
        self.assertRan(proc)
        fit = subprocess.run([fabricsim, "fit-compute", out, self.ew,
                              "--hardware", "RTX-PRO-6000-Server",
                              "--rows", "all", "--out", os.path.join(self.dir, "fit")],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.assertEqual(fit.returncode, 0, fit.stdout)
        self.assertIn("| gemm | bfloat16 |", fit.stdout)
        self.assertIn("| elementwise | bfloat16 |", fit.stdout)
        self.assertTrue(os.path.isfile(os.path.join(self.dir, "fit", "calibration.json")))


if __name__ == "__main__":
    unittest.main()
