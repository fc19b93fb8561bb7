#!/usr/bin/python3
"""Anvil against ONNX Runtime and PyTorch on whole models, interleaved, medians and ratios.

    /usr/bin/python3 bench/models/compare.py [--models resnet18 mobilenet_v2 generated]
                                             [--threads 1 2] [--rounds 5] [--repeat 20]
                                             [--no-torch]

Models are names under --model-dir (../shared/models), directories holding model.onnx and
test_data_set_0/, or `generated`: the static-shape models tests/models/generate_models.py exports
(the test suite's torchvision CNNs and transformer encoders; PyTorch shows "-" for them: their
export folded batch norms into convolutions, so torchvision's parameters cannot be matched).

Each model is compiled once with the default settings (`anvil compile`, no tuning). Then, per
thread count, `rounds` rounds alternate the three systems (Anvil, ORT, PyTorch, Anvil, ORT,
PyTorch, ...), each timing `repeat` runs after its warm-up and reporting their median; the tables
show the median of those per-round medians and the ratios Anvil / ORT and Anvil / PyTorch (below
1: Anvil is faster). Interleaving makes every system see the same machine load.

- Anvil: `anvil run --threads T` (its thread pool).
- ORT: onnxruntime-node, pinned in package.json (run `npm ci` in bench/models first),
  intraOpNumThreads = T (ort_time.js).
- PyTorch: Debian's python3-torch and python3-torchvision, TorchScript traced, frozen and
  optimized for inference, torch.set_num_threads(T) (torch_time.py). PyTorch cannot read ONNX:
  the torchvision network of the model's name is given the ONNX weights, and its output is
  checked against the model's test data on every launch. Models that are not torchvision networks
  exported with their parameter names show "-".

Throughput: the model's FLOPs are counted from its ONNX graph (model_flops.py: 2 per
multiply-accumulate, 1 per output element of other arithmetic ops), GFLOP/s = FLOPs / median
time, and "% peak" is that over the machine's fp32 FMA peak at the same thread count, measured in
the same run by fma_peak (bench/fma_peak.cpp: independent AVX-512 FMA chains on every thread;
the best of a measurement before and after the models).
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_MODELS = os.path.join(os.path.dirname(ROOT), "shared", "models")
TORCH_PYTHON = "/usr/bin/python3"  # Debian's python3-torch lives there

sys.path.insert(0, HERE)
from model_flops import model_flops  # noqa: E402


class StepFailed(Exception):
    """One step of one model failed; the model gets a row with this note and the run goes on."""


def last_line(text):
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    return lines[-1] if lines else "(no output)"


def run(cmd, env=None, ok_codes=(0,)):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode not in ok_codes:
        raise StepFailed(f"{os.path.basename(cmd[0])} {cmd[1] if len(cmd) > 1 else ''} exited "
                         f"{r.returncode}: {last_line(r.stderr or r.stdout)}")
    return r.returncode, r.stdout + r.stderr


def number(pattern, text):
    return float(re.search(pattern, text).group(1))


def anvil_median(anvil, so, inputs, threads, repeat):
    _, out = run([anvil, "run", so, "--inputs", inputs, "--print-time", "--repeat", str(repeat),
                  "--threads", str(threads)])
    return number(r"median=([0-9.]+)", out)


def anvil_output(anvil, so, inputs, npz):
    """Output 0 of an `anvil run` (written to `npz`), flat, as float64."""
    run([anvil, "run", so, "--inputs", inputs, "--outputs", npz])
    with np.load(npz) as f:
        return f[f.files[0]].ravel().astype(np.float64)


def ort_median(model, inputs, threads, repeat):
    _, out = run(["node", os.path.join(HERE, "ort_time.js"), model, inputs, str(threads),
                  str(repeat)])
    return number(r"median_ms=([0-9.]+)", out)


def torch_run(model_dir, threads, repeat):
    """(median ms, output line), or (None, reason) when PyTorch cannot build or run the model
    (or its output differs from the reference)."""
    r = subprocess.run([TORCH_PYTHON, os.path.join(HERE, "torch_time.py"), model_dir,
                        str(threads), str(repeat)], capture_output=True, text=True)
    out = r.stdout + r.stderr
    if r.returncode == 3:
        return None, [x for x in out.splitlines() if x.startswith("unsupported:")][-1]
    if r.returncode != 0:
        return None, f"torch_time.py exited {r.returncode}: {last_line(r.stderr or r.stdout)}"
    line = [x for x in out.splitlines() if x.startswith("torch ")][-1]
    return number(r"median_ms=([0-9.]+)", line), line


def generated_models():
    """The models under tests/models whose inputs have static shapes."""
    folder = os.path.join(ROOT, "tests", "models")
    found = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name, "model.onnx")
        if not os.path.exists(path):
            continue
        graph = onnx.load(path, load_external_data=False).graph
        initializers = {t.name for t in graph.initializer}
        dims = [d for i in graph.input if i.name not in initializers
                for d in i.type.tensor_type.shape.dim]
        if all(d.HasField("dim_value") for d in dims):
            found.append(os.path.join(folder, name))
    return found


def peak_binary(anvil, tmp, name="fma_peak"):
    """bench/<name> (fma_peak, dot_peak) from the build (ANVIL_BUILD_BENCH=ON), else compiled
    here."""
    built = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(anvil)))),
                         "bench", name)
    if os.path.exists(built):
        return built
    exe = os.path.join(tmp, name)
    cxx = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if not cxx:
        sys.exit(f"{name} is not built and no C++ compiler was found")
    run([cxx, "-O2", "-std=c++20", "-pthread", os.path.join(ROOT, "bench", name + ".cpp"), "-o",
         exe])
    return exe


def add_model_arguments(p):
    """The options the comparisons of whole models share (byoc, int8, bf16): --models,
    --model-dir, --threads, --rounds, --repeat, --anvil."""
    p.add_argument("--models", nargs="+", default=["resnet18", "mobilenet_v2"])
    p.add_argument("--model-dir", default=DEFAULT_MODELS)
    p.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--anvil", default=os.path.join(ROOT, "build", "src", "driver", "cli", "anvil"))


def measure_peak(exe, threads):
    _, out = run([exe, str(threads)])
    return number(r"gflops=([0-9.]+)", out), re.search(r"isa=(\w+)", out).group(1)


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def fmt(x, spec, missing="-"):
    return missing if x is None else format(x, spec)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", nargs="+", default=["resnet18", "mobilenet_v2", "generated"],
                   help="names under --model-dir, directories holding model.onnx and "
                        "test_data_set_0/, or 'generated' (the static models of tests/models)")
    p.add_argument("--model-dir", default=DEFAULT_MODELS)
    p.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--no-torch", action="store_true", help="leave PyTorch out")
    p.add_argument("--anvil", default=os.path.join(ROOT, "build", "src", "driver", "cli", "anvil"))
    a = p.parse_args()
    if not os.path.isdir(os.path.join(HERE, "node_modules", "onnxruntime-node")):
        sys.exit("onnxruntime-node is not installed: run `npm ci` in bench/models")
    with open(os.path.join(HERE, "package.json")) as f:
        ort_version = json.load(f)["dependencies"]["onnxruntime-node"]

    models = []
    for name in a.models:
        models += generated_models() if name == "generated" else [name]
    rows = []
    notes = {}  # model label -> what went wrong or differs
    with tempfile.TemporaryDirectory() as tmp:
        peak_exe = peak_binary(a.anvil, tmp)
        peaks = {t: measure_peak(peak_exe, t) for t in a.threads}
        torch_version = None
        for name in models:
            d = name if os.path.isdir(name) else os.path.join(a.model_dir, name)
            label = os.path.basename(os.path.normpath(d))
            model, inputs = os.path.join(d, "model.onnx"), os.path.join(d, "test_data_set_0")
            so = os.path.join(tmp, label + ".so")
            model_notes = []
            try:
                run([a.anvil, "compile", model, "-o", so])
                # A model whose output differs from the reference beyond the elementwise
                # tolerance is still timed, with the difference as its note.
                code, out = run([a.anvil, "run", so, "--inputs", inputs, "--compare", inputs],
                                ok_codes=(0, 1))
                if code == 1:
                    worst = [x.strip() for x in out.splitlines() if "MISMATCH" in x or "max" in x]
                    model_notes.append("output differs from the reference (rtol 1e-3, atol "
                                       "1e-4): " + "; ".join(worst[:2]))
            except StepFailed as e:
                notes[label] = f"not run: {e}"
                print(f"{label}: {notes[label]}", file=sys.stderr)
                for t in a.threads:
                    rows.append((label, t, None, None, None, None))
                continue
            flops = model_flops(model)
            use_torch = not a.no_torch
            if use_torch:
                ms, line = torch_run(d, 1, 1)  # builds and checks it once before timing
                if ms is None:
                    model_notes.append(f"no PyTorch peer: {line}")
                    use_torch = False
                else:
                    torch_version = re.search(r"version=(\S+)", line).group(1)
            for t in a.threads:
                anvil_ms, ort_ms, torch_ms = [], [], []
                try:
                    for _ in range(a.rounds):
                        anvil_ms.append(anvil_median(a.anvil, so, inputs, t, a.repeat))
                        ort_ms.append(ort_median(model, inputs, t, a.repeat))
                        if use_torch:
                            torch_ms.append(torch_run(d, t, a.repeat)[0])
                except StepFailed as e:
                    model_notes.append(f"timing at {t} thread(s) stopped: {e}")
                am = statistics.median(anvil_ms) if anvil_ms else None
                om = statistics.median(ort_ms) if ort_ms else None
                timed = [x for x in torch_ms if x is not None]
                tm = statistics.median(timed) if timed else None
                rows.append((label, t, am, om, tm, flops))
                print(f"{label:<26}{t:>8}{fmt(am, '11.3f', '-'.rjust(11))}"
                      f"{fmt(om, '11.3f', '-'.rjust(11))}{fmt(tm, '11.3f', '-'.rjust(11))}",
                      file=sys.stderr)
            if model_notes:
                notes[label] = "; ".join(model_notes)
                print(f"{label}: {notes[label]}", file=sys.stderr)
        # The peak again after the models: the better of the two, in case load or clocks varied.
        for t in a.threads:
            again = measure_peak(peak_exe, t)
            if again[0] > peaks[t][0]:
                peaks[t] = again

    print(f"{datetime.date.today().isoformat()}, {cpu_name()}, {os.cpu_count()} cores; "
          f"ONNX Runtime {ort_version} (onnxruntime-node)"
          + (f", PyTorch {torch_version} (TorchScript, frozen, optimize_for_inference)"
             if torch_version else ""))
    print(f"{'model':<26}{'threads':>8}{'anvil ms':>11}{'ort ms':>11}{'torch ms':>11}"
          f"{'anvil/ort':>11}{'anvil/torch':>13}")
    def ratio(x, y):
        return None if x is None or y is None else x / y

    for m, t, am, om, tm, _ in rows:
        mark = " *" if m in notes else ""
        print(f"{m:<26}{t:>8}{fmt(am, '11.3f', '-'.rjust(11))}{fmt(om, '11.3f', '-'.rjust(11))}"
              f"{fmt(tm, '11.3f', '-'.rjust(11))}{fmt(ratio(am, om), '11.2f', '-'.rjust(11))}"
              f"{fmt(ratio(am, tm), '13.2f', '-'.rjust(13))}{mark}")
    for m, note in notes.items():
        print(f"* {m}: {note}")
    print()
    print("fp32 FMA peak, measured: " + ", ".join(
        f"{t} thread{'s' if t > 1 else ''} {peaks[t][0]:.1f} GFLOP/s ({peaks[t][1]})"
        for t in a.threads))
    print(f"{'model':<26}{'threads':>8}{'GFLOP':>8}{'anvil GF/s':>12}{'%peak':>7}"
          f"{'ort GF/s':>10}{'%peak':>7}{'torch GF/s':>12}{'%peak':>7}")
    for m, t, am, om, tm, flops in rows:
        if flops is None:
            continue
        peak = peaks[t][0]
        cells = []
        for ms in (am, om, tm):
            rate = None if ms is None else flops / (ms * 1e6)
            cells.append((rate, None if rate is None else 100 * rate / peak))
        (ar, ap), (orr, op), (tr, tp) = cells
        print(f"{m:<26}{t:>8}{flops / 1e9:>8.3f}{fmt(ar, '12.1f')}{fmt(ap, '6.0f')}%"
              f"{fmt(orr, '10.1f')}{fmt(op, '6.0f')}%"
              f"{fmt(tr, '12.1f', '-'.rjust(12))}{fmt(tp, '6.0f', '-'.rjust(6))}"
              f"{'%' if tp is not None else ' '}")


if __name__ == "__main__":
    main()
