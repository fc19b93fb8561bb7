#!/usr/bin/python3
"""A transformer compiled with a symbolic sequence length against the same model compiled with
a static one, at the same length (the transformer issue's "dynamic shapes within 1.3x"):

    /usr/bin/python3 bench/models/dynamic_compare.py STATIC_DIR DYNAMIC_DIR --bucket seq=128
                                                     [--threads 1 2] [--rounds 3] [--repeat 10]

STATIC_DIR and DYNAMIC_DIR hold model.onnx and test_data_set_0/ (generate_transformers.py:
bert_base_2l_t128 and bert_base_2l_dyn, the same layers exported with a fixed and a symbolic
token count). Three compiles, untuned: static; dynamic (generic kernels that loop to the run-time
length, on the VM); dynamic with --shape-buckets (kernels specialized for the bucket's length,
the generic ones for any other). Each is run on the dynamic model's test input, rounds
interleaved, and the medians printed with their ratio to the static compile.
"""
import argparse
import datetime
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

sys.path.insert(0, HERE)
from compare import anvil_median, cpu_name, run  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("static_dir")
    p.add_argument("dynamic_dir")
    p.add_argument("--bucket", required=True, help="--shape-buckets of the third compile")
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--anvil", default=os.path.join(ROOT, "build", "src", "driver", "cli", "anvil"))
    a = p.parse_args()
    inputs = os.path.join(a.dynamic_dir, "test_data_set_0")
    with tempfile.TemporaryDirectory() as tmp:
        builds = {
            "static": (os.path.join(a.static_dir, "model.onnx"), []),
            "dynamic": (os.path.join(a.dynamic_dir, "model.onnx"), []),
            "dynamic, buckets " + a.bucket: (os.path.join(a.dynamic_dir, "model.onnx"),
                                             ["--shape-buckets", a.bucket]),
        }
        libs = {}
        for i, (name, (model, extra)) in enumerate(builds.items()):
            libs[name] = os.path.join(tmp, f"m{i}.so")
            run([a.anvil, "compile", model, "-o", libs[name]] + extra)
        times = {(n, t): [] for n in builds for t in a.threads}
        for _ in range(a.rounds):
            for t in a.threads:
                for name, so in libs.items():
                    times[(name, t)].append(anvil_median(a.anvil, so, inputs, t, a.repeat))
    print(f"{datetime.date.today()}, {cpu_name()}; inputs {inputs}")
    print(f"{'compile':34} {'threads':>7} {'ms':>10} {'/ static':>9}")
    for t in a.threads:
        static = sorted(times[("static", t)])[a.rounds // 2]
        for name in builds:
            ms = sorted(times[(name, t)])[a.rounds // 2]
            print(f"{name:34} {t:7d} {ms:10.3f} {ms / static:9.2f}")


if __name__ == "__main__":
    main()
