#!/usr/bin/python3
"""bfloat16 models: Anvil's `--mixed-precision bf16` code against its own fp32 code on the same
ONNX models, interleaved, medians and ratios.

    PYTHONPATH=build/python /usr/bin/python3 bench/models/bf16_compare.py
        [--models resnet18 mobilenet_v2] [--threads 1 2] [--rounds 5] [--repeat 20]
        [--random-inputs 7]

Each model (model.onnx and test_data_set_0/ under --model-dir, ../shared/models) is compiled
twice with `anvil compile` (defaults, no tuning): as it is, and with --mixed-precision bf16
(graph pass to_mixed_precision: bfloat16 products summed in float32 with vdpbf16ps where the CPU
has AVX-512 BF16).

Accuracy: whether the top-1 class of the bf16 build is the fp32 build's on the test input, on
how many of `random-inputs` standard-normal inputs it is (noise has no clear class: the top two
logits are often close), and the largest difference of the outputs relative to the fp32
output's largest magnitude (over all inputs).

Timing: per thread count, `rounds` rounds alternate fp32 and bf16, each the median of `repeat`
runs; the table shows the medians of the round medians and bf16 / fp32 (below 1: bf16 is
faster). Beside it, one core's peak of vfmadd231ps and vdpbf16ps (bench/dot_peak.cpp), which
bounds what bf16 can gain where the convolutions are compute-bound.
"""
import argparse
import datetime
import os
import statistics
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from compare import (StepFailed, add_model_arguments, anvil_median, anvil_output,  # noqa: E402
                     cpu_name, peak_binary, run)


def write_inputs(model_dir, out_dir, count):
    """out_dir/input_K/input_0.pb: the test input, then `count` random ones of its shape."""
    with open(os.path.join(model_dir, "test_data_set_0", "input_0.pb"), "rb") as f:
        tensor = onnx.TensorProto()
        tensor.ParseFromString(f.read())
    x = numpy_helper.to_array(tensor)
    rng = np.random.default_rng(0)
    dirs = []
    for k in range(count + 1):
        d = os.path.join(out_dir, f"input_{k}")
        os.makedirs(d)
        value = x if k == 0 else rng.standard_normal(x.shape).astype(x.dtype)
        with open(os.path.join(d, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(value, tensor.name).SerializeToString())
        dirs.append(d)
    return dirs


def dot_peak(anvil, tmp):
    """(fma GFLOP/s, bf16 GFLOP/s) of one core, from bench/dot_peak (built, or compiled here)."""
    _, out = run([peak_binary(anvil, tmp, "dot_peak")])
    fields = dict(f.split("=") for f in out.split()[1:])
    return float(fields["fma_gflops"]), float(fields["bf16_gflops"])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_model_arguments(p)
    p.add_argument("--random-inputs", type=int, default=7)
    a = p.parse_args()
    rows, accuracy = [], []
    with tempfile.TemporaryDirectory() as tmp:
        fma_peak, bf16_peak = dot_peak(a.anvil, tmp)
        for name in a.models:
            d = os.path.join(a.model_dir, name)
            work = os.path.join(tmp, name)
            os.makedirs(work)
            try:
                model = os.path.join(d, "model.onnx")
                fp32_so, bf16_so = (os.path.join(work, n + ".so") for n in ("fp32", "bf16"))
                run([a.anvil, "compile", model, "-o", fp32_so])
                run([a.anvil, "compile", model, "-o", bf16_so, "--mixed-precision", "bf16"])
                inputs = write_inputs(d, work, a.random_inputs)
                same, worst = [], 0.0
                for k, inp in enumerate(inputs):
                    f = anvil_output(a.anvil, fp32_so, inp, os.path.join(work, f"fp32_{k}.npz"))
                    b = anvil_output(a.anvil, bf16_so, inp, os.path.join(work, f"bf16_{k}.npz"))
                    same.append(bool(f.argmax() == b.argmax()))
                    worst = max(worst, float(np.abs(f - b).max() / np.abs(f).max()))
                accuracy.append((name, same[0], sum(same[1:]), len(same) - 1, worst))
            except StepFailed as e:
                print(f"{name}: not run: {e}", file=sys.stderr)
                continue
            for t in a.threads:
                fp32_ms, bf16_ms = [], []
                for _ in range(a.rounds):
                    fp32_ms.append(anvil_median(a.anvil, fp32_so, inputs[0], t, a.repeat))
                    bf16_ms.append(anvil_median(a.anvil, bf16_so, inputs[0], t, a.repeat))
                row = (name, t, statistics.median(fp32_ms), statistics.median(bf16_ms))
                rows.append(row)
                print(row, file=sys.stderr)

    print(f"{datetime.date.today().isoformat()}, {cpu_name()}, {os.cpu_count()} cores")
    print(f"one core's peak: vfmadd231ps {fma_peak:.1f} GFLOP/s, vdpbf16ps {bf16_peak:.1f} "
          f"GFLOP/s (bf16/fp32 {bf16_peak / fma_peak:.2f})")
    print(f"{'model':<14}{'threads':>8}{'fp32 ms':>10}{'bf16 ms':>10}{'bf16/fp32':>11}")
    for m, t, f, b in rows:
        print(f"{m:<14}{t:>8}{f:>10.3f}{b:>10.3f}{b / f:>11.2f}")
    print()
    print(f"{'model':<14}{'top-1 = fp32: test input':>26}{'random inputs':>15}"
          f"{'max |bf16 - fp32| / max |fp32|':>33}")
    for m, test_same, random_same, n, worst in accuracy:
        print(f"{m:<14}{str(test_same):>26}{f'{random_same}/{n}':>15}{worst:>33.4f}")


if __name__ == "__main__":
    main()
