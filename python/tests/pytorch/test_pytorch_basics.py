"""The PyTorch importer on small modules: the reader, parameters, inputs, errors."""
from typing import List, Optional, Tuple

import numpy as np
import pytest
import torch

import anvil
from anvil import frontend
from pt_check import check_module, import_module


class ConvBnRelu(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8 * 4 * 4, 5)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        y = torch.nn.functional.max_pool2d(y, 2)
        return self.fc(torch.flatten(y, 1))


def test_conv_bn_relu_traced_and_scripted():
    torch.manual_seed(0)
    check_module(ConvBnRelu(), [torch.randn(2, 3, 8, 8)])


def test_params_are_named_by_pytorch_names():
    m = ConvBnRelu().eval()
    x = torch.randn(1, 3, 8, 8)
    mod, params = import_module(torch.jit.trace(m, x), [x])
    assert "conv.weight" in params and "fc.bias" in params and "bn.running_mean" in params
    assert params["conv.weight"].numpy().shape == (8, 3, 3, 3)


def test_unsupported_ops_are_all_listed_with_source_lines():
    class M(torch.nn.Module):
        def forward(self, x):
            return torch.special.bessel_j0(x) + torch.special.i0e(x)

    x = torch.randn(3)
    with pytest.raises(anvil.UserError) as e:
        import_module(torch.jit.trace(M(), x), [x])
    message = str(e.value)
    assert "aten::special_bessel_j0" in message and "aten::special_i0e" in message
    assert "test_pytorch_basics.py" in message


def test_input_infos_are_checked():
    m = torch.jit.trace(ConvBnRelu().eval(), torch.randn(1, 3, 8, 8))
    with pytest.raises(anvil.UserError, match="input_infos"):
        frontend.from_pytorch(m, "input0")
    with pytest.raises(anvil.UserError, match="takes 1 input"):
        frontend.from_pytorch(m, [("a", (1, 3, 8, 8)), ("b", (1, 3, 8, 8))])


def test_not_a_script_module():
    with pytest.raises(anvil.UserError, match="TorchScript module"):
        frontend.from_pytorch(ConvBnRelu(), [("x", (1, 3, 8, 8))])


class StructuredInputs(torch.nn.Module):
    def forward(self, pair: Tuple[torch.Tensor, torch.Tensor], xs: List[torch.Tensor],
                bias: Optional[torch.Tensor], n: int):
        y = pair[0] * pair[1]
        for x in xs:
            y = y + x
        if bias is not None:
            y = y + bias
        return (y * n, [y, pair[0]])


def test_tuple_list_none_and_number_inputs_and_list_output():
    m = torch.jit.script(StructuredInputs().eval())
    a, b, c, d = (torch.randn(2, 3) for _ in range(4))
    mod, params = frontend.from_pytorch(
        m, [("pair", [(2, 3), (2, 3)]), ("xs", [(2, 3), (2, 3)]), ("bias", None),
            ("n", ((), "int64"))])
    from pt_check import run_anvil_inputs
    out = run_anvil_inputs(mod, params, [a.numpy(), b.numpy(), c.numpy(), d.numpy(),
                                         np.array(3, dtype=np.int64)])
    y = a * b + c + d
    expected = [(y * 3).numpy(), y.numpy(), a.numpy()]
    assert len(out) == 3
    for o, e in zip(out, expected):
        np.testing.assert_allclose(o, e, rtol=1e-5, atol=1e-6)


def test_structured_inputs_are_checked():
    m = torch.jit.script(StructuredInputs().eval())
    with pytest.raises(anvil.UserError, match="given as None"):
        frontend.from_pytorch(m, [("pair", None), ("xs", [(2, 3)]), ("bias", None),
                                  ("n", ((), "int64"))])
    with pytest.raises(anvil.UserError, match="given 3 values"):
        frontend.from_pytorch(m, [("pair", [(2, 3)] * 3), ("xs", [(2, 3)]), ("bias", None),
                                  ("n", ((), "int64"))])


def test_trailing_optional_inputs_default_to_none():
    m = torch.nn.ConvTranspose2d(3, 4, 3, stride=2).eval()
    x = torch.randn(1, 3, 5, 5)
    scripted = torch.jit.script(m)  # forward(input, output_size: Optional[List[int]] = None)
    from pt_check import assert_close, run_anvil
    mod, params = frontend.from_pytorch(scripted, [("input0", (1, 3, 5, 5))])
    with torch.no_grad():
        expected = [m(x).numpy()]
    assert_close(run_anvil(mod, params, [x]), expected)


class ReturnsNone(torch.nn.Module):
    def forward(self, x):
        aux: Optional[torch.Tensor] = None
        return x * 2, aux


def test_none_output_is_returned_as_none():
    m = torch.jit.script(ReturnsNone().eval())
    mod, params = frontend.from_pytorch(m, [("x", (2, 3))])
    with anvil.PassContext(opt_level=3):
        lib = anvil.build(mod, target="llvm", params=params)
    x = np.random.rand(2, 3).astype("float32")
    y, aux = anvil.runtime.VirtualMachine(lib)["main"](x)
    np.testing.assert_allclose(y.numpy(), x * 2)
    assert aux is None
