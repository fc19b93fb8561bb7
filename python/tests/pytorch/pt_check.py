"""Shared check of the PyTorch importer tests: import a module traced and/or scripted, build it,
run it on Anvil's VM and compare every output with PyTorch eager."""
import numpy as np
import torch

import anvil
from anvil import frontend


def _flatten(value):
    if value is None:
        return []
    if isinstance(value, (tuple, list)):
        out = []
        for v in value:
            out.extend(_flatten(v))
        return out
    if isinstance(value, torch.Tensor):
        return [value.detach().numpy()]
    return [np.asarray(value)]


def _dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def import_module(scripted, inputs, names=None, shapes=None):
    """from_pytorch of a TorchScript module with inputs described by example tensors (or by
    `shapes`, a list of shapes with symbolic dimensions)."""
    names = names or [f"input{i}" for i in range(len(inputs))]
    infos = []
    for i, (name, t) in enumerate(zip(names, inputs)):
        shape = shapes[i] if shapes else tuple(t.shape)
        infos.append((name, (shape, _dtype_name(t))))
    return frontend.from_pytorch(scripted, infos)


def run_anvil(mod, params, inputs):
    """Builds `mod` and runs it on the VM; the outputs as a flat list of NumPy arrays."""
    return run_anvil_inputs(mod, params, [t.numpy() for t in inputs])


def run_anvil_inputs(mod, params, arrays):
    """run_anvil with main's inputs given as NumPy arrays, in order."""
    with anvil.PassContext(opt_level=3):
        lib = anvil.build(mod, target="llvm", params=params)
    vm = anvil.runtime.VirtualMachine(lib)
    out = vm["main"](*arrays)
    return [o.numpy() if hasattr(o, "numpy") else np.asarray(o) for o in _flatten_anvil(out)]


def _flatten_anvil(value):
    """The tensors of a VM result, in order; None (an absent optional result) is left out, as
    _flatten leaves nothing for it either."""
    if value is None:
        return []
    if isinstance(value, (tuple, list)):
        out = []
        for v in value:
            out.extend(_flatten_anvil(v))
        return out
    return [value]


def assert_close(actual, expected, what=""):
    assert len(actual) == len(expected), f"{what}: {len(actual)} outputs, expected {len(expected)}"
    for k, (a, e) in enumerate(zip(actual, expected)):
        assert a.shape == e.shape, f"{what} output {k}: shape {a.shape}, expected {e.shape}"
        if e.dtype == np.bool_ or np.issubdtype(e.dtype, np.integer):
            np.testing.assert_array_equal(a, e, err_msg=f"{what} output {k}")
            continue
        a64, e64 = a.astype(np.float64), e.astype(np.float64)
        tol = 1e-3 * (np.abs(e64).max() if e64.size else 0) + 1e-4
        err = np.abs(a64 - e64).max() if e64.size else 0.0
        assert err <= tol, f"{what} output {k}: max abs error {err} > {tol}"


def check_module(module, inputs, modes=("trace", "script"), shapes=None):
    """Imports `module` (traced and/or scripted), runs it on `inputs` and compares with eager."""
    module = module.eval()
    inputs = list(inputs)
    with torch.no_grad():
        expected = _flatten(module(*inputs))
    for mode in modes:
        with torch.no_grad():
            scripted = (torch.jit.trace(module, tuple(inputs)) if mode == "trace"
                        else torch.jit.script(module))
        mod, params = import_module(scripted, inputs, shapes=shapes)
        assert_close(run_anvil(mod, params, inputs), expected, mode)
