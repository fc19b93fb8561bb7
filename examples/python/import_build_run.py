"""Walk-through: import an ONNX model, print its IR, build it, run it, compare, time it.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/import_build_run.py [model_dir]

model_dir holds model.onnx and test_data_set_0/{input_0,output_0}.pb (default: the bundled
MobileNet-v2).
"""
import os
import pathlib
import sys
import tempfile

import numpy as np
import onnx

import anvil
from anvil import frontend


def main(model_dir):
    model_dir = pathlib.Path(model_dir)
    data = model_dir / "test_data_set_0"

    # 1. Import: the ONNX graph becomes a graph IR module; the weights stay constants in it.
    model = onnx.load(str(model_dir / "model.onnx"))
    input_name = model.graph.input[0].name
    x = frontend.read_tensor_pb(data / "input_0.pb").numpy()
    mod, params = frontend.from_onnx(model, shape={input_name: x.shape})

    # 2. The IR, Relay style, with the type of every value (str() leaves the weights out).
    text = str(mod)
    print("\n".join(text.splitlines()[:8]), "\n  ...")

    # 3. Build: graph passes, fusion, one kernel per fused group, LLVM, one shared library.
    with anvil.PassContext(opt_level=3):
        lib = anvil.build(mod, target="llvm -mcpu=native", params=params)
    path = os.path.join(tempfile.mkdtemp(prefix="anvil_example_"), "model.so")
    lib.export_library(path)

    # 4. Run the library with the graph executor and compare with ONNX's reference output.
    dev = anvil.cpu(0)
    m = anvil.runtime.GraphModule(anvil.runtime.load_module(path)["default"](dev))
    m.set_input(input_name, x)
    m.run()
    out = m.get_output(0).numpy()
    expected = frontend.read_tensor_pb(data / "output_0.pb").numpy()
    err = float(np.abs(out - expected).max())
    print(f"max abs difference from the reference: {err:.3g}")
    assert np.allclose(out, expected, rtol=1e-3, atol=1e-3)

    # 5. Time it.
    print(m.benchmark(dev, repeat=10))
    return err


if __name__ == "__main__":
    default = pathlib.Path(__file__).resolve().parents[2] / "models" / "mobilenet_v2"
    main(sys.argv[1] if len(sys.argv) > 1 else default)
