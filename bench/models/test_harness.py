#!/usr/bin/python3
"""Tests of the model benchmark harness: the ONNX FLOP count, the PyTorch peer's model building
and its refusals, and compare.py end to end on a tiny model. Run by ctest when the benchmarks
are built (bench/CMakeLists.txt), or by hand:

    ANVIL_CLI=build/src/driver/cli/anvil FMA_PEAK=build/bench/fma_peak \\
        /usr/bin/python3 bench/models/test_harness.py

Timings are not checked, only that every number is there and the tables have their form.
"""
import importlib.util
import math
import os
import re
import subprocess
import sys
import tempfile
import unittest

import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "models")
sys.path.insert(0, HERE)
from model_flops import model_flops  # noqa: E402

HAS_TORCH = all(importlib.util.find_spec(m) for m in ("torch", "torchvision"))
HAS_ORT = os.path.isdir(os.path.join(HERE, "node_modules", "onnxruntime-node"))
ANVIL = os.environ.get("ANVIL_CLI", os.path.join(ROOT, "build", "src", "driver", "cli", "anvil"))


def tiny_cnn(path):
    """x[1,3,8,8] -> Conv(4, 3x3, pad 1, bias) -> BatchNorm -> Relu -> MaxPool 2x2 ->
    depthwise Conv(4, 3x3, group 4, pad 1, no bias) -> GlobalAveragePool -> Flatten -> Gemm(10)."""
    f = TensorProto.FLOAT

    def init(name, *dims):
        return helper.make_tensor(name, f, dims, [0.5] * math.prod(dims))

    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "s", "o", "m", "v"], ["bn"]),
        helper.make_node("Relu", ["bn"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p", "w2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         group=4),
        helper.make_node("GlobalAveragePool", ["c2"], ["g"]),
        helper.make_node("Flatten", ["g"], ["fl"]),
        helper.make_node("Gemm", ["fl", "wf", "bf"], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes, "tiny", [helper.make_tensor_value_info("x", f, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", f, [1, 10])],
        [init("w1", 4, 3, 3, 3), init("b1", 4), init("s", 4), init("o", 4), init("m", 4),
         init("v", 4), init("w2", 4, 1, 3, 3), init("wf", 10, 4), init("bf", 10)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


class ModelFlops(unittest.TestCase):
    def test_every_rule_on_a_tiny_cnn(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "tiny.onnx")
            tiny_cnn(path)
            expected = (
                2 * (4 * 8 * 8) * 27 + 4 * 8 * 8  # conv: 2 per MAC, + bias per output
                + 4 * 8 * 8                       # batch norm: 1 per output
                + 4 * 8 * 8                       # relu
                + (4 * 4 * 4) * 4                 # max pool: 4 per output window
                + 2 * (4 * 4 * 4) * 9             # depthwise conv: 9 MACs per output, no bias
                + 4 * 4 * 4                       # global average pool: 1 per input
                + 0                               # flatten moves data
                + 2 * 10 * 4 + 10)                # gemm: 2 per MAC, + bias
            self.assertEqual(model_flops(path), expected)

    @unittest.skipUnless(os.path.exists(os.path.join(SHARED, "resnet18", "model.onnx")),
                         "../shared/models/resnet18 is not present")
    def test_resnet18_is_twice_its_published_macs(self):
        # torchvision lists ResNet-18 at 1.81 GFLOPS, which are multiply-accumulates.
        gflop = model_flops(os.path.join(SHARED, "resnet18", "model.onnx")) / 1e9
        self.assertAlmostEqual(gflop, 2 * 1.814, delta=0.02)


@unittest.skipUnless(HAS_TORCH, "python3-torch / python3-torchvision are not installed")
class TorchPeer(unittest.TestCase):
    def torch_time(self, model_dir, *extra):
        return subprocess.run([sys.executable, os.path.join(HERE, "torch_time.py"), model_dir,
                               "1", "2", *extra], capture_output=True, text=True)

    def test_a_model_torchvision_does_not_have_is_unsupported(self):
        r = self.torch_time(os.path.join(ROOT, "tests", "models", "transformer_encoder_relu"))
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn("unsupported: torchvision.models has no 'transformer_encoder_relu'",
                      r.stdout)

    def test_weights_that_do_not_match_by_name_are_unsupported(self):
        r = self.torch_time(os.path.join(ROOT, "tests", "models", "squeezenet1_1"))
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn("it was not exported with their names", r.stdout)

    @unittest.skipUnless(os.path.exists(os.path.join(SHARED, "mobilenet_v2", "model.onnx")),
                         "../shared/models/mobilenet_v2 is not present")
    def test_mobilenet_v2_matches_the_onnx_test_data(self):
        r = self.torch_time(os.path.join(SHARED, "mobilenet_v2"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        m = re.search(r"torch median_ms=([0-9.]+) min_ms=[0-9.]+ runs=2 max_abs_err=(\S+)",
                      r.stdout)
        self.assertIsNotNone(m, r.stdout)
        self.assertLess(float(m.group(2)), 1e-4)

    def test_a_wrong_network_is_refused(self):
        # MobileNetV2's weights do not fit ResNet-18.
        if not os.path.exists(os.path.join(SHARED, "mobilenet_v2", "model.onnx")):
            self.skipTest("../shared/models/mobilenet_v2 is not present")
        r = self.torch_time(os.path.join(SHARED, "mobilenet_v2"), "--arch", "resnet18")
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)


class FmaPeak(unittest.TestCase):
    @unittest.skipUnless(os.path.exists(os.environ.get("FMA_PEAK", "")), "FMA_PEAK is not set")
    def test_reports_a_peak_per_thread_count(self):
        out = subprocess.run([os.environ["FMA_PEAK"], "2"], capture_output=True, text=True,
                             check=True).stdout
        m = re.fullmatch(r"fma_peak threads=2 isa=(avx512|avx2) gflops=([0-9.]+) "
                         r"per_thread=([0-9.]+)\n", out)
        self.assertIsNotNone(m, out)
        self.assertGreater(float(m.group(2)), 1.0)
        self.assertAlmostEqual(float(m.group(2)) / 2, float(m.group(3)), delta=0.1)


@unittest.skipUnless(HAS_ORT and os.path.exists(ANVIL),
                     "onnxruntime-node (npm ci in bench/models) or the anvil CLI is missing")
class CompareEndToEnd(unittest.TestCase):
    def test_tables_on_a_tiny_model(self):
        args = [sys.executable, os.path.join(HERE, "compare.py"), "--anvil", ANVIL, "--models",
                os.path.join(ROOT, "tests", "models", "transformer_encoder_relu"), "--threads",
                "1", "--rounds", "2", "--repeat", "3"]
        if not HAS_TORCH:
            args.append("--no-torch")
        r = subprocess.run(args, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        lines = r.stdout.splitlines()
        self.assertRegex(lines[0], r"^\d{4}-\d\d-\d\d, .*, \d+ cores; ONNX Runtime ")
        self.assertEqual(lines[1].split(), ["model", "threads", "anvil", "ms", "ort", "ms",
                                            "torch", "ms", "anvil/ort", "anvil/torch"])
        row = lines[2].split()
        self.assertEqual(row[:2], ["transformer_encoder_relu", "1"])
        anvil_ms, ort_ms = float(row[2]), float(row[3])
        self.assertEqual(row[4], "-")  # no torchvision network of that name
        self.assertAlmostEqual(float(row[5]), anvil_ms / ort_ms, delta=0.01)
        self.assertEqual(row[6], "-")
        peak = next(i for i, x in enumerate(lines) if x.startswith("fp32 FMA peak"))
        self.assertRegex(lines[peak], r"^fp32 FMA peak, measured: 1 thread [0-9.]+ GFLOP/s")
        eff = lines[peak + 2].split()
        self.assertEqual(eff[:2], ["transformer_encoder_relu", "1"])
        self.assertGreater(float(eff[2]), 0)  # GFLOP of the model
        self.assertTrue(eff[4].endswith("%") and eff[6].endswith("%"), lines[peak + 2])
        if HAS_TORCH:
            self.assertIn("no PyTorch peer", r.stderr)
            self.assertTrue(row[-1] == "*", lines[2])
            self.assertIn("* transformer_encoder_relu: no PyTorch peer", r.stdout)

    def test_a_failing_model_is_a_row_with_a_note(self):
        """A model that does not compile, and one whose output differs from its reference, get
        rows with notes; the run goes on to the others and succeeds."""
        good = os.path.join(ROOT, "tests", "models", "transformer_encoder_relu")
        with tempfile.TemporaryDirectory() as tmp:
            broken = os.path.join(tmp, "broken")
            os.makedirs(os.path.join(broken, "test_data_set_0"))
            with open(os.path.join(broken, "model.onnx"), "wb") as f:
                f.write(b"not a model")
            differs = os.path.join(tmp, "differs")
            os.makedirs(os.path.join(differs, "test_data_set_0"))
            with open(os.path.join(good, "model.onnx"), "rb") as f:
                model = f.read()
            with open(os.path.join(differs, "model.onnx"), "wb") as f:
                f.write(model)
            data = os.path.join(good, "test_data_set_0")
            inp = onnx.load_tensor(os.path.join(data, "input_0.pb"))
            out = onnx.load_tensor(os.path.join(data, "output_0.pb"))
            expected = numpy_helper.to_array(out) + 1.0  # a reference it cannot match
            onnx.save_tensor(inp, os.path.join(differs, "test_data_set_0", "input_0.pb"))
            onnx.save_tensor(numpy_helper.from_array(expected, out.name),
                             os.path.join(differs, "test_data_set_0", "output_0.pb"))
            r = subprocess.run([sys.executable, os.path.join(HERE, "compare.py"), "--anvil", ANVIL,
                                "--models", broken, differs, good, "--threads", "1", "--rounds",
                                "1", "--repeat", "2", "--no-torch"],
                               capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        rows = {x.split()[0]: x.split() for x in r.stdout.splitlines()[2:5]}
        self.assertEqual(rows["broken"][2:4], ["-", "-"])
        self.assertEqual(rows["broken"][-1], "*")
        self.assertGreater(float(rows["differs"][2]), 0)  # still timed
        self.assertEqual(rows["differs"][-1], "*")
        self.assertGreater(float(rows["transformer_encoder_relu"][2]), 0)
        self.assertIn("* broken: not run: anvil compile exited 1", r.stdout)
        self.assertIn("* differs: output differs from the reference", r.stdout)

if __name__ == "__main__":
    unittest.main()
