#!/usr/bin/python3
"""int8 TFLite models against the same networks quantized through ONNX QDQ, both compiled by
Anvil, interleaved, medians and ratios.

    PYTHONPATH=build/python /usr/bin/python3 bench/models/tflite_compare.py
        [--models mobilenet_v2] [--threads 1 2] [--rounds 5] [--repeat 20]

Each model (model.onnx and test_data_set_0/ under --model-dir, ../shared/models) is quantized
into a QDQ model as bench/models/int8_compare.py does (per-channel int8 weights, uint8
activations), and that network is written as an int8 TFLite model by tflite_from_qdq.py (the
same layers, weights and quantization in TFLite's layout and operators). `anvil compile` builds
both (defaults, no tuning); the TFLite model takes the image in NHWC.

The TFLite model is compiled twice: with the import's default rounding (TFLite's fixed point,
bit-exact with its reference kernels) and with `--tflite-rounding XNNPACK` (products rescaled in
float32, as TFLite's own CPU runtime does).
Accuracy: whether the QDQ and the TFLite model give the same top-1 class and how far apart their
outputs are (the TFLite import's default rounding is TFLite's fixed point, the QDQ import's
ONNX's).
Timing: per thread count, `rounds` rounds alternate the three, each the median of `repeat` runs;
the table shows the medians of the round medians and the ratios to QDQ (the issue's target: at
most 1.2).
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
                     cpu_name, run)
from int8_compare import quantized_model  # noqa: E402
from tflite_from_qdq import convert  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_model_arguments(p)
    p.set_defaults(models=["mobilenet_v2"])
    a = p.parse_args()
    rows, accuracy = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.models:
            qdir = os.path.join(tmp, name)
            os.makedirs(qdir)
            try:
                quantized_model(os.path.join(a.model_dir, name), qdir)
                qdq_model = os.path.join(qdir, "model.onnx")
                tflite_model = os.path.join(qdir, "model.tflite")
                with open(tflite_model, "wb") as f:
                    f.write(convert(onnx.load(qdq_model)))
                tensor = onnx.TensorProto()
                with open(os.path.join(qdir, "inputs", "input_0.pb"), "rb") as f:
                    tensor.ParseFromString(f.read())
                nhwc = os.path.join(qdir, "nhwc.npz")
                np.savez(nhwc, input=numpy_helper.to_array(tensor).transpose(0, 2, 3, 1))
                qdq_so, tflite_so, xnnpack_so = (os.path.join(tmp, name + s)
                                                 for s in ("_qdq.so", "_tfl.so", "_xnn.so"))
                run([a.anvil, "compile", qdq_model, "-o", qdq_so])
                run([a.anvil, "compile", tflite_model, "-o", tflite_so])
                run([a.anvil, "compile", tflite_model, "--tflite-rounding", "XNNPACK", "-o",
                     xnnpack_so])
                inputs = os.path.join(qdir, "inputs")
                got_qdq = anvil_output(a.anvil, qdq_so, inputs, os.path.join(qdir, "q.npz"))
                got_tfl = anvil_output(a.anvil, tflite_so, nhwc, os.path.join(qdir, "t.npz"))
                accuracy.append((name, int(got_qdq.argmax()) == int(got_tfl.argmax()),
                                 float(np.abs(got_qdq - got_tfl).max())))
            except StepFailed as e:
                print(f"{name}: not run: {e}", file=sys.stderr)
                continue
            for t in a.threads:
                qdq_ms, tfl_ms, xnn_ms = [], [], []
                for _ in range(a.rounds):
                    qdq_ms.append(anvil_median(a.anvil, qdq_so, inputs, t, a.repeat))
                    tfl_ms.append(anvil_median(a.anvil, tflite_so, nhwc, t, a.repeat))
                    xnn_ms.append(anvil_median(a.anvil, xnnpack_so, nhwc, t, a.repeat))
                row = (name, t, statistics.median(qdq_ms), statistics.median(tfl_ms),
                       statistics.median(xnn_ms))
                rows.append(row)
                print(row, file=sys.stderr)

    print(f"{datetime.date.today().isoformat()}, {cpu_name()}, {os.cpu_count()} cores")
    print(f"{'model':<14}{'threads':>8}{'QDQ ms':>10}{'TFLite ms':>11}{'TFLite/QDQ':>12}"
          f"{'XNNPACK ms':>12}{'XNNPACK/QDQ':>13}")
    for m, t, q, f, x in rows:
        print(f"{m:<14}{t:>8}{q:>10.3f}{f:>11.3f}{f / q:>12.2f}{x:>12.3f}{x / q:>13.2f}")
    print()
    print(f"{'model':<14}{'same top-1':>11}{'max |difference|':>18}")
    for m, same, diff in accuracy:
        print(f"{m:<14}{str(same):>11}{diff:>18.4f}")


if __name__ == "__main__":
    main()
