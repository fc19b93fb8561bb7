"""anvil.rpc in TVM's names: a model compiled here, uploaded to an RPC server (a process of its own
on loopback), run there through anvil.runtime.GraphModule with remote tensors, timed there; kernels
called on remote tensors; and the errors of a wrong key, a local array given to a remote kernel, a
missing function."""
import time

import numpy as np
import pytest

import anvil
from anvil import te

KEY = "python-rpc-test-key-5f7e9a1c"


@pytest.fixture(scope="module")
def server():
    s = anvil.rpc.Server(host="127.0.0.1", port=0, auth_key=KEY)
    yield s
    s.terminate()


@pytest.fixture(scope="module")
def model_library(tmp_path_factory):
    mod = anvil.parse("""
def @main(%data: Tensor[(2, 8), float32]) {
  nn.relu(add(%data, %data))
}
""")
    lib = anvil.build(mod, target="llvm")
    path = tmp_path_factory.mktemp("rpc") / "net.so"
    lib.export_library(path)
    return path


def test_remote_graph_module_matches_local(server, model_library):
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(2, 8)
    local = anvil.runtime.GraphModule(anvil.runtime.load_module(model_library)["default"](anvil.cpu(0)))
    local.set_input("data", x)
    local.run()
    expected = local.get_output(0).numpy()

    remote = anvil.rpc.connect("127.0.0.1", server.port, auth_key=KEY)
    remote.upload(model_library)
    rlib = remote.load_module("net.so")
    dev = remote.cpu(0)
    m = anvil.runtime.GraphModule(rlib["default"](dev))
    m.set_input("data", anvil.nd.array(x, device=dev))
    m.run()
    out = m.get_output(0)
    assert isinstance(out, anvil.rpc.RemoteNDArray)
    np.testing.assert_array_equal(out.numpy(), expected)
    # NumPy inputs go over too, and run_with is one round trip.
    m.set_input("data", -x)
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), np.maximum(-2 * x, 0))
    np.testing.assert_array_equal(m.run_with(x)[0].numpy(), expected)

    timer = m.module.time_evaluator("run", dev, number=5, repeat=3)
    result = timer()
    assert len(result.results) == 3 and result.mean > 0
    assert m.benchmark(dev, repeat=2).mean > 0
    assert remote.info()["pid"] > 0


def test_remote_kernel_on_remote_tensors(server, tmp_path):
    n = 64
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0 + 1.0, name="B")
    s = te.create_schedule(B.op)
    f = anvil.build(s, [A, B], target="llvm", name="scale")
    f.export_library(tmp_path / "scale.so")

    remote = anvil.rpc.connect("127.0.0.1", server.port, auth_key=KEY)
    remote.upload(tmp_path / "scale.so")
    rlib = remote.load_module("scale.so")
    dev = remote.cpu(0)
    a = anvil.nd.array(np.arange(n, dtype=np.float32), device=dev)
    b = anvil.nd.empty((n,), "float32", device=dev)
    rlib["scale"](a, b)
    np.testing.assert_array_equal(b.numpy(), np.arange(n, dtype=np.float32) * 2 + 1)
    assert len(rlib.time_evaluator("scale", dev, number=10, repeat=2)(a, b).results) == 2
    b.copyfrom(np.zeros(n, dtype=np.float32))
    assert not b.numpy().any()

    with pytest.raises(anvil.UserError, match="argument 0 of a remote function is a ndarray"):
        rlib["scale"](np.zeros(n, dtype=np.float32), b)
    with pytest.raises(anvil.UserError, match="the remote module has no function 'nope'"):
        rlib["nope"]
    with pytest.raises(anvil.UserError, match=r"remote 127\.0\.0\.1:\d+: .*"):
        rlib["scale"](anvil.nd.empty((n + 1,), "float32", device=dev), b)


def test_wrong_or_missing_key_is_refused(server, monkeypatch):
    with pytest.raises(anvil.UserError, match="the auth key is not the server's"):
        anvil.rpc.connect("127.0.0.1", server.port, auth_key="some-other-key-entirely")
    monkeypatch.delenv("ANVIL_RPC_KEY", raising=False)
    with pytest.raises(anvil.UserError, match="give auth_key or set ANVIL_RPC_KEY"):
        anvil.rpc.connect("127.0.0.1", server.port)
    monkeypatch.setenv("ANVIL_RPC_KEY", KEY)
    assert anvil.rpc.connect("127.0.0.1", server.port).address.endswith(str(server.port))


def test_tracker_hands_out_devices(model_library):
    with anvil.rpc.Tracker(host="127.0.0.1", port=0, auth_key=KEY) as tracker:
        servers = [anvil.rpc.Server(host="127.0.0.1", port=0, auth_key=KEY,
                                    tracker=f"127.0.0.1:{tracker.port}", key="board",
                                    extra_args=["--max-sessions", "1"]) for _ in range(2)]
        try:
            client = anvil.rpc.connect_tracker("127.0.0.1", tracker.port, auth_key=KEY)
            for _ in range(100):
                if len(client.summary()["devices"]) == 2:
                    break
                time.sleep(0.05)
            assert "board" in client.text_summary()
            a = client.request("board")
            b = client.request("board", priority=2)
            assert a.address != b.address
            a.upload(model_library)
            m = anvil.runtime.GraphModule(a.load_module("net.so")["default"](a.cpu(0)))
            x = np.ones((2, 8), dtype=np.float32)
            np.testing.assert_array_equal(m.run_with(x)[0].numpy(), 2 * x)
            with pytest.raises(anvil.UserError, match="no device of key 'gpu' is registered"):
                client.request("gpu")
            with pytest.raises(anvil.UserError, match="no device of key 'board' became free"):
                client.request("board", session_timeout=0.5)
        finally:
            for s in servers:
                s.terminate()
