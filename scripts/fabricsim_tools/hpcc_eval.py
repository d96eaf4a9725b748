"""Generates scenarios/hpcc-eval/*.json, the HPCC-style evaluation (Li et al., SIGCOMM 2019).

Run `python3 scripts/fabricsim_tools/hpcc_eval.py` to rewrite the files; a test checks that the
committed files equal what this module generates.

Every file is one point of {paper fat-tree, scaled-down leaf-spine} x {web search, FB Hadoop}
x {30 %, 50 % load} x {without, with a 60-to-1 incast of 500 KB at 2 % load}. Congestion control
defaults to DCQCN; compare algorithms with `--set transport.cc=hpcc` (or `scripts/sweep`).

The incast's 2 % is network load, like the Poisson load: every host is the receiver of its own
repeating incast at 2 % of its link, so incast events land on random hosts at a total rate of
2 % of the host capacity. Each receiver's 60 senders are spread evenly over the other hosts
(offsets 1 + floor(k (H - 1) / 60)), so every host also sends 2 % of its link as incast traffic;
the scenario format's sender count would pick hosts 0..59 every time.
"""

import json
import os

INCAST_SENDERS = 60
INCAST_BYTES = 500000
INCAST_LOAD = 0.02

# The two scales. The scaled-down fabric keeps the paper's ToR (16 x 100G hosts, 4 x 400G
# uplinks, 1:1) but has 4 ToRs and 4 spines (64 hosts) and a shorter traffic window.
SCALES = {
    "paper": {
        "topology": {"type": "fat-tree", "variant": "hpcc-paper"},
        "hosts": 320,
        "duration_ns": 5000000,
        "stop_ns": 200000000,
        "monitor_ns": 100000,
        "title": "HPCC paper fat-tree (320 x 100G hosts, 400G fabric)",
    },
    "small": {
        "topology": {
            "type": "leaf-spine",
            "leaves": 4,
            "spines": 4,
            "hosts_per_leaf": 16,
            "host_link": {"rate": "100Gbps", "delay": "1us"},
            "fabric_link": {"rate": "400Gbps", "delay": "1us"},
        },
        "hosts": 64,
        "duration_ns": 4000000,
        "stop_ns": 100000000,
        "monitor_ns": 10000,
        "title": "scaled-down leaf-spine (4 ToRs x 16 x 100G hosts, 4 x 400G spines)",
    },
}

WORKLOADS = {"websearch": "web search", "fb-hadoop": "FB Hadoop"}
LOADS = (30, 50)


def incast_senders(receiver, hosts, count=INCAST_SENDERS):
    """The receiver's senders: `count` hosts at evenly spread offsets from it."""
    return [(receiver + 1 + (k * (hosts - 1)) // count) % hosts for k in range(count)]


def build(scale, workload, load, incast):
    """One evaluation scenario as a dict."""
    s = SCALES[scale]
    what = "%s at %d%% load" % (WORKLOADS[workload], load)
    if incast:
        what += " + 60-to-1 incast of 500 KB at 2% load"
    traffic = {
        "poisson": {
            "cdf": "../cdf/%s.cdf" % workload,
            "load": load / 100.0,
            "duration_ns": s["duration_ns"],
        }
    }
    if incast:
        traffic["incast"] = [
            {
                "receiver": r,
                "senders": incast_senders(r, s["hosts"]),
                "size_bytes": INCAST_BYTES,
                "load": INCAST_LOAD,
                "start_ns": 0,
                "duration_ns": s["duration_ns"],
            }
            for r in range(s["hosts"])
        ]
    return {
        "name": "hpcc-eval %s: %s on the %s" % (scale, what, s["title"]),
        "seed": 1,
        "stop_ns": s["stop_ns"],
        "topology": s["topology"],
        "transport": {"cc": "dcqcn", "mtu_bytes": 1000, "pfc": True},
        "switch": {
            "buffer_bytes": "32MiB",
            "ecn": {"kmin_bytes": "100KB", "kmax_bytes": "400KB", "pmax": 0.2, "per_rate": "25Gbps"},
        },
        "traffic": traffic,
        "monitor": {"interval_ns": s["monitor_ns"]},
        # The paper's simulations ran HPCC with maxStage 0 (its code default is 5).
        "attributes": {"ns3::Hpcc::MaxStage": "0"},
    }


def file_name(scale, workload, load, incast):
    return "%s-%s-%d%s.json" % (scale, workload, load, "-incast" if incast else "")


def dumps(doc):
    """JSON with one line per incast entry, so that the files stay readable."""
    incast = doc["traffic"].get("incast")
    if incast is None:
        return json.dumps(doc, indent=2) + "\n"
    marker = "@INCAST@"
    text = json.dumps(dict(doc, traffic=dict(doc["traffic"], incast=marker)), indent=2)
    entries = ",\n".join("      " + json.dumps(e) for e in incast)
    return text.replace('"%s"' % marker, "[\n" + entries + "\n    ]") + "\n"


def all_files():
    """{file name: text} for every evaluation scenario."""
    out = {}
    for scale in SCALES:
        for workload in WORKLOADS:
            for load in LOADS:
                for incast in (False, True):
                    doc = build(scale, workload, load, incast)
                    out[file_name(scale, workload, load, incast)] = dumps(doc)
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    target = os.path.join(here, "..", "..", "scenarios", "hpcc-eval")
    os.makedirs(target, exist_ok=True)
    for name, text in all_files().items():
        json.loads(text)  # the hand-laid-out files must still be valid JSON
        with open(os.path.join(target, name), "w") as f:
            f.write(text)
    print("wrote %d scenarios to %s" % (len(all_files()), os.path.normpath(target)))


if __name__ == "__main__":
    main()
