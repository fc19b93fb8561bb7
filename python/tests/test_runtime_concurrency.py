"""One loaded model served from many Python threads: GraphModule.run_with is safe to share (each
call runs in a workspace of its own with the GIL released), the VM's run too; a GraphModule's
set_input / run / get_output shared by threads raises anvil.UserError rather than handing one
thread another's outputs; modules loaded from one library share its weights; and run_with checks
what it is given, naming the input."""
import threading

import numpy as np
import pytest

import anvil

CONV = """
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(8, 3, 3, 3), float32],
          %v: Tensor[(10, 512), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
  %1 = nn.relu(%0);
  nn.dense(flatten(%1), %v)
}
"""

TWO_INPUTS = """
def @main(%x: Tensor[(4, 16), float32], %y: Tensor[(4, 8), float32],
          %w: Tensor[(8, 16), float32]) {
  %0 = add(nn.dense(%x, %w), %y);
  (nn.relu(%0), multiply(%0, %0))
}
"""

VM_MODEL = """
def @main(%x: Tensor[(n, 24), float32], %w: Tensor[(16, 24), float32]) {
  nn.relu(nn.dense(%x, %w))
}
"""


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    """The two graph models and the VM model, exported once."""
    out = tmp_path_factory.mktemp("concurrency")
    paths = {}
    for name, text, params, executor in [
            ("conv", CONV, {"w": rand(8, 3, 3, 3, seed=1), "v": rand(10, 512, seed=2)}, "graph"),
            ("two", TWO_INPUTS, {"w": rand(8, 16, seed=3)}, "graph"),
            ("vm", VM_MODEL, {"w": rand(16, 24, seed=4)}, "vm")]:
        path = out / f"{name}.so"
        anvil.build(anvil.parse(text), target="llvm", params=params).export_library(path, executor)
        paths[name] = path
    return paths


def graph_module(path):
    return anvil.runtime.GraphModule(anvil.runtime.load_module(path)["default"](anvil.cpu()))


def run_threads(n, body):
    """Runs body(t) on n threads; re-raises the first exception a thread raised."""
    errors = []

    def main(t):
        try:
            body(t)
        except BaseException as e:  # noqa: B036 - handed to the test thread
            errors.append(e)

    threads = [threading.Thread(target=main, args=(t,)) for t in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]


def test_concurrent_run_with_two_models_matches_one_thread(libs):
    conv, two = graph_module(libs["conv"]), graph_module(libs["two"])
    cases = {
        "conv": [[rand(1, 3, 8, 8, seed=10 + k)] for k in range(4)],
        "two": [[rand(4, 16, seed=20 + k), rand(4, 8, seed=30 + k)] for k in range(4)],
    }
    modules = {"conv": conv, "two": two}
    expected = {name: [[o.numpy().copy() for o in modules[name].run_with(c)] for c in cs]
                for name, cs in cases.items()}
    wrong = []

    def body(t):
        for r in range(100):
            name = "conv" if (r + t) % 2 == 0 else "two"
            k = (r * 7 + t) % 4
            got = modules[name].run_with(cases[name][k])
            if any(not np.array_equal(g.numpy(), e) for g, e in zip(got, expected[name][k])):
                wrong.append((t, r))

    run_threads(8, body)
    assert not wrong
    assert 1 <= conv.executor.num_workspaces <= 8


def test_concurrent_vm_runs_match_one_thread(libs):
    vm = anvil.runtime.VirtualMachine(libs["vm"])
    inputs = [rand(n, 24, seed=n) for n in (1, 3, 8)]
    expected = [vm.run(x).numpy().copy() for x in inputs]
    wrong = []

    def body(t):
        for r in range(60):
            k = (r + t) % len(inputs)
            if not np.array_equal(vm.run(inputs[k]).numpy(), expected[k]):
                wrong.append((t, r))

    run_threads(8, body)
    assert not wrong


def test_concurrent_stateful_graph_module_raises_instead_of_answering_wrongly(libs):
    # The measurement: four threads sharing one GraphModule's set_input / run /
    # get_output. Each round either gives this thread's own result or raises.
    m = graph_module(libs["conv"])
    inputs = [rand(1, 3, 8, 8, seed=40 + k) for k in range(4)]
    expected = [m.run_with([x])[0].numpy().copy() for x in inputs]
    counts = {"right": 0, "wrong": 0, "refused": 0}
    lock = threading.Lock()

    def body(t):
        for r in range(40):
            k = (r + t) % 4
            try:
                m.set_input("x", inputs[k])
                m.run()
                out = m.get_output(0).numpy()
                key = "right" if np.array_equal(out, expected[k]) else "wrong"
            except anvil.UserError as e:
                assert "serve one thread at a time" in str(e), str(e)
                key = "refused"
            with lock:
                counts[key] += 1

    run_threads(4, body)
    assert counts["wrong"] == 0, counts
    assert counts["right"] + counts["refused"] == 160


def test_concurrent_modules_loaded_from_one_library_share_its_weights(libs):
    a, b = graph_module(libs["conv"]), graph_module(libs["conv"])
    names = a.executor.param_names
    assert names and names == b.executor.param_names
    for name in names:
        assert a.executor.get_param(name).data_ptr == b.executor.get_param(name).data_ptr
    v1 = anvil.runtime.VirtualMachine(libs["vm"]).vm
    v2 = anvil.runtime.VirtualMachine(libs["vm"]).vm
    assert v1.param_names
    for name in v1.param_names:
        assert v1.get_param(name).data_ptr == v2.get_param(name).data_ptr


def test_run_with_checks_its_inputs_and_names_them(libs):
    m = graph_module(libs["two"])
    x, y = rand(4, 16), rand(4, 8)
    want = m.run_with(x, y)
    assert [o.shape for o in want] == [(4, 8), (4, 8)]
    # By name, as a dict or keywords; the same results.
    for got in (m.run_with({"x": x, "y": y}), m.run_with(y=y, x=x), m.run_with([x, y])):
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w.numpy())
    with pytest.raises(anvil.UserError, match=r"the model takes 2 input\(s\) \('x', 'y'\), "
                                              r"given 1"):
        m.run_with(x)
    with pytest.raises(anvil.UserError, match=r"run_with: missing input 1 'y'"):
        m.run_with(x=x)
    with pytest.raises(anvil.UserError, match=r"no input named 'z'; its inputs are 'x', 'y'"):
        m.run_with(x=x, z=y)
    with pytest.raises(anvil.UserError, match=r"input 1 'y': expected float32\[4, 8\], got "
                                              r"float32\[8, 4\] \(wrong shape\)"):
        m.run_with(x, y.T.copy())
    with pytest.raises(anvil.UserError, match=r"input 0 'x': expected float32\[4, 16\], got "
                                              r"float64\[4, 16\] \(wrong dtype\)"):
        m.run_with(x.astype("float64"), y)
    with pytest.raises(anvil.UserError, match=r"input 0 'x' is NULL"):
        m.run_with(None, y)
    # Strided and misaligned arrays are accepted: they are copied.
    wide = np.zeros((4, 32), "float32")
    wide[:, ::2] = x
    buffer = np.zeros(4 * 16 + 1, "float32")
    misaligned = buffer[1:].reshape(4, 16)
    misaligned[...] = x
    for x_as_given in (wide[:, ::2], misaligned):
        got = m.run_with(x_as_given, y)
        np.testing.assert_array_equal(got[0].numpy(), want[0].numpy())
    # set_input names the input too.
    with pytest.raises(anvil.UserError, match=r"set_input: input 1 'y': expected float32\[4, 8\]"):
        m.set_input("y", np.zeros((4, 9), "float32"))
