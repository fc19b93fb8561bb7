#!/usr/bin/python3
"""Times PyTorch (Debian's python3-torch, TorchScript traced and frozen) on one model:

    /usr/bin/python3 torch_time.py MODEL_DIR THREADS REPEAT [--arch NAME] [--mode MODE]

MODEL_DIR holds model.onnx and test_data_set_0/{input_0.pb, output_0.pb} (the model zoo's
layout). PyTorch cannot read ONNX, so the network is built by torchvision (python3-torchvision;
--arch names the torchvision.models constructor, by default MODEL_DIR's name) and given the ONNX
model's weights, matched by name: the model must have been exported from that torchvision
network with its parameter names kept (as ../shared/models/resnet18 and mobilenet_v2 were).
Every launch checks the output against output_0.pb (rtol 1e-3, atol 1e-4) before timing, so the
time is of the same network with the same weights.

--mode optimized (the default) is torch.jit.optimize_for_inference of the traced module: frozen,
then convolutions rewritten to oneDNN (MKL-DNN) with pre-packed weights, PyTorch's own recipe for
CPU inference. --mode frozen stops after torch.jit.freeze; with Debian's build (no MKL BLAS) its
convolutions run PyTorch's native kernels, about 10x slower on MobileNetV2's depthwise layers
(97 ms against 8.6 ms), so it is not a fair peer.

Prints one line: `torch median_ms=M min_ms=M runs=N max_abs_err=E version=V` (after 5 warm-up
runs: TorchScript's profiling executor optimizes the graph during the first calls). Exits 3 with
`unsupported: ...` when the network cannot be built with the ONNX model's weights, 1 when its
output differs.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np
import onnx
import torch
import torchvision
from onnx import numpy_helper


def unsupported(why):
    print(f"unsupported: {why}")
    sys.exit(3)


def load_tensor(path):
    return numpy_helper.to_array(onnx.load_tensor(path))


def build(model_dir, arch):
    make = getattr(torchvision.models, arch, None)
    if make is None or not callable(make):
        unsupported(f"torchvision.models has no '{arch}'")
    weights = {
        t.name: torch.from_numpy(numpy_helper.to_array(t).copy())
        for t in onnx.load(os.path.join(model_dir, "model.onnx")).graph.initializer
    }
    model = make()
    state = model.state_dict()
    # BatchNorm's step counter is training state; ONNX has no use for it.
    missing = [k for k in state if k not in weights and not k.endswith("num_batches_tracked")]
    if missing:
        unsupported(f"the ONNX model lacks {len(missing)} of torchvision {arch}'s parameters "
                    f"(e.g. '{missing[0]}'): it was not exported with their names")
    bad = [k for k in state if k in weights and tuple(weights[k].shape) != tuple(state[k].shape)]
    if bad:
        unsupported(f"'{bad[0]}' has shape {tuple(weights[bad[0]].shape)} in the ONNX model, "
                    f"{tuple(state[bad[0]].shape)} in torchvision {arch}")
    model.load_state_dict({k: weights.get(k, v) for k, v in state.items()})
    return model.eval()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("model_dir")
    p.add_argument("threads", type=int)
    p.add_argument("repeat", type=int)
    p.add_argument("--arch", help="torchvision.models constructor (default: the folder's name)")
    p.add_argument("--mode", choices=["optimized", "frozen"], default="optimized")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.set_num_interop_threads(1)
    arch = a.arch or os.path.basename(os.path.normpath(a.model_dir))
    model = build(a.model_dir, arch)
    data = os.path.join(a.model_dir, "test_data_set_0")
    x = torch.from_numpy(load_tensor(os.path.join(data, "input_0.pb")).copy())
    with torch.inference_mode():
        script = torch.jit.freeze(torch.jit.trace(model, x))
        if a.mode == "optimized":
            script = torch.jit.optimize_for_inference(script)
        for _ in range(5):
            y = script(x)
        err = 0.0
        ref_path = os.path.join(data, "output_0.pb")
        if os.path.exists(ref_path):
            ref = load_tensor(ref_path)
            got = y.numpy()
            err = float(np.abs(got - ref).max())
            if got.shape != ref.shape or not np.allclose(got, ref, rtol=1e-3, atol=1e-4):
                print(f"mismatch: PyTorch's output differs from {ref_path} "
                      f"(max abs error {err:.3g})")
                sys.exit(1)
        times = []
        for _ in range(a.repeat):
            start = time.perf_counter()
            script(x)
            times.append((time.perf_counter() - start) * 1e3)
    print(f"torch median_ms={statistics.median(times):.3f} min_ms={min(times):.3f} "
          f"runs={len(times)} max_abs_err={err:.3g} version={torch.__version__} mode={a.mode}")


if __name__ == "__main__":
    main()
