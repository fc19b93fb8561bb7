#!/usr/bin/python3
"""Where a model's time goes, in Anvil and in ONNX Runtime: per-kernel and per-node profiles of
one model side by side (the transformer issue's "before and after" tables in bench/README.md).

    /usr/bin/python3 bench/models/profile_compare.py MODEL_DIR... [--threads 1 2] [--repeat 20]
                                                     [--top 12]

Each MODEL_DIR holds model.onnx and test_data_set_0/ (generate_transformers.py makes them).
Anvil: `anvil compile` (untuned, default settings), then `anvil run --profile` — each fused
kernel's mean time per run (its calls x mean), with the kernel's GFLOP/s. ONNX Runtime:
ort_profile.js — each node of its optimized graph (its own fusions: Gemm with the bias,
SkipLayerNormalization, FusedMatMul, ...) summed per op type, mean per run. Both over `repeat`
runs after warm-up; the two tables' totals are the sums of the kernels' (nodes') times, which
leave out what runs between them (the median run, timed without the profiler for Anvil, is
printed beside).
"""
import argparse
import collections
import datetime
import json
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

sys.path.insert(0, HERE)
from compare import anvil_median, cpu_name, run  # noqa: E402

# "kernel calls total_ms mean_ms share GFLOP/s MFLOP" rows of `anvil run --profile` ("-" for the
# FLOP columns of a kernel whose operations it does not count).
PROFILE_ROW = re.compile(
    r"^(\S+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)%\s+([\d.]+|-)\s+([\d.]+|-)$")


def anvil_profile(anvil, model_dir, so, threads, repeat):
    """[(kernel, calls per run, ms per run, GFLOP/s)], slowest first, and the median run's ms
    (timed without the profiler)."""
    inputs = os.path.join(model_dir, "test_data_set_0")
    _, out = run([anvil, "run", so, "--inputs", inputs, "--threads", str(threads), "--repeat",
                  str(repeat), "--profile", "--print-top", "1000"])
    runs = int(re.search(r"profile: (\d+) runs", out).group(1))
    rows = []
    for line in out.splitlines():
        m = PROFILE_ROW.match(line.strip())
        if not m or m.group(1) == "total":
            continue
        name, calls, total_ms, _, _, gflops, _ = m.groups()
        rows.append((name, int(calls) / runs, float(total_ms) / runs,
                     None if gflops == "-" else float(gflops)))
    rows.sort(key=lambda r: -r[2])
    return rows, anvil_median(anvil, so, inputs, threads, repeat)


def ort_profile(model_dir, threads, repeat):
    """{op type: (nodes, ms per run)}, slowest first, and the median run's ms."""
    _, out = run(["node", os.path.join(HERE, "ort_profile.js"),
                  os.path.join(model_dir, "model.onnx"),
                  os.path.join(model_dir, "test_data_set_0"), str(threads), str(repeat)])
    d = json.loads(next(x for x in out.splitlines() if x.startswith("{")))
    ops = collections.defaultdict(lambda: [0, 0.0])
    for n in d["nodes"]:
        ops[n["op"]][0] += 1
        ops[n["op"]][1] += n["ms"]
    return sorted(ops.items(), key=lambda kv: -kv[1][1]), d["run_ms"]


def anvil_table(rows, run_ms, top):
    total = sum(r[2] for r in rows)
    lines = ["| Anvil kernel | calls | ms per run | share | GFLOP/s |", "|---|---|---|---|---|"]
    for name, calls, ms, gflops in rows[:top]:
        rate = "-" if gflops is None else f"{gflops:.1f}"
        lines.append(f"| {name} | {calls:g} | {ms:.3f} | {100 * ms / total:.1f} % | {rate} |")
    rest = rows[top:]
    if rest:
        ms = sum(r[2] for r in rest)
        lines.append(f"| ({len(rest)} more) | | {ms:.3f} | {100 * ms / total:.1f} % | |")
    lines.append(f"| **kernels' sum** (run: {run_ms:.3f}) | | **{total:.3f}** | | |")
    return lines


def ort_table(ops, run_ms):
    total = sum(v[1] for _, v in ops)
    lines = ["| ONNX Runtime op | nodes | ms per run | share |", "|---|---|---|---|"]
    for op, (nodes, ms) in ops:
        lines.append(f"| {op} | {nodes} | {ms:.3f} | {100 * ms / total:.1f} % |")
    lines.append(f"| **nodes' sum** (run: {run_ms:.3f}) | | **{total:.3f}** | |")
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("models", nargs="+")
    p.add_argument("--threads", nargs="+", type=int, default=[1])
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--top", type=int, default=12, help="Anvil kernels listed one by one")
    p.add_argument("--anvil", default=os.path.join(ROOT, "build", "src", "driver", "cli", "anvil"))
    a = p.parse_args()
    _, rev = run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"])
    print(f"{datetime.date.today()}, {cpu_name()}, commit {rev.strip()}; untuned, "
          f"{a.repeat} runs each")
    with tempfile.TemporaryDirectory() as tmp:
        for d in a.models:
            label = os.path.basename(os.path.normpath(d))
            so = os.path.join(tmp, label + ".so")
            run([a.anvil, "compile", os.path.join(d, "model.onnx"), "-o", so])
            for t in a.threads:
                rows, anvil_ms = anvil_profile(a.anvil, d, so, t, a.repeat)
                ops, ort_ms = ort_profile(d, t, a.repeat)
                print(f"\n{label}, {t} thread{'s' if t > 1 else ''}:\n")
                print("\n".join(anvil_table(rows, anvil_ms, a.top)))
                print()
                print("\n".join(ort_table(ops, ort_ms)))
                sys.stdout.flush()


if __name__ == "__main__":
    main()
