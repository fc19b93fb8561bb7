"""Reference outputs from the real TFLite runtime: LiteRT compiled to WebAssembly (npm
@litertjs/core, installed in litert/ by `npm ci`, scripts/install_deps.sh --tests), run under
Node.js by litert/run_litert.mjs.

run(cases) runs each (model bytes, [input arrays]) and returns its outputs as NumPy arrays. The
runtime refuses two things the importer accepts, so the models it gets are adjusted first
(reference_model): a dimension the shape signature leaves unknown (-1) is fixed to the shape's
size, and a rank-1 tensor's per-channel quantization axis reads 0 (person_detect's biases say 3).
"""
import json
import os
import pathlib
import shutil
import subprocess
import tempfile

import numpy as np
import pytest

from tflite_file import reference_model

LITERT_DIR = pathlib.Path(__file__).resolve().parent / "litert"


def available():
    return shutil.which("node") is not None and (
        LITERT_DIR / "node_modules" / "@litertjs" / "core" / "package.json").exists()


def require():
    if not available():
        pytest.skip("the TFLite reference runtime is missing: Node.js and `npm ci` in "
                    "python/tests/tflite/litert (scripts/install_deps.sh --tests)")


def run(cases):
    """cases: [(model bytes, [NumPy inputs])] → [[NumPy outputs]], in order. Raises
    RuntimeError with the runtime's message when it refuses a model."""
    require()
    with tempfile.TemporaryDirectory(prefix="litert-") as tmp:
        tmp = pathlib.Path(tmp)
        runs = []
        for i, (model, inputs) in enumerate(cases):
            path = tmp / f"model{i}.tflite"
            path.write_bytes(reference_model(model))
            specs = []
            for k, x in enumerate(inputs):
                x = np.ascontiguousarray(x)
                f = tmp / f"in{i}_{k}.bin"
                f.write_bytes(x.tobytes())
                specs.append({"file": str(f), "dtype": str(x.dtype), "shape": list(x.shape)})
            runs.append({"model": str(path), "inputs": specs, "outputs": str(tmp / f"out{i}")})
        manifest = tmp / "manifest.json"
        manifest.write_text(json.dumps({"runs": runs}))
        proc = subprocess.run(["node", str(LITERT_DIR / "run_litert.mjs"), str(manifest)],
                              capture_output=True, text=True, timeout=600,
                              env={**os.environ, "NODE_NO_WARNINGS": "1"})
        if proc.returncode != 0 or not proc.stdout.strip():
            raise RuntimeError(f"run_litert.mjs failed ({proc.returncode}): {proc.stderr[-2000:]}")
        results = json.loads(proc.stdout.strip().splitlines()[-1])
        outputs = []
        for i, r in enumerate(results):
            if "error" in r:
                raise RuntimeError(f"the TFLite runtime refused case {i}: {r['error']}")
            arrays = []
            for k, o in enumerate(r["outputs"]):
                raw = (tmp / f"out{i}_{k}.bin").read_bytes()
                arrays.append(np.frombuffer(raw, dtype=o["dtype"]).reshape(o["shape"]).copy())
            outputs.append(arrays)
        return outputs
