"""RPC overhead of a remote run on loopback: MobileNetV2 run on an RPC server on this machine, timed
from the client (one run_with round trip: the 602 KB input there, the 4 KB output back) against
the same run timed on the server (time_evaluator, no network), interleaved, medians.

    PYTHONPATH=build/python /usr/bin/python3 bench/rpc/overhead.py [model.onnx] [rounds]

overhead = client round trip - server run; "run only" is a round trip without data (m.run()).
"""
import os
import pathlib
import secrets
import statistics
import sys
import tempfile
import time

import numpy as np

import anvil

root = pathlib.Path(__file__).resolve().parents[2]
model = sys.argv[1] if len(sys.argv) > 1 else str(root.parent / "shared/models/mobilenet_v2/model.onnx")
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 30

mod, params = anvil.frontend.from_onnx(model)
with anvil.PassContext(opt_level=3):
    lib = anvil.build(mod, target="llvm -mcpu=native", params=params)
tmp = tempfile.mkdtemp(prefix="anvil_rpc_bench_")
path = os.path.join(tmp, "model.so")
lib.export_library(path)

key = secrets.token_hex(32)
server = anvil.rpc.Server(host="127.0.0.1", port=0, auth_key=key)
remote = anvil.rpc.connect("127.0.0.1", server.port, auth_key=key)
remote.upload(path)
dev = remote.cpu(0)
m = anvil.runtime.GraphModule(remote.load_module("model.so")["default"](dev))
name = m.executor.input_name(0)
shape = m.executor._inputs[0]["shape"]
x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
m.run_with(x)  # warm up both sides

device, round_trip, run_only = [], [], []
timer = m.module.time_evaluator("run", dev, number=1, repeat=1)
for _ in range(rounds):
    device.append(timer().results[0] * 1e3)
    start = time.perf_counter()
    m.run_with(x)
    round_trip.append((time.perf_counter() - start) * 1e3)
    start = time.perf_counter()
    m.run()
    run_only.append((time.perf_counter() - start) * 1e3)

med = statistics.median
print(f"model {pathlib.Path(model).name}, {rounds} rounds, input {list(shape)} float32, loopback")
print(f"{'server run (time_evaluator)':34} {med(device):8.3f} ms")
print(f"{'client run_with round trip':34} {med(round_trip):8.3f} ms   "
      f"overhead {med(round_trip) - med(device):6.3f} ms")
print(f"{'client run() round trip, no data':34} {med(run_only):8.3f} ms   "
      f"overhead {med(run_only) - med(device):6.3f} ms")
server.terminate()
