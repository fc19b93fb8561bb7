"""PyTorch convolutions against eager: conv1d/2d/3d (strides, padding, dilation, groups,
depthwise, 'same'/'valid'), transposed convolutions (output_padding, groups, dilation), unbatched
input, and the errors for what cannot be converted."""
import pytest
import torch
import torch.nn.functional as F

import anvil
from pt_check import check_module, import_module
from pt_graph_edit import describe, import_description, nodes_of_kind, set_operand


def conv_input(conv, batch=2, size=9):
    nd = len(conv.kernel_size)
    return torch.randn(batch, conv.in_channels, *([size] * nd))


@pytest.mark.parametrize("conv", [
    torch.nn.Conv1d(3, 5, 3),
    torch.nn.Conv1d(4, 6, 4, stride=2, padding=3, dilation=2, groups=2, bias=False),
    torch.nn.Conv2d(3, 8, 3, padding=1),
    torch.nn.Conv2d(4, 6, (3, 5), stride=(2, 1), padding=(1, 2), dilation=(2, 1), groups=2),
    torch.nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8),  # depthwise
    torch.nn.Conv2d(4, 8, 3, groups=4, bias=False),  # depthwise, channel multiplier 2
    torch.nn.Conv2d(3, 4, 1),
    torch.nn.Conv3d(2, 4, 3, padding=1),
    torch.nn.Conv3d(4, 4, (2, 3, 1), stride=(1, 2, 1), dilation=(2, 1, 1), groups=2),
], ids=lambda c: repr(c))
def test_conv(conv):
    torch.manual_seed(0)
    check_module(conv, [conv_input(conv)])


@pytest.mark.parametrize("conv", [
    torch.nn.Conv1d(3, 4, 4, padding="same", dilation=2),
    torch.nn.Conv2d(3, 4, (4, 3), padding="same"),  # even kernel: the extra row at the end
    torch.nn.Conv2d(3, 4, 3, padding="same", dilation=3, groups=1),
    torch.nn.Conv2d(4, 4, 3, padding="valid", groups=4),
    torch.nn.Conv3d(2, 3, (2, 3, 4), padding="same"),
], ids=lambda c: repr(c))
def test_conv_string_padding(conv):
    torch.manual_seed(0)
    # Traced: aten::_convolution_mode; scripted: aten::conv*d's .padding overload.
    check_module(conv, [conv_input(conv, size=7)])


@pytest.mark.parametrize("conv", [
    torch.nn.ConvTranspose1d(3, 5, 3, stride=2, output_padding=1),
    torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2),
    torch.nn.ConvTranspose2d(4, 4, (3, 4), stride=(3, 2), padding=(2, 1), dilation=(2, 3),
                             output_padding=(2, 1), bias=False),
    torch.nn.ConvTranspose2d(6, 6, 3, groups=6),  # depthwise
    torch.nn.ConvTranspose3d(2, 4, 3, stride=2, padding=1, output_padding=1),
    torch.nn.ConvTranspose3d(4, 2, (1, 2, 3), stride=(1, 2, 2), groups=2, dilation=(1, 1, 2)),
], ids=lambda c: repr(c))
def test_conv_transpose_traced(conv):
    torch.manual_seed(0)
    check_module(conv, [conv_input(conv, size=5)], modes=("trace",))


class FunctionalConvs(torch.nn.Module):
    """The functional forms with explicit operands: aten::conv*d and aten::conv_transpose*d
    when scripted."""

    def __init__(self):
        super().__init__()
        self.w1 = torch.nn.Parameter(torch.randn(6, 2, 3))
        self.w2 = torch.nn.Parameter(torch.randn(4, 4, 2, 2))
        self.wt = torch.nn.Parameter(torch.randn(4, 3, 3, 3))
        self.wt1 = torch.nn.Parameter(torch.randn(6, 2, 4))
        self.b = torch.nn.Parameter(torch.randn(6))

    def forward(self, x1, x2):
        a = F.conv1d(x1, self.w1, self.b, stride=2, padding=1, groups=2)
        b = F.conv2d(x2, self.w2, None, 1, 0, 2, 1)
        c = F.conv_transpose2d(x2, self.wt, None, stride=2, padding=1, output_padding=1,
                               groups=1, dilation=1)
        d = F.conv_transpose1d(a, self.wt1, None, stride=3, output_padding=2, groups=3)
        return a, b, c, d


def test_functional_conv_and_conv_transpose_traced_and_scripted():
    torch.manual_seed(0)
    check_module(FunctionalConvs(), [torch.randn(1, 4, 10), torch.randn(2, 4, 6, 6)])


class WeightAsInput(torch.nn.Module):
    def forward(self, x, w, b):
        return F.conv2d(x, w, b, padding=1)


def test_weight_and_bias_as_inputs():
    torch.manual_seed(0)
    check_module(WeightAsInput(), [torch.randn(1, 3, 6, 6), torch.randn(5, 3, 3, 3),
                                   torch.randn(5)])


def test_unbatched_input():
    torch.manual_seed(0)
    check_module(torch.nn.Conv2d(3, 4, 3, padding=1), [torch.randn(3, 6, 6)])
    check_module(torch.nn.ConvTranspose1d(3, 4, 3, stride=2), [torch.randn(3, 6)],
                 modes=("trace",))


def test_float64():
    torch.manual_seed(0)
    check_module(torch.nn.Conv2d(3, 4, 3).double(), [torch.randn(1, 3, 6, 6).double()])


def test_input_channels_that_do_not_match_the_weight():
    conv = torch.nn.Conv2d(3, 4, 3).eval()
    x = torch.randn(1, 3, 8, 8)
    with pytest.raises(anvil.UserError, match=r"input has 5 channels, but the weight \[4, 3, 3, 3\]"
                       r" with groups=1 expects 3"):
        import_module(torch.jit.trace(conv, x), [x], shapes=[(1, 5, 8, 8)])


def test_input_rank_that_does_not_match_the_weight():
    conv = torch.nn.Conv2d(3, 4, 3).eval()
    x = torch.randn(1, 3, 8, 8)
    with pytest.raises(anvil.UserError, match="expects 3-D .unbatched. or 4-D .batched. input"):
        import_module(torch.jit.trace(conv, x), [x], shapes=[(1, 1, 3, 8, 8)])


def _traced_description(module, x):
    return describe(torch.jit.trace(module.eval(), x))


def test_strided_same_padding_is_an_error():
    # PyTorch refuses it before tracing; a description can still say it.
    x = torch.randn(1, 3, 8, 8)
    d, tensors = _traced_description(torch.nn.Conv2d(3, 4, 3, padding="same"), x)
    node = nodes_of_kind(d, "aten::_convolution_mode")[0]
    set_operand(d, node, 3, {"list": [{"int": 2}, {"int": 2}]},
                {"kind": "list", "elem": {"kind": "int"}})
    with pytest.raises(anvil.UserError, match="padding='same' is not supported for strided"):
        import_description(d, tensors, [x])
    set_operand(d, node, 4, {"str": "full"}, {"kind": "str"})
    with pytest.raises(anvil.UserError, match="padding='full' is not a padding mode"):
        import_description(d, tensors, [x])


def test_output_padding_too_large_is_an_error():
    x = torch.randn(1, 3, 5, 5)
    d, tensors = _traced_description(torch.nn.ConvTranspose2d(3, 4, 3, stride=2), x)
    node = nodes_of_kind(d, "aten::_convolution")[0]
    set_operand(d, node, 7, {"list": [{"int": 2}, {"int": 0}]},
                {"kind": "list", "elem": {"kind": "int"}})
    with pytest.raises(anvil.UserError, match=r"output_padding \[2, 0\] must be smaller than "
                       r"either stride \[2, 2\] or dilation \[1, 1\]"):
        import_description(d, tensors, [x])


def test_groups_that_do_not_divide_is_an_error():
    x = torch.randn(1, 4, 5, 5)
    d, tensors = _traced_description(torch.nn.Conv2d(4, 6, 3, groups=2), x)
    node = nodes_of_kind(d, "aten::_convolution")[0]
    set_operand(d, node, 8, {"int": 4}, {"kind": "int"})
    with pytest.raises(anvil.UserError, match="first dimension 6 is not divisible by groups=4"):
        import_description(d, tensors, [x])
    set_operand(d, node, 3, {"list": [{"int": 1}, {"int": 1}, {"int": 1}]},
                {"kind": "list", "elem": {"kind": "int"}})
    with pytest.raises(anvil.UserError, match="stride has 3 values for 2 spatial dimensions"):
        import_description(d, tensors, [x])


class ConvStack(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 6, 3, stride=2, padding=1, groups=3)
        self.same = torch.nn.Conv1d(6, 4, 4, padding="same")
        self.up = torch.nn.ConvTranspose2d(6, 2, 3, stride=2, output_padding=1)

    def forward(self, x):
        y = self.conv(x)
        return self.up(y), self.same(y.flatten(2))


def test_symbolic_batch():
    torch.manual_seed(0)
    check_module(ConvStack(), [torch.randn(2, 3, 8, 8)], modes=("trace",),
                 shapes=[("N", 3, 8, 8)])
