#!/usr/bin/env python3
"""Anvil against ONNX Runtime on whole models, interleaved, medians and ratios.

    python3 bench/models/compare.py [--models resnet18 mobilenet_v2] [--threads 1 2]
                                    [--rounds 5] [--repeat 20]

Each model is compiled once with the default settings (`anvil compile`, no tuning). Then, per
thread count, `rounds` rounds alternate the two systems (Anvil, ORT, Anvil, ORT, ...), each
timing `repeat` runs after its warm-up and reporting their median; the table shows the median
of those per-round medians and the ratio Anvil / ORT (below 1: Anvil is faster). Interleaving
makes both sides see the same machine load. ORT is onnxruntime-node, pinned in package.json
(run `npm ci` in bench/models first).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_MODELS = os.path.join(os.path.dirname(ROOT), "shared", "models")


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stdout}{r.stderr}")
    return r.stdout + r.stderr


def anvil_median(anvil, so, inputs, threads, repeat):
    out = run([anvil, "run", so, "--inputs", inputs, "--print-time", "--repeat", str(repeat),
               "--threads", str(threads)])
    return float(re.search(r"median=([0-9.]+)", out).group(1))


def ort_median(model, inputs, threads, repeat):
    out = run(["node", os.path.join(HERE, "ort_time.js"), model, inputs, str(threads),
               str(repeat)])
    return float(re.search(r"median_ms=([0-9.]+)", out).group(1))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", nargs="+", default=["resnet18", "mobilenet_v2"],
                   help="names under --model-dir, or directories holding model.onnx and "
                        "test_data_set_0/")
    p.add_argument("--model-dir", default=DEFAULT_MODELS)
    p.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--anvil", default=os.path.join(ROOT, "build", "src", "driver", "cli", "anvil"))
    a = p.parse_args()
    if not os.path.isdir(os.path.join(HERE, "node_modules", "onnxruntime-node")):
        sys.exit("onnxruntime-node is not installed: run `npm ci` in bench/models")

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.models:
            d = name if os.path.isdir(name) else os.path.join(a.model_dir, name)
            model, inputs = os.path.join(d, "model.onnx"), os.path.join(d, "test_data_set_0")
            so = os.path.join(tmp, os.path.basename(os.path.normpath(d)) + ".so")
            run([a.anvil, "compile", model, "-o", so])
            for t in a.threads:
                anvil_ms, ort_ms = [], []
                for _ in range(a.rounds):
                    anvil_ms.append(anvil_median(a.anvil, so, inputs, t, a.repeat))
                    ort_ms.append(ort_median(model, inputs, t, a.repeat))
                am, om = statistics.median(anvil_ms), statistics.median(ort_ms)
                rows.append((os.path.basename(os.path.normpath(d)), t, am, om, am / om))
                print(f"{rows[-1][0]:<16}{t:>8}{am:>12.3f}{om:>12.3f}{am / om:>9.2f}",
                      file=sys.stderr)

    print(f"{'model':<16}{'threads':>8}{'anvil ms':>12}{'ort ms':>12}{'ratio':>9}")
    for m, t, am, om, r in rows:
        print(f"{m:<16}{t:>8}{am:>12.3f}{om:>12.3f}{r:>9.2f}")


if __name__ == "__main__":
    main()
