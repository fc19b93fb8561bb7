"""Helpers of the shape, index and creation tests: a module from a plain function (scriptable,
since TorchScript compiles the function it calls), and a check of a model imported with symbolic
dimensions at several sizes."""
import torch

from pt_check import assert_close, import_module, run_anvil


def module1(fn):
    class M(torch.nn.Module):
        def forward(self, x):
            return fn(x)

    return M()


def module2(fn):
    class M(torch.nn.Module):
        def forward(self, x, y):
            return fn(x, y)

    return M()


def module3(fn):
    class M(torch.nn.Module):
        def forward(self, x, y, z):
            return fn(x, y, z)

    return M()


def _flatten(value):
    if isinstance(value, (tuple, list)):
        out = []
        for v in value:
            out.extend(_flatten(v))
        return out
    return [value.detach().numpy() if isinstance(value, torch.Tensor) else value]


def check_symbolic(module, input_sets, shapes, modes=("trace", "script")):
    """Imports `module` once with the symbolic `shapes` (traced on the first input set) and checks
    it against eager at every input set: the result must not be specialized to one size."""
    module = module.eval()
    for mode in modes:
        with torch.no_grad():
            scripted = (torch.jit.trace(module, tuple(input_sets[0])) if mode == "trace"
                        else torch.jit.script(module))
        mod, params = import_module(scripted, input_sets[0], shapes=shapes)
        for inputs in input_sets:
            with torch.no_grad():
                expected = _flatten(module(*inputs))
            actual = run_anvil(mod, params, inputs)
            assert_close(actual, expected, f"{mode} at {[tuple(t.shape) for t in inputs]}")
