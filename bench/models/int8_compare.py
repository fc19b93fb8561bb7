#!/usr/bin/python3
"""int8 models: Anvil's integer code against its own fp32 code and ONNX Runtime's integer
kernels on the same QDQ models, interleaved, medians and ratios.

    PYTHONPATH=build/python /usr/bin/python3 bench/models/int8_compare.py
        [--models resnet18 mobilenet_v2] [--threads 1 2] [--rounds 5] [--repeat 20]

Each model (model.onnx and test_data_set_0/ under --model-dir, ../shared/models) is quantized
with python/tests/qdq_quantizer.py (batch norms folded, per-channel int8 weights, uint8
activations calibrated on the test input and 7 random ones) into a QDQ model. Anvil compiles the
fp32 model and the QDQ model (`anvil compile`, defaults, no tuning: the QDQ regions become QNN
ops, fake_quantization_to_integer), and the QDQ model again with `--target "dnnl, llvm"` (the
int8 convolutions and dense layers as oneDNN composites, dnnl.qnn.*); ONNX Runtime
(onnxruntime-node, ort_time.js) runs the QDQ model with its own integer kernels.

Accuracy, on the test input: the fraction of Anvil's int8 outputs (native, and with oneDNN)
within one output quantization step of ORT's, and whether the top-1 class is the same (ORT's
int8, Anvil's fp32).

Timing: per thread count, `rounds` rounds alternate Anvil fp32, Anvil int8, Anvil int8 with
oneDNN and ORT int8, each the median of `repeat` runs; the table shows the medians of the round
medians and the ratios int8 / fp32 (Anvil's own), Anvil int8 / ORT int8 and Anvil int8 with
oneDNN / ORT int8 (below 1: Anvil is faster).
"""
import argparse
import datetime
import json
import os
import shutil
import statistics
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "python", "tests"))
from compare import (StepFailed, add_model_arguments, anvil_median, anvil_output,  # noqa: E402
                     cpu_name, fmt, ort_median, run)
from qdq_quantizer import quantize_qdq  # noqa: E402


def quantized_model(model_dir, out_dir):
    """Writes out_dir/model.onnx (QDQ) and out_dir/inputs/input_0.pb; returns the output step."""
    model = onnx.load(os.path.join(model_dir, "model.onnx"))
    tensor = onnx.TensorProto()
    with open(os.path.join(model_dir, "test_data_set_0", "input_0.pb"), "rb") as f:
        tensor.ParseFromString(f.read())
    x = numpy_helper.to_array(tensor)
    name = model.graph.input[0].name
    rng = np.random.default_rng(0)
    calibration = [{name: x}] + [{name: rng.standard_normal(x.shape).astype(np.float32)}
                                 for _ in range(7)]
    qdq = quantize_qdq(model, calibration, per_channel=True)
    onnx.save(qdq, os.path.join(out_dir, "model.onnx"))
    os.makedirs(os.path.join(out_dir, "inputs"))
    shutil.copy(os.path.join(model_dir, "test_data_set_0", "input_0.pb"),
                os.path.join(out_dir, "inputs", "input_0.pb"))
    last = [n for n in qdq.graph.node if n.op_type == "QuantizeLinear"][-1]
    inits = {i.name: numpy_helper.to_array(i) for i in qdq.graph.initializer}
    return float(inits[last.input[1]])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_model_arguments(p)
    a = p.parse_args()
    if not os.path.isdir(os.path.join(HERE, "node_modules", "onnxruntime-node")):
        sys.exit("onnxruntime-node is not installed: run `npm ci` in bench/models")
    with open(os.path.join(HERE, "package.json")) as f:
        ort_version = json.load(f)["dependencies"]["onnxruntime-node"]
    rows, accuracy = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.models:
            d = os.path.join(a.model_dir, name)
            qdir = os.path.join(tmp, name)
            os.makedirs(qdir)
            try:
                step = quantized_model(d, qdir)
                fp32_model, int8_model = os.path.join(d, "model.onnx"), os.path.join(qdir,
                                                                                    "model.onnx")
                fp32_inputs = os.path.join(d, "test_data_set_0")
                inputs = os.path.join(qdir, "inputs")
                fp32_so, int8_so = os.path.join(tmp, name + "_fp32.so"), os.path.join(
                    tmp, name + "_int8.so")
                dnnl_so = os.path.join(tmp, name + "_int8_dnnl.so")
                run([a.anvil, "compile", fp32_model, "-o", fp32_so])
                run([a.anvil, "compile", int8_model, "-o", int8_so])
                run([a.anvil, "compile", int8_model, "--target", "dnnl, llvm", "-o", dnnl_so])
                got = anvil_output(a.anvil, int8_so, inputs, os.path.join(qdir, "int8.npz"))
                got_dnnl = anvil_output(a.anvil, dnnl_so, inputs, os.path.join(qdir, "dnnl.npz"))
                fp32 = anvil_output(a.anvil, fp32_so, inputs, os.path.join(qdir, "fp32.npz"))
                ort_bin = os.path.join(qdir, "ort.bin")
                run(["node", os.path.join(HERE, "ort_output.js"), int8_model, inputs, ort_bin])
                ort = np.fromfile(ort_bin, dtype=np.float32)
                within = float(np.mean(np.abs(got - ort) <= step * 1.001))
                within_dnnl = float(np.mean(np.abs(got_dnnl - ort) <= step * 1.001))
                accuracy.append((name, within, within_dnnl, int(got.argmax()) == int(ort.argmax()),
                                 int(got_dnnl.argmax()) == int(ort.argmax()),
                                 int(got.argmax()) == int(fp32.argmax())))
            except StepFailed as e:
                print(f"{name}: not run: {e}", file=sys.stderr)
                continue
            for t in a.threads:
                fp32_ms, int8_ms, dnnl_ms, ort_ms = [], [], [], []
                for _ in range(a.rounds):
                    fp32_ms.append(anvil_median(a.anvil, fp32_so, fp32_inputs, t, a.repeat))
                    int8_ms.append(anvil_median(a.anvil, int8_so, inputs, t, a.repeat))
                    dnnl_ms.append(anvil_median(a.anvil, dnnl_so, inputs, t, a.repeat))
                    ort_ms.append(ort_median(int8_model, inputs, t, a.repeat))
                row = (name, t, statistics.median(fp32_ms), statistics.median(int8_ms),
                       statistics.median(dnnl_ms), statistics.median(ort_ms))
                rows.append(row)
                print(row, file=sys.stderr)

    print(f"{datetime.date.today().isoformat()}, {cpu_name()}, {os.cpu_count()} cores; "
          f"ONNX Runtime {ort_version} (onnxruntime-node)")
    print(f"{'model':<14}{'threads':>8}{'fp32 ms':>10}{'int8 ms':>10}{'+dnnl ms':>10}"
          f"{'ort int8':>10}{'int8/fp32':>11}{'int8/ort':>10}{'dnnl/ort':>10}")
    for m, t, f, i, d, o in rows:
        print(f"{m:<14}{t:>8}{f:>10.3f}{i:>10.3f}{d:>10.3f}{o:>10.3f}{fmt(i / f, '11.2f')}"
              f"{fmt(i / o, '10.2f')}{fmt(d / o, '10.2f')}")
    print()
    print(f"{'model':<14}{'within 1 step of ort':>22}{'(+dnnl)':>9}{'top-1 = ort':>13}"
          f"{'(+dnnl)':>9}{'top-1 = fp32':>14}")
    for m, w, wd, same_ort, same_ort_dnnl, same_fp32 in accuracy:
        print(f"{m:<14}{w * 100:>21.2f}%{wd * 100:>8.2f}%{str(same_ort):>13}"
              f"{str(same_ort_dnnl):>9}{str(same_fp32):>14}")


if __name__ == "__main__":
    main()
