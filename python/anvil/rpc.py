"""Remote devices over RPC, in TVM's names (tvm.rpc)::

    remote = anvil.rpc.connect("192.168.1.7", 9090, auth_key=key)   # or $ANVIL_RPC_KEY
    remote.upload("model.so")
    lib = remote.load_module("model.so")
    dev = remote.cpu(0)
    m = anvil.runtime.GraphModule(lib["default"](dev))
    m.set_input("input", anvil.nd.array(image, device=dev))
    m.run()
    logits = m.get_output(0).numpy()
    print(m.module.time_evaluator("run", dev, number=10, repeat=3)())

The server is `anvil rpc server` or the standalone anvil-rpc-server (what a board runs);
anvil.rpc.Server starts one from Python. A tracker pools servers under device keys::

    tracker = anvil.rpc.connect_tracker("10.0.0.1", 9190, auth_key=key)
    remote = tracker.request("rk3588")        # waits for a free device of that key
 Every connection is authenticated and encrypted with the
shared auth key (src/runtime/rpc/auth_key.h); errors are anvil.UserError naming the server.
"""
import json
import os
import statistics
import subprocess

import numpy as _np

from . import _anvil


class ProfileResult:
    """What a time_evaluator returns (TVM's): `results`, seconds per call, one per repeat, and
    their `mean`, `median`, `min`, `max` and `std`."""

    def __init__(self, results):
        self.results = tuple(results)
        self.mean = statistics.fmean(self.results)
        self.median = statistics.median(self.results)
        self.min = min(self.results)
        self.max = max(self.results)
        self.std = statistics.pstdev(self.results)

    def __repr__(self):
        return (f"ProfileResult(mean={self.mean:.6g} s, median={self.median:.6g} s, "
                f"min={self.min:.6g} s, max={self.max:.6g} s, results={len(self.results)})")


class RemoteDevice:
    """A device of a remote session (remote.cpu(0)): where anvil.nd.array(x, device=dev) puts a
    tensor and lib["default"](dev) runs a model."""

    def __init__(self, session, device_type="cpu", index=0):
        self.session = session
        self.device_type = device_type
        self.index = index

    def __repr__(self):
        return f"remote[{self.session.address}] {self.device_type}({self.index})"


class RemoteNDArray:
    """A tensor on a remote device: numpy() copies it here, copyfrom() copies into it."""

    def __init__(self, tensor, device):
        self._tensor = tensor
        self.device = device

    @property
    def shape(self):
        """The dimensions, a tuple of ints."""
        return self._tensor.shape

    @property
    def dtype(self):
        """The element type ("float32", ...)."""
        return self._tensor.dtype

    def numpy(self):
        """A local NumPy copy of the tensor."""
        return self._tensor.to_local().numpy()

    asnumpy = numpy

    def copyfrom(self, source):
        """Copies a NumPy array (or local NDArray) of the same shape and dtype into the tensor."""
        self._tensor.copyfrom(_np.asarray(source) if not isinstance(source, _anvil.NDArray)
                              else source)
        return self

    def __repr__(self):
        return f"<anvil.rpc.RemoteNDArray {self.dtype}{list(self.shape)} on {self.device}>"


def _remote_args(args, session):
    out = []
    for i, a in enumerate(args):
        if isinstance(a, RemoteNDArray):
            if a.device.session is not session:
                raise _anvil.UserError(f"argument {i} lives in another RPC session")
            out.append(a._tensor)
        else:
            out.append(a)
    return out


class RemoteFunction:
    """A function of a remote module (a kernel), called on remote tensors."""

    def __init__(self, module, name):
        self.module = module
        self.name = name

    def __call__(self, *args):
        self.module._module.call(self.name, _remote_args(args, self.module.session))


class RemoteGraphExecutor:
    """A model's executor on the remote device (lib["default"](dev)); anvil.runtime.GraphModule
    drives it as it drives a local one. run_with sends the inputs and brings the outputs back in
    one round trip."""

    def __init__(self, module, device):
        self._ex = _anvil.RemoteGraphExecutor.create(module._module)
        self.device = device
        self._inputs = self._ex.inputs
        self._names = [i["name"] for i in self._inputs]

    @property
    def num_inputs(self):
        """The number of model inputs."""
        return len(self._inputs)

    @property
    def num_outputs(self):
        """The number of model outputs."""
        return len(self._ex.output_names)

    def input_name(self, index):
        """The name of input `index`."""
        return self._names[index]

    def input_index(self, name):
        """The index of the input called `name`."""
        if name not in self._names:
            raise _anvil.UserError(f"the model has no input named '{name}'; its inputs are " +
                                   ", ".join(f"'{n}'" for n in self._names))
        return self._names.index(name)

    def _remote(self, value):
        if isinstance(value, RemoteNDArray):
            return value._tensor
        return _anvil.RemoteTensor.from_array(self.device.session._session, _np.asarray(value))

    def set_input(self, key, value):
        """Sets an input (by name or index) to a remote tensor, or to a NumPy array (sent)."""
        if self._ex.is_vm:
            raise _anvil.UserError("this model runs on the VM: give its inputs to run_with")
        self._ex.set_input(key, self._remote(value))

    def run(self):
        """Runs the model on the device on the inputs set."""
        self._ex.run()

    def get_output(self, index):
        """Output `index` as a RemoteNDArray (numpy() copies it here)."""
        return RemoteNDArray(self._ex.get_output(index), self.device)

    def get_input(self, index):
        """Not available remotely (raises anvil.UserError)."""
        raise _anvil.UserError("get_input is not available for a model on a remote device")

    def run_with(self, inputs):
        """Runs on `inputs` (NumPy arrays or NDArrays, in input order) and returns the outputs as
        local NDArrays, in one round trip."""
        return self._ex.run_with([x.numpy() if isinstance(x, RemoteNDArray) else x
                                  for x in inputs])

    def time_evaluator(self, name, dev=None, number=10, repeat=1, min_repeat_ms=0):
        """TVM's module.time_evaluator("run", dev, ...): a function that times run() on the
        device (on the inputs last given) and returns a ProfileResult in seconds."""
        if name != "run":
            raise _anvil.UserError(f"time_evaluator times 'run', not '{name}'")
        return lambda *args: ProfileResult(self._ex.time_evaluator(number, repeat, min_repeat_ms))

    def profile(self, number=1, repeat=1):
        """The per-kernel table of `anvil run --profile`, for number * repeat runs on the device."""
        return self._ex.profile(number, repeat)


class RemoteModule:
    """A library loaded on the remote device (remote.load_module(name))."""

    def __init__(self, session, module):
        self.session = session
        self._module = module

    @property
    def function_names(self):
        """The names of the module's functions."""
        return list(self._module.function_names)

    def __getitem__(self, name):
        if name == "default":
            return lambda dev=None: RemoteGraphExecutor(self, dev or self.session.cpu(0))
        if name not in self._module.function_names:
            raise _anvil.UserError(f"the remote module has no function '{name}'; it has " +
                                   ", ".join(self._module.function_names))
        return RemoteFunction(self, name)

    def get_function(self, name):
        """The function called `name` (same as module[name])."""
        return self[name]

    def time_evaluator(self, name, dev=None, number=10, repeat=1, min_repeat_ms=0):
        """A function that calls kernel `name` on the given remote tensors `number` times per
        measurement, `repeat` measurements, on the device; returns a ProfileResult (seconds)."""
        self[name]  # a missing function fails here, not at the call

        def evaluate(*args):
            return ProfileResult(self._module.time_evaluator(
                name, _remote_args(args, self.session), number, repeat, min_repeat_ms))

        return evaluate


class RPCSession:
    """A session on an RPC server (anvil.rpc.connect): upload libraries, load them, make tensors
    on its devices. The session closes when this object and everything made from it are gone."""

    def __init__(self, session):
        self._session = session

    @property
    def address(self):
        """The server, "HOST:PORT"."""
        return self._session.address

    def upload(self, data, target=None):
        """Uploads a file (a path) or bytes as `target` (default: the file's name)."""
        if isinstance(data, (bytes, bytearray)):
            if not target:
                raise _anvil.UserError("upload: bytes need a target name")
            self._session.upload_bytes(bytes(data), target)
        else:
            path = os.fspath(data)
            self._session.upload(path, target or os.path.basename(path))

    def load_module(self, path):
        """Loads an uploaded library; returns a RemoteModule."""
        return RemoteModule(self, _anvil.RemoteModule.load(self._session, os.fspath(path)))

    def cpu(self, dev_id=0):
        """The remote CPU."""
        return RemoteDevice(self, "cpu", dev_id)

    def device(self, dev_type="cpu", dev_id=0):
        """A remote device by type ("cpu") and index."""
        if dev_type != "cpu":
            raise _anvil.UserError(f"the RPC server offers the CPU only, not '{dev_type}'")
        return RemoteDevice(self, dev_type, dev_id)

    def array(self, source):
        """A remote copy of a NumPy array (what anvil.nd.array(x, device=dev) calls)."""
        return RemoteNDArray(_anvil.RemoteTensor.from_array(self._session, _np.asarray(source)),
                             self.cpu(0))

    def empty(self, shape, dtype="float32"):
        """A new uninitialised tensor on the remote CPU."""
        return RemoteNDArray(
            _anvil.RemoteTensor.empty(self._session, [int(d) for d in shape],
                                      str(_np.dtype(dtype))), self.cpu(0))

    def info(self):
        """The server side: its session process's pid, machine and thread count."""
        return json.loads(self._session.request(json.dumps({"op": "session.info"})))

    def __repr__(self):
        return f"<anvil.rpc.RPCSession {self.address}>"


def connect(host, port, auth_key=None, timeout=10):
    """Connects to an RPC server and opens a session. auth_key: the server's shared key (default:
    $ANVIL_RPC_KEY); timeout: seconds for the connection and handshake."""
    return RPCSession(_anvil.RpcSession.connect(str(host), int(port), auth_key or "",
                                                float(timeout)))


class TrackerSession:
    """A connection to an RPC tracker (anvil.rpc.connect_tracker)."""

    def __init__(self, client):
        self._client = client

    def request(self, key, priority=1, session_timeout=0):
        """Waits for a free device of `key` (higher priority first) and opens a session on it;
        session_timeout > 0 bounds the wait in seconds. anvil.UserError at once when no device of
        that key is registered."""
        return RPCSession(self._client.request(key, int(priority), float(session_timeout)))

    def summary(self):
        """{"devices": [{device_key, address, free, max_sessions}], "queues": {key: waiting}}."""
        return json.loads(self._client.status())

    def text_summary(self):
        """The summary as a table, as `anvil rpc status` prints it."""
        s = self.summary()
        lines = [f"{'device key':20} {'address':24} {'free':>6} {'max':>6}"]
        for d in s["devices"]:
            lines.append(f"{d['device_key']:20} {d['address']:24} {d['free']:6} "
                         f"{d['max_sessions']:6}")
        for key, waiting in sorted(s["queues"].items()):
            lines.append(f"queue '{key}': {waiting} waiting")
        return "\n".join(lines)


def connect_tracker(host, port, auth_key=None, timeout=10):
    """Connects to an RPC tracker. auth_key: the pool's shared key (default: $ANVIL_RPC_KEY)."""
    return TrackerSession(_anvil.TrackerClient(str(host), int(port), auth_key or "",
                                               float(timeout)))


class _Service:
    """A standalone RPC program in a process of its own, on the port its first line names."""

    def __init__(self, program, what, host, port, auth_key, args):
        env = dict(os.environ)
        if auth_key:
            env["ANVIL_RPC_KEY"] = auth_key  # not on the command line, where ps would show it
        self.host = host
        self.proc = subprocess.Popen(
            [program, "--host", host, "--port", str(port), *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            self.proc.wait(timeout=10)
            raise _anvil.UserError(f"the RPC {what} did not start: " +
                                   self.proc.stderr.read().strip())
        self.port = int(line.rsplit(":", 1)[1])

    def terminate(self):
        """Stops the process; returns what it logged."""
        if self.proc.poll() is None:
            self.proc.terminate()
        _, log = self.proc.communicate(timeout=30)
        return log

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.terminate()


class Server(_Service):
    """An RPC server in a process of its own (TVM's rpc.Server): the standalone anvil-rpc-server.

        server = anvil.rpc.Server(host="127.0.0.1", port=0, auth_key=key)   # port 0: any free one
        remote = anvil.rpc.connect("127.0.0.1", server.port, auth_key=key)
        ...
        server.terminate()

    tracker="HOST:PORT" and key="DEVICE_KEY" register it with a tracker; extra_args go to the
    program as they are (e.g. ["--max-sessions", "1"]).
    """

    def __init__(self, host="0.0.0.0", port=9090, auth_key=None, tracker=None, key=None,
                 extra_args=()):
        args = list(extra_args)
        if tracker:
            args += ["--tracker", str(tracker), "--device-key", str(key or "")]
        super().__init__(_anvil.rpc_server_path(), "server", host, port, auth_key, args)


class Tracker(_Service):
    """An RPC tracker in a process of its own (TVM's rpc.tracker.Tracker): anvil-rpc-tracker."""

    def __init__(self, host="0.0.0.0", port=9190, auth_key=None, extra_args=()):
        super().__init__(_anvil.rpc_tracker_path(), "tracker", host, port, auth_key,
                         list(extra_args))
