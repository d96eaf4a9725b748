"""Convert LLMServingSim's per-layer profiles (profiler/perf/<GPU>/<model>/<variant>/tpN/dense.csv,
vLLM's layerwise profile: CUDA time per call of each module, one decoder layer) into measured
kernel tables in the corpus's format, which `fabricsim fit-compute` reads: a GEMM table
(framework, version, device, op_name, kernel_source, gemm_dtype, m, n, k, latency in ms) and an
elementwise one (..., kernel, dtype, num_tokens, bytes, latency).

The four linear layers of a decoder layer become GEMMs on one TP rank: qkv_proj m x (q + 2 kv
heads on the rank) d x hidden, o_proj m x hidden x (q heads on the rank) d, gate_up_proj
m x 2 intermediate / tp x hidden, down_proj m x hidden x intermediate / tp, with m the profile's
tokens. The memory-bound kernels become elementwise rows with the bytes fabricsim's roofline
gives them (b = 2, bf16; T tokens): layernorm and final_layernorm (RMSNorm with the residual add:
4 T hidden b), act_fn (SiLU-and-mul: 3 T intermediate / tp b), rotary_emb (q and k in place:
2 T (q + kv heads on the rank) d b). Left out: embedding (a gather) and Qwen3's qk_norm, whose
row is the q and k norms' two kernels together (a row is one call).

tpN/attention.csv (prefill_chunk, kv_prefill, n_decode, kv_decode, time_us: one attention call
over a batch of one prompt chunk and n decodes) gives the attention tables: its pure decode rows
(no chunk) as generation attention, batch n, step kv_decode - 1 (each query reads kv_decode
tokens), and its pure prefill rows (no decodes, nothing cached) as context attention, batch 1,
isl the chunk; heads and KV heads on the rank, head size, bf16. Mixed rows are left out."""
import argparse
import csv
import io
import os
import sys

from .bounded import DATA_MAX_BYTES, load_json, read_text
from .stats import InputProblem

HEADER = ["framework", "version", "device", "op_name", "kernel_source", "gemm_dtype",
          "m", "n", "k", "latency"]
ATTENTION_HEADER = ["framework", "version", "device", "op_name", "kernel_source", "batch_size",
                    "isl", "num_heads", "num_key_value_heads", "head_dim", "beam_width",
                    "attn_dtype", "kv_cache_dtype", "step", "window_size", "latency"]
ATTENTION_SOURCE = "vllm layerwise profile (LLMServingSim attention.csv)"
ELEMENTWISE_HEADER = ["framework", "version", "device", "op_name", "kernel", "dtype",
                      "num_tokens", "bytes", "latency"]
SOURCE = "vllm layerwise profile (LLMServingSim dense.csv)"


def top_level(path):
    """The top-level `key: value` scalars of a YAML file (meta.yaml needs no more)."""
    out = {}
    for line in read_text(path, "profile meta.yaml").splitlines():
        if line and not line[0].isspace() and not line.startswith("#") and ":" in line:
            key, _, value = line.partition(":")
            out[key.strip()] = value.strip().strip("'\"")
    return out


def model_dims(path):
    """hidden, query heads, KV heads, head size, intermediate size of a HuggingFace config."""
    cfg = load_json(path, "model config (HuggingFace config.json)")
    dims = {}
    for key in ("hidden_size", "num_attention_heads", "num_key_value_heads", "intermediate_size"):
        v = cfg.get(key) if isinstance(cfg, dict) else None
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise InputProblem(path, key, "a positive integer", repr(v))
        dims[key] = v
    hd = cfg.get("head_dim") or dims["hidden_size"] // dims["num_attention_heads"]
    if not isinstance(hd, int) or isinstance(hd, bool) or hd < 1:
        raise InputProblem(path, "head_dim", "a positive integer", repr(hd))
    dims["head_dim"] = hd
    return dims


def elementwise_bytes(layer, dims, tp, b=2):
    """(kernel, bytes read + written) of a memory-bound row on one of tp ranks; None otherwise."""
    h, d = dims["hidden_size"], dims["head_dim"]
    heads = dims["num_attention_heads"] // tp
    kv = max(1, dims["num_key_value_heads"] // tp)
    inter = dims["intermediate_size"] // tp
    return {"layernorm": ("rms_norm", 4 * h * b), "final_layernorm": ("rms_norm", 4 * h * b),
            "act_fn": ("silu_and_mul", 3 * inter * b),
            "rotary_emb": ("rotary_emb", 2 * (heads + kv) * d * b)}.get(layer)


def gemm_shape(layer, dims, tp):
    """(n, k) of a linear layer on one of tp ranks; None for a row that is not a GEMM."""
    h, d = dims["hidden_size"], dims["head_dim"]
    heads = dims["num_attention_heads"] // tp
    kv = max(1, dims["num_key_value_heads"] // tp)  # replicated when fewer KV heads than ranks
    inter = dims["intermediate_size"] // tp
    return {"qkv_proj": ((heads + 2 * kv) * d, h), "o_proj": (h, heads * d),
            "gate_up_proj": (2 * inter, h), "down_proj": (h, inter)}.get(layer)


def rows(profile_dir, dims):
    """(GEMM rows, elementwise rows) of every tpN/dense.csv under profile_dir, by TP then file
    order."""
    meta_path = os.path.join(profile_dir, "meta.yaml")
    meta = top_level(meta_path)
    for key in ("gpu", "vllm_version"):
        if not meta.get(key):
            raise InputProblem(meta_path, key, "a value", "none")
    tps = sorted(int(e[2:]) for e in os.listdir(profile_dir)
                 if e.startswith("tp") and e[2:].isdigit()
                 and os.path.isfile(os.path.join(profile_dir, e, "dense.csv")))
    if not tps:
        raise InputProblem(profile_dir, "", "tpN/dense.csv profiles", "none")
    out, ew = [], []
    for tp in tps:
        path = os.path.join(profile_dir, "tp%d" % tp, "dense.csv")
        if dims["num_attention_heads"] % tp or dims["intermediate_size"] % tp:
            raise InputProblem(path, "", "heads and intermediate size divisible by TP %d" % tp,
                               "%d heads, %d" % (dims["num_attention_heads"],
                                                 dims["intermediate_size"]))
        text = read_text(path, "LLMServingSim dense profile", DATA_MAX_BYTES)
        for i, r in enumerate(csv.DictReader(io.StringIO(text)), start=2):
            try:
                shape = gemm_shape(r["layer"], dims, tp)
                memory = elementwise_bytes(r["layer"], dims, tp)
                if shape is None and memory is None:
                    continue
                m, us = int(r["tokens"]), float(r["time_us"])
            except (KeyError, ValueError, TypeError) as e:
                raise InputProblem(path, "line %d" % i, "layer, tokens, time_us", repr(e))
            if m < 1 or not us > 0:
                raise InputProblem(path, "line %d" % i, "tokens >= 1 and time_us > 0",
                                   "%r, %r" % (r["tokens"], r["time_us"]))
            head = ["VLLM", meta["vllm_version"], meta["gpu"]]
            if shape is not None:
                out.append(head + ["gemm", SOURCE, "bfloat16", m, shape[0], shape[1],
                                   "%.6g" % (us / 1000)])
            else:
                ew.append(head + ["elementwise", memory[0], "bfloat16", m, m * memory[1],
                                  "%.6g" % (us / 1000)])
    return out, ew


def attention_rows(profile_dir, dims, meta):
    """(context rows, generation rows) of every tpN/attention.csv under profile_dir."""
    ctx, gen = [], []
    for entry in sorted(os.listdir(profile_dir)):
        path = os.path.join(profile_dir, entry, "attention.csv")
        if not (entry.startswith("tp") and entry[2:].isdigit() and os.path.isfile(path)):
            continue
        tp = int(entry[2:])
        heads = dims["num_attention_heads"] // tp
        kv = max(1, dims["num_key_value_heads"] // tp)
        head = ["VLLM", meta["vllm_version"], meta["gpu"]]
        text = read_text(path, "LLMServingSim attention profile", DATA_MAX_BYTES)
        for i, r in enumerate(csv.DictReader(io.StringIO(text)), start=2):
            try:
                chunk, cached = int(r["prefill_chunk"]), int(r["kv_prefill"])
                n, kvd, us = int(r["n_decode"]), int(r["kv_decode"]), float(r["time_us"])
            except (KeyError, ValueError, TypeError) as e:
                raise InputProblem(path, "line %d" % i,
                                   "prefill_chunk, kv_prefill, n_decode, kv_decode, time_us",
                                   repr(e))
            if min(chunk, cached, n, kvd) < 0 or not us > 0:
                raise InputProblem(path, "line %d" % i, "counts >= 0 and time_us > 0",
                                   repr(r))
            tail = [heads, kv, dims["head_dim"], 1, "bfloat16", "bfloat16"]
            ms = "%.6g" % (us / 1000)
            if chunk == 0 and n > 0 and kvd > 0:
                gen.append(head + ["generation_attention", ATTENTION_SOURCE, n, 1] + tail
                           + [kvd - 1, 0, ms])
            elif n == 0 and cached == 0 and chunk > 0:
                ctx.append(head + ["context_attention", ATTENTION_SOURCE, 1, chunk] + tail
                           + [0, 0, ms])
    return ctx, gen


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("profile", help="a profile directory: meta.yaml and tpN/dense.csv")
    ap.add_argument("--config", required=True, help="the model's HuggingFace config.json")
    ap.add_argument("--gemm-out", required=True, help="the GEMM table to write (CSV)")
    ap.add_argument("--elementwise-out", help="the elementwise table to write (CSV)")
    ap.add_argument("--context-attention-out", help="the context attention table (CSV)")
    ap.add_argument("--generation-attention-out", help="the generation attention table (CSV)")
    args = ap.parse_args(argv)
    try:
        dims = model_dims(args.config)
        gemm, ew = rows(args.profile, dims)
        ctx, gen = [], []
        if args.context_attention_out or args.generation_attention_out:
            meta = top_level(os.path.join(args.profile, "meta.yaml"))
            ctx, gen = attention_rows(args.profile, dims, meta)
    except InputProblem as e:
        sys.stderr.write("llmservingsim-kernel-tables: %s\n" % e)
        return 2
    outputs = [(args.gemm_out, HEADER, gemm, "GEMM")]
    if args.elementwise_out:
        outputs.append((args.elementwise_out, ELEMENTWISE_HEADER, ew, "elementwise"))
    if args.context_attention_out:
        outputs.append((args.context_attention_out, ATTENTION_HEADER, ctx, "context attention"))
    if args.generation_attention_out:
        outputs.append((args.generation_attention_out, ATTENTION_HEADER, gen,
                        "generation attention"))
    for path, header, table, what in outputs:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(header)
        w.writerows(table)
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(buf.getvalue())
        os.replace(tmp, path)  # no half-written table
        print("%d %s rows -> %s" % (len(table), what, path))
    return 0
