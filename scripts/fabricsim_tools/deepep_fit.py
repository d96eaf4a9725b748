"""Fit DeepEP's kernel costs on its measured dispatch / combine tables (see --help).

The model (workloads/ep-exchange.h, EpKernelCost): a call costs a fixed part plus the larger of
the wire time and the kernels' own copying,

    t = fixed + max(7 P b / link, (7 P (per_copy + b / rate) + T token) / sms,
                    ceil(T / S) per_token_us) [+ fill, normal mode]

with P copies of b bytes per destination (8 GPUs, one node: normal mode one copy per GPU holding
any of a token's experts, low latency one per chosen expert; dispatch fp8 with a float32 scale
per 128 elements, combine bf16), link the simulated NVLink rate per GPU and direction, and sms
the normal kernels' SM budget (low latency runs on every SM: sms 1, rate per GPU). The normal
kernels also handle each of the rank's T tokens whatever its copies: the dispatch reads and
routes it (token = per_token_us), the combine reduces its experts' outputs into it (token =
b / token_bytes_per_second). The last term is the low-latency dispatch's: its kernel runs on
S = ceil(E / ceil(E / SMs)) SMs (one warp group per expert, DeepEP's launch rule) and each SM
casts and sends its T / S tokens one after another. Its sends are warp copies, one warp per
chosen expert, bound by their latency: a token's copy of b bytes takes b / token_bytes_per_second
whatever the top-k (the warps run side by side), and that time adds to the larger of the casts
(T / S per_token_us) and the GPU's copying instead of hiding under it (warp_copies_serial):
with top-1 over 128 SMs, 128 warps stream against 1024 at top-8, and the copying reaches 186
instead of ~280 GB/s. The low-latency kernels' fixed part grows
with the warp groups an SM holds, fixed_us + fixed_per_group_us x ceil(E / SMs) (more experts
an SM, fewer warps each). The normal combine's start-up grows with one token: its gathered
copies (G = 8 x the copies per destination, its own rank's too) and its result, fixed_us +
G b / start_copy_bytes_per_second + b / start_bytes_per_second (one token per rank measures
30 us at hidden 2048 and 45-48 at 7168). The normal kernels pipeline their copying with the
wire only past a depth: the shorter of the two adds itself, up to a token's copies,
+ min(wire, own, G b / fill_bytes_per_second). Fitted per mode and phase by Nelder-Mead on
the mean absolute percentage error over the rows of hidden 2048 and 7168 at 4 and 24 SMs (low
latency: every row of those hiddens) and of the one shape with few experts, hidden 4096 with 8
(top-2: 1.75 copies a token against about 4.6 at top-8, which alone tells a token's cost from a
copy's). Every other row is held out and reported. The low-latency dispatch's copying rate is
also printed as a share of H200's NVLink (scale_up_share; copies_on_links). The start-up and fill count a token's
copies only up to the widest G of the fit rows (copies_per_token_cap, not fitted): empirical
terms are not carried past their evidence. The held-out report also leaves out, in its own
segment, the points the tables contradict (contradicted(): more than 15 % slower than the same
shape with more tokens), and lists them.
"""

import argparse
import csv
import io
import json
import math
import sys

from .bounded import DATA_MAX_BYTES, read_text
from .stats import InputProblem

GPUS = 8
FIT_HIDDEN = (2048, 7168)
FIT_SMS = (4, 24)
# The low-latency shape that fits the per-token term (few experts: few SMs); the other
# few-expert shapes (hidden 5120 with 16, 6144 with 8) are held out.
FIT_FEW_EXPERTS = (4096, 8)
GPU_SMS = 132  # H200, the tables' GPU
GPU_SCALE_UP = 450e9  # its NVLink, bytes per second a direction


def ll_sms(experts, gpu_sms=GPU_SMS):
    """SMs DeepEP's low-latency kernels launch: one warp group per expert, as few SMs as hold them."""
    groups = -(-experts // gpu_sms)
    return -(-experts // groups)


def fp8_bytes(hidden):
    return hidden + 4 * hidden / 128


def copies_per_destination(experts, topk, per_gpu):
    if not per_gpu:
        return topk / GPUS
    return 1 - math.comb(experts - experts // GPUS, topk) / math.comb(experts, topk)


def read_rows(path):
    text = read_text(path, "DeepEP table", DATA_MAX_BYTES)
    rows = []
    for i, r in enumerate(csv.DictReader(io.StringIO(text)), start=2):
        try:
            mode = r["op_name"]
            row = {"mode": mode, "hidden": int(r["hidden_size"]), "tokens": int(r["num_token"]),
                   "topk": int(r["num_topk"]), "experts": int(r["num_experts"])}
            if mode == "normal":
                row.update(sms=int(r["dispatch_sms"]), d=float(r["dispatch_transmit_us"]),
                           c=float(r["combine_transmit_us"]))
            elif mode == "ll":
                row.update(sms=1, d=float(r["dispatch_avg_t_us"]), c=float(r["combine_avg_t_us"]))
            else:
                raise InputProblem(path, "op_name (line %d)" % i, "normal or ll", repr(mode))
        except (KeyError, ValueError, TypeError) as e:
            raise InputProblem(path, "line %d" % i, "DeepEP's columns with numbers", repr(e))
        rows.append(row)
    return rows


def warp_copies_serial(row, phase):
    """The low-latency dispatch: its latency-bound warp copies add to the copying."""
    return row["mode"] == "ll" and phase == "d"


def copies_on_links(row, phase):
    """The low-latency dispatch: its copying is the NVLink's (fitted at 97 % of the simulated
    link, and H20's 72 SMs reach it too), so the simulator carries it as a share of a GPU's
    scale-up bandwidth (scale_up_share, of H200's 450 GB/s) and counts only the copies inside
    the server; the combine's rate is the GPU's own (73 % of the link)."""
    return row["mode"] == "ll" and phase == "d"


def predict_us(row, phase, prm, link):
    """The model's time in us for `row`; `prm` maps the parameter names (PARAMS) to values, the
    absent ones 0."""
    per_gpu = row["mode"] == "normal"
    b = fp8_bytes(row["hidden"]) if phase == "d" else 2.0 * row["hidden"]
    copies = (GPUS - 1) * row["tokens"] * copies_per_destination(row["experts"], row["topk"], per_gpu)
    wire = copies * b / link
    work = copies * (prm["per_copy_ns"] * 1e-9 + b / prm["bytes_per_second"])
    per_token = prm.get("per_token_us", 0) * 1e-6
    if prm.get("token_bytes_per_second", 0) > 0:
        per_token += b / prm["token_bytes_per_second"]
    fixed = prm["fixed_us"]
    # The copies a token moves, its own rank's too, as far as the fit rows reach (the start-up
    # and fill terms are empirical: not carried past the widest fan-out they were fitted on).
    gathered = GPUS * copies_per_destination(row["experts"], row["topk"], per_gpu)
    if prm.get("copies_per_token_cap", 0) > 0:
        gathered = min(gathered, prm["copies_per_token_cap"])
    if prm.get("start_copy_bytes_per_second", 0) > 0:
        # One token's copies and its result, before the copies stream.
        fixed += 1e6 * b * gathered / prm["start_copy_bytes_per_second"]
    if prm.get("start_bytes_per_second", 0) > 0:
        fixed += 1e6 * b / prm["start_bytes_per_second"]
    if per_gpu:
        own = (work + row["tokens"] * per_token) / row["sms"]
    elif warp_copies_serial(row, phase):
        tokens_per_sm = -(-row["tokens"] // ll_sms(row["experts"]))
        warp = tokens_per_sm * b / prm["token_bytes_per_second"]
        own = warp + max(work, tokens_per_sm * prm.get("per_token_us", 0) * 1e-6)
    else:
        own = max(work, -(-row["tokens"] // ll_sms(row["experts"])) * per_token)
    if not per_gpu:
        fixed += prm.get("fixed_per_group_us", 0) * -(-row["experts"] // GPU_SMS)
    fill = 0.0
    if prm.get("fill_bytes_per_second", 0) > 0:
        # The copying and the wire overlap past the pipeline's depth: the shorter adds itself,
        # up to a token's copies.
        fill = min(wire, own, b * gathered / prm["fill_bytes_per_second"])
    return fixed + 1e6 * (max(wire, own) + fill)


# How each parameter is printed (and shipped in workloads/ep-exchange.cc).
ROUNDING = {"fixed_us": "%.2f", "per_copy_ns": "%.1f", "bytes_per_second": "%.4g",
            "per_token_us": "%.4g", "token_bytes_per_second": "%.4g", "fixed_per_group_us": "%.3g",
            "start_copy_bytes_per_second": "%.4g", "start_bytes_per_second": "%.4g",
            "fill_bytes_per_second": "%.4g", "copies_per_token_cap": "%.5g"}


def mape(rows, phase, prm, link):
    return sum(abs(predict_us(r, phase, prm, link) / r[phase] - 1) for r in rows) / len(rows)


def nelder_mead(f, x0, scale, iters=2000):
    """Minimise f from x0 (simplex of x0 and x0 + scale_i e_i); returns (x, f(x))."""
    pts = [list(x0)] + [[x + (scale[i] if i == j else 0) for j, x in enumerate(x0)]
                        for i in range(len(x0))]
    vals = [f(p) for p in pts]
    for _ in range(iters):
        order = sorted(range(len(pts)), key=vals.__getitem__)
        pts, vals = [pts[i] for i in order], [vals[i] for i in order]
        if vals[-1] - vals[0] < 1e-12:
            break
        centre = [sum(p[j] for p in pts[:-1]) / (len(pts) - 1) for j in range(len(x0))]
        def along(t):
            return [c + t * (w - c) for c, w in zip(centre, pts[-1])]
        r = along(-1)
        fr = f(r)
        if fr < vals[0]:
            e = along(-2)
            fe = f(e)
            pts[-1], vals[-1] = (e, fe) if fe < fr else (r, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = r, fr
        else:
            c = along(0.5)
            fc = f(c)
            if fc < vals[-1]:
                pts[-1], vals[-1] = c, fc
            else:
                pts = [pts[0]] + [[b + 0.5 * (x - b) for b, x in zip(pts[0], p)] for p in pts[1:]]
                vals = [vals[0]] + [f(p) for p in pts[1:]]
    best = min(range(len(pts)), key=vals.__getitem__)
    return pts[best], vals[best]


def fit(rows, phase, link, start, fixed=None):
    """Nelder-Mead on the logarithms of the parameters `start` names (a dict, their starting
    values), restarted from its own result until it stops improving (the max() in the model has
    kinks); `fixed` (a dict) holds parameters that are not fitted. Returns (dict, MAPE), the
    dict with the fixed ones too."""
    names = list(start)
    fixed = dict(fixed or {})
    def objective(logs):
        return mape(rows, phase, dict(fixed, **{n: math.exp(v) for n, v in zip(names, logs)}),
                    link)
    x = [math.log(max(start[n], 1e-3)) for n in names]
    best = objective(x)
    while True:
        x2, e = nelder_mead(objective, x, [0.5] * len(x))
        if e >= best - 1e-9:
            break
        x, best = x2, e
    return dict(fixed, **{n: math.exp(v) for n, v in zip(names, x)}), best


def is_fit_row(r):
    budget = r["mode"] == "ll" or r["sms"] in FIT_SMS
    return budget and (r["hidden"] in FIT_HIDDEN or (r["hidden"], r["experts"]) == FIT_FEW_EXPERTS)


def contradicted(rows, phase, tolerance=0.15):
    """The rows the table itself contradicts: measured more than `tolerance` slower than a row of
    the same shape and SM budget with more tokens (a call's time cannot fall as its tokens grow,
    so no model that grows with the tokens holds both within the tolerance; a slow sample). Ids
    of the rows."""
    series = {}
    for r in rows:
        series.setdefault((r["mode"], r["hidden"], r["topk"], r["experts"], r["sms"]), []).append(r)
    out = set()
    for v in series.values():
        by_tokens = {}
        for r in v:
            by_tokens.setdefault(r["tokens"], []).append(r)
        # Walking down from the largest call: the fastest time measured with more tokens (a
        # repeat of the same tokens is not a larger call).
        floor = math.inf
        for tokens in sorted(by_tokens, reverse=True):
            for r in by_tokens[tokens]:
                if floor < (1 - tolerance) * r[phase]:
                    out.add(id(r))
            floor = min([floor] + [r[phase] for r in by_tokens[tokens]])
    return out


def summary(rows, phase, prm, link):
    errs = [predict_us(r, phase, prm, link) / r[phase] - 1 for r in rows]
    if not errs:
        return None
    n = len(errs)
    return {"points": n, "mape_pct": round(100 * sum(map(abs, errs)) / n, 1),
            "bias_pct": round(100 * sum(errs) / n, 1),
            "within_15_pct": round(100 * sum(abs(e) <= 0.15 for e in errs) / n, 1),
            "beyond_15": sum(abs(e) > 0.15 for e in errs)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tables", nargs="+", help="DeepEP tables (corpus measurements/deepep/*.csv)")
    ap.add_argument("--link-rate", type=float, default=313.3,
                    help="simulated NVLink rate per GPU and direction, GB/s (default 313.3: "
                         "NCCL's 370.8 for Hopper x the H100-fitted link efficiency 0.845)")
    args = ap.parse_args(argv)
    link = args.link_rate * 1e9
    try:
        rows = [r for t in args.tables for r in read_rows(t)]
    except InputProblem as e:
        sys.stderr.write("fit-deepep-kernels: %s\n" % e)
        return 2
    out = {"link_rate_gbps": args.link_rate, "fit": {}, "held_out": {}, "contradicted": {}}
    for mode, starts in (
            ("normal", {"d": {"fixed_us": 20.0, "per_copy_ns": 50.0, "bytes_per_second": 10e9,
                              "per_token_us": 0.05, "fill_bytes_per_second": 2e9},
                        "c": {"fixed_us": 20.0, "per_copy_ns": 50.0, "bytes_per_second": 10e9,
                              "token_bytes_per_second": 50e9,
                              "start_copy_bytes_per_second": 20e9,
                              "start_bytes_per_second": 5e9, "fill_bytes_per_second": 4e9}}),
            ("ll", {"d": {"fixed_us": 5.0, "per_copy_ns": 1.0, "bytes_per_second": 250e9,
                          "per_token_us": 2.0, "token_bytes_per_second": 5e9,
                          "fixed_per_group_us": 1.5},
                    "c": {"fixed_us": 8.0, "per_copy_ns": 1.0, "bytes_per_second": 250e9,
                          "token_bytes_per_second": 5e9, "fixed_per_group_us": 1.0,
                          "start_copy_bytes_per_second": 40e9}})):
        mine = [r for r in rows if r["mode"] == mode]
        if not mine:
            continue
        train = [r for r in mine if is_fit_row(r)]
        held = [r for r in mine if not is_fit_row(r)]
        if not train:
            sys.stderr.write("fit-deepep-kernels: %s: no %s row the fit takes (hidden %s, or %s)\n"
                             % (", ".join(args.tables), mode,
                                " or ".join(map(str, FIT_HIDDEN)),
                                "hidden %d with %d experts" % FIT_FEW_EXPERTS))
            return 2
        # The widest fan-out of the fit rows (a copy per rank or per expert), rounded up so
        # that it never cuts a fit row's own.
        fixed = {"copies_per_token_cap": math.ceil(1e4 * max(
            GPUS * copies_per_destination(r["experts"], r["topk"], mode == "normal")
            for r in train)) / 1e4}
        for phase, name in (("d", "dispatch"), ("c", "combine")):
            prm, err = fit(train, phase, link, starts[phase], fixed)
            key = "%s_%s" % ("deepep-normal" if mode == "normal" else "deepep-low-latency", name)
            rounded = {n: float(ROUNDING[n] % v) for n, v in prm.items()}
            out["fit"][key] = dict(rounded, per="SM" if mode == "normal" else "GPU",
                                   fit_points=len(train), fit_mape_pct=round(100 * err, 2))
            if train and warp_copies_serial(train[0], phase):
                out["fit"][key]["warp_copies_serial"] = True
            if train and copies_on_links(train[0], phase):
                out["fit"][key]["scale_up_share"] = float(
                    "%.4g" % (rounded["bytes_per_second"] / GPU_SCALE_UP))
            slow = contradicted(mine, phase)
            segments = {"all": held,
                        "all but contradicted": [r for r in held if id(r) not in slow]}
            if mode == "normal":
                segments.update({"<= 64 tokens": [r for r in held if r["tokens"] <= 64],
                                 "128-2048 tokens": [r for r in held if 128 <= r["tokens"] <= 2048],
                                 ">= 4096 tokens": [r for r in held if r["tokens"] >= 4096],
                                 "hidden 5120": [r for r in held if r["hidden"] == 5120],
                                 "8 experts": [r for r in held if r["experts"] == 8]})
            else:
                segments.update({"8-16 experts": [r for r in held if r["experts"] <= 16],
                                 ">= 128 experts": [r for r in held if r["experts"] >= 128],
                                 "<= 16 tokens": [r for r in held if r["tokens"] <= 16],
                                 "32-256 tokens": [r for r in held if 32 <= r["tokens"] <= 256],
                                 ">= 512 tokens": [r for r in held if r["tokens"] >= 512]})
            out["held_out"][key] = {k: summary(v, phase, rounded, link) for k, v in segments.items()}
            # The points its own table contradicts, and what the model gives them.
            out["contradicted"][key] = [
                dict({k: r[k] for k in ("hidden", "topk", "experts", "sms", "tokens")},
                     measured_us=round(r[phase], 1),
                     predicted_us=round(predict_us(r, phase, rounded, link), 1),
                     fit_row=is_fit_row(r))
                for r in mine if id(r) in slow]
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0
