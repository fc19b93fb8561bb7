#!/usr/bin/python3
"""Anvil with oneDNN offloading (BYOC) against Anvil alone, on whole models, interleaved.

    /usr/bin/python3 bench/models/byoc_compare.py [--models resnet18 mobilenet_v2 generated]
                                                  [--threads 1 2] [--rounds 5] [--repeat 20]

Each model is compiled twice with `anvil compile` at the default settings: `--target llvm`
(every kernel Anvil's) and `--target "dnnl, llvm"` (what oneDNN computes goes to it:
the partition summary's share of FLOPs is reported). Both are checked against the model's test
data. Then, per thread count, `rounds` rounds alternate the two (native, dnnl, native, ...), each
timing `repeat` runs after warm-up with `anvil run --threads T`; the table shows the median of
the per-round medians and dnnl / native (below 1: offloading is faster).

The environment is left as a user has it: no OMP_* variables. libanvil_runtime_dnnl.so gives
oneDNN's OpenMP team as many threads as Anvil's pool has (--threads T), fewer for small steps.
"""
import argparse
import datetime
import os
import platform
import re
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from compare import (StepFailed, add_model_arguments, generated_models, number,  # noqa: E402
                     run)


def resolve(models, model_dir):
    out = []
    for m in models:
        if m == "generated":
            out += generated_models()
        elif os.path.isdir(m):
            out.append(os.path.abspath(m))
        else:
            out.append(os.path.join(model_dir, m))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    add_model_arguments(ap)
    args = ap.parse_args()

    print(f"{datetime.date.today()}, {platform.node()}, {os.cpu_count()} cores")
    tmp = tempfile.mkdtemp(prefix="anvil_byoc_bench_")
    rows = []
    for model_dir in resolve(args.models, args.model_dir):
        name = os.path.basename(model_dir)
        model = os.path.join(model_dir, "model.onnx")
        inputs = os.path.join(model_dir, "test_data_set_0")
        try:
            libs = {}
            offloaded = "-"
            for kind, target in (("native", "llvm"), ("dnnl", "dnnl, llvm")):
                so = os.path.join(tmp, f"{name}_{kind}.so")
                _, out = run([args.anvil, "compile", model, "-o", so, "--target", target])
                if kind == "dnnl":
                    m = re.search(r"dnnl: .*\(([0-9.]+) %", out)
                    offloaded = f"{m.group(1)} %" if m else "0 %"
                run([args.anvil, "run", so, "--inputs", inputs, "--compare", inputs])
                libs[kind] = so
            for t in args.threads:
                env = {k: v for k, v in os.environ.items() if not k.startswith("OMP_")}
                times = {"native": [], "dnnl": []}
                for _ in range(args.rounds):
                    for kind, so in libs.items():
                        _, out = run([args.anvil, "run", so, "--inputs", inputs, "--print-time",
                                      "--repeat", str(args.repeat), "--threads", str(t)], env=env)
                        times[kind].append(number(r"median=([0-9.]+)", out))
                native = statistics.median(times["native"])
                dnnl = statistics.median(times["dnnl"])
                rows.append((name, t, native, dnnl, dnnl / native, offloaded))
        except StepFailed as e:
            rows.append((name, 0, float("nan"), float("nan"), float("nan"), str(e)))
    print(f"{'model':28} {'threads':>7} {'native ms':>10} {'dnnl ms':>10} {'dnnl/native':>12}"
          f"  offloaded FLOPs")
    for name, t, native, dnnl, ratio, note in rows:
        print(f"{name:28} {t:>7} {native:>10.3f} {dnnl:>10.3f} {ratio:>12.2f}  {note}")


if __name__ == "__main__":
    main()
