#!/usr/bin/python3
"""The same torchvision network imported from TorchScript and from ONNX, compiled by Anvil and
timed side by side (interleaved rounds, medians, ratio); and how long from_pytorch takes.

    PYTHONPATH=build/python /usr/bin/python3 bench/models/pytorch_vs_onnx.py \
        [--models resnet18 resnet50 mobilenet_v2] [--rounds 7] [--repeat 20] [--threads 2]

Both paths should reach the same graph, so their run times should match: the ratio
TorchScript / ONNX is printed per model (1.00 = the same). The ONNX model is torch.onnx.export's
(opset 13) of the same network with the same weights. "import" is from_pytorch on the traced
module (reading it with PyTorch included, tracing not), best of 3.
"""
import argparse
import io
import os
import statistics
import sys
import time

import numpy as np
import torch
import torchvision

import anvil
from anvil import frontend


def build(mod, params):
    with anvil.PassContext(opt_level=3):
        lib = anvil.build(mod, target="llvm -mcpu=native", params=params)
    return lib, anvil.runtime.GraphModule(lib["default"](anvil.cpu(0)))


def median_run_ms(module, x, input_name, repeat):
    module.set_input(input_name, x)
    module.run()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        module.run()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["resnet18", "resnet50", "mobilenet_v2"])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    args = ap.parse_args()
    os.environ["ANVIL_NUM_THREADS"] = str(args.threads)
    torch.set_num_threads(args.threads)

    rows = []
    for name in args.models:
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)(weights=None).eval()
        x = torch.randn(1, 3, 224, 224)
        with torch.no_grad():
            traced = torch.jit.trace(model, x)
            buffer = io.BytesIO()
            torch.onnx.export(model, (x,), buffer, opset_version=13, input_names=["input0"])
        import_s = []
        for _ in range(3):
            t0 = time.perf_counter()
            mod_pt, params = frontend.from_pytorch(traced, [("input0", (1, 3, 224, 224))])
            import_s.append(time.perf_counter() - t0)
        mod_onnx, _ = frontend.from_onnx(buffer.getvalue())
        onnx_input = "input0"  # the name given to torch.onnx.export
        lib_pt, run_pt = build(mod_pt, params)
        lib_onnx, run_onnx = build(mod_onnx, {})
        xs = x.numpy()
        run_pt.set_input("input0", xs)
        run_onnx.set_input(onnx_input, xs)
        run_pt.run()
        run_onnx.run()
        same = np.abs(run_pt.get_output(0).numpy() - run_onnx.get_output(0).numpy()).max()
        pt_ms, onnx_ms = [], []
        for _ in range(args.rounds):
            pt_ms.append(median_run_ms(run_pt, xs, "input0", args.repeat))
            onnx_ms.append(median_run_ms(run_onnx, xs, onnx_input, args.repeat))
        pt, ox = statistics.median(pt_ms), statistics.median(onnx_ms)
        rows.append((name, min(import_s), pt, ox, pt / ox, same))
        print(f"{name}: done", file=sys.stderr, flush=True)

    print(f"threads {args.threads}, {args.rounds} rounds x {args.repeat} runs, medians")
    print("| model | from_pytorch import (s) | TorchScript path (ms) | ONNX path (ms) "
          "| TorchScript / ONNX | max abs difference |")
    print("|---|---|---|---|---|---|")
    for name, imp, pt, ox, ratio, same in rows:
        print(f"| {name} | {imp:.2f} | {pt:.2f} | {ox:.2f} | {ratio:.2f} | {same:.1e} |")


if __name__ == "__main__":
    main()
