"""PyTorch pools against eager: max and average pools over 1-3 spatial dimensions (strides,
padding, dilation, ceil_mode, count_include_pad, divisor_override), max pooling's indices, the
adaptive pools for output sizes that do and do not divide the input, and their errors."""
import pytest
import torch
import torch.nn.functional as F

import anvil
from pt_check import check_module, import_module
from pt_graph_edit import describe, import_description, nodes_of_kind, set_operand


def data(nd, batch=2, channels=3, size=9):
    return torch.randn(batch, channels, *([size] * nd))


@pytest.mark.parametrize("pool,nd", [
    (torch.nn.MaxPool1d(3), 1),
    (torch.nn.MaxPool1d(4, stride=2, padding=2, dilation=2, ceil_mode=True), 1),
    (torch.nn.MaxPool2d(2), 2),
    (torch.nn.MaxPool2d(3, stride=2, padding=1), 2),
    (torch.nn.MaxPool2d((3, 2), stride=(2, 3), padding=(1, 0), dilation=(2, 1), ceil_mode=True), 2),
    (torch.nn.MaxPool3d(2), 3),
    (torch.nn.MaxPool3d((3, 2, 2), stride=2, padding=(1, 0, 1), ceil_mode=True), 3),
], ids=lambda v: repr(v))
def test_max_pool(pool, nd):
    torch.manual_seed(0)
    check_module(pool, [data(nd)])


@pytest.mark.parametrize("pool,nd", [
    (torch.nn.AvgPool1d(3), 1),
    (torch.nn.AvgPool1d(4, stride=3, padding=2, ceil_mode=True, count_include_pad=False), 1),
    (torch.nn.AvgPool2d(2), 2),
    (torch.nn.AvgPool2d(3, stride=2, padding=1), 2),
    (torch.nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False), 2),
    (torch.nn.AvgPool2d((3, 4), stride=(2, 3), padding=(1, 2), ceil_mode=True), 2),
    (torch.nn.AvgPool2d((3, 4), stride=(2, 3), padding=(1, 2), ceil_mode=True,
                        count_include_pad=False), 2),
    (torch.nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, divisor_override=2), 2),
    (torch.nn.AvgPool2d(2, divisor_override=3), 2),
    (torch.nn.AvgPool3d(2), 3),
    (torch.nn.AvgPool3d(3, stride=2, padding=1, ceil_mode=True), 3),
    (torch.nn.AvgPool3d(3, stride=2, padding=1, count_include_pad=False, divisor_override=5), 3),
], ids=lambda v: repr(v))
def test_avg_pool(pool, nd):
    torch.manual_seed(0)
    check_module(pool, [data(nd)])


class MaxPoolWithIndices(torch.nn.Module):
    def __init__(self, pool):
        super().__init__()
        self.pool = pool

    def forward(self, x):
        values, indices = self.pool(x)
        return values, indices


@pytest.mark.parametrize("pool,nd", [
    (torch.nn.MaxPool1d(3, stride=2, padding=1, return_indices=True), 1),
    (torch.nn.MaxPool2d(3, stride=2, padding=1, return_indices=True), 2),
    (torch.nn.MaxPool2d((2, 3), stride=(2, 2), dilation=(1, 2), ceil_mode=True,
                        return_indices=True), 2),
    (torch.nn.MaxPool3d(2, stride=2, padding=1, return_indices=True), 3),
], ids=lambda v: repr(v))
def test_max_pool_indices(pool, nd):
    torch.manual_seed(0)
    check_module(MaxPoolWithIndices(pool), [data(nd)])


def test_max_pool_indices_pick_the_first_of_equal_values():
    x = torch.zeros(1, 2, 6, 6)
    x[:, :, 2:4, 2:4] = 1.0
    check_module(MaxPoolWithIndices(torch.nn.MaxPool2d(3, stride=1, return_indices=True)), [x])


@pytest.mark.parametrize("pool,nd,size", [
    (torch.nn.AdaptiveAvgPool1d(3), 1, 9),
    (torch.nn.AdaptiveAvgPool1d(4), 1, 10),   # windows of 3, 3, 3, 3 overlapping
    (torch.nn.AdaptiveAvgPool2d(1), 2, 7),
    (torch.nn.AdaptiveAvgPool2d((3, 3)), 2, 9),
    (torch.nn.AdaptiveAvgPool2d((7, 7)), 2, 10),
    (torch.nn.AdaptiveAvgPool2d((3, 5)), 2, 9),  # divides one axis only
    (torch.nn.AdaptiveAvgPool2d((12, 4)), 2, 9),  # more outputs than inputs
    (torch.nn.AdaptiveAvgPool3d((2, 3, 4)), 3, 5),
    (torch.nn.AdaptiveAvgPool3d(1), 3, 4),
    (torch.nn.AdaptiveMaxPool1d(4), 1, 10),
    (torch.nn.AdaptiveMaxPool2d((3, 3)), 2, 9),
    (torch.nn.AdaptiveMaxPool2d((4, 5)), 2, 7),
    (torch.nn.AdaptiveMaxPool2d(1), 2, 5),
    (torch.nn.AdaptiveMaxPool3d((2, 3, 2)), 3, 5),
], ids=lambda v: repr(v))
def test_adaptive_pool(pool, nd, size):
    torch.manual_seed(0)
    check_module(pool, [data(nd, size=size)])


@pytest.mark.parametrize("pool,nd,size", [
    (torch.nn.AdaptiveMaxPool1d(4, return_indices=True), 1, 10),
    (torch.nn.AdaptiveMaxPool2d((3, 3), return_indices=True), 2, 9),
    (torch.nn.AdaptiveMaxPool2d((4, 5), return_indices=True), 2, 7),
    (torch.nn.AdaptiveMaxPool3d((2, 3, 2), return_indices=True), 3, 5),
], ids=lambda v: repr(v))
def test_adaptive_max_pool_indices(pool, nd, size):
    torch.manual_seed(0)
    # nn.AdaptiveMaxPool1d(return_indices=True) does not script (its forward says -> Tensor).
    check_module(MaxPoolWithIndices(pool), [data(nd, size=size)],
                 modes=("trace",) if nd == 1 else ("trace", "script"))


def test_adaptive_max_pool_indices_pick_the_first_of_equal_values():
    x = torch.zeros(1, 1, 7, 7)
    x[:, :, 1:5, 1:5] = 2.0
    check_module(MaxPoolWithIndices(torch.nn.AdaptiveMaxPool2d((3, 4), return_indices=True)), [x])


class Unbatched(torch.nn.Module):
    def forward(self, x):
        a = F.max_pool2d(x, 2)
        b = F.avg_pool2d(x, 3, stride=1, padding=1)
        c = F.adaptive_avg_pool2d(x, (3, 2))
        d, i = F.adaptive_max_pool2d(x, (5, 4), return_indices=True)
        return a, b, c, d, i


def test_unbatched_input():
    torch.manual_seed(0)
    check_module(Unbatched(), [torch.randn(3, 8, 6)])


def test_float64_pools():
    torch.manual_seed(0)
    check_module(Unbatched(), [torch.randn(3, 8, 6).double()])


def test_adaptive_pool_to_an_empty_output_is_an_error():
    x = torch.randn(1, 3, 8, 8)
    d, tensors = describe(torch.jit.trace(torch.nn.AdaptiveAvgPool2d((2, 3)).eval(), x))
    node = nodes_of_kind(d, "aten::adaptive_avg_pool2d")[0]
    set_operand(d, node, 1, {"list": [{"int": 0}, {"int": 3}]},
                {"kind": "list", "elem": {"kind": "int"}})
    with pytest.raises(anvil.UserError, match=r"output_size \[0, 3\] of spatial extents \[8, 8\]: "
                       r"every output and input extent must be positive"):
        import_description(d, tensors, [x])


def test_adaptive_pool_to_a_huge_output_is_an_error_not_a_hang():
    x = torch.randn(1, 3, 8, 8)
    d, tensors = describe(torch.jit.trace(torch.nn.AdaptiveAvgPool2d((2, 3)).eval(), x))
    node = nodes_of_kind(d, "aten::adaptive_avg_pool2d")[0]
    set_operand(d, node, 1, {"list": [{"int": 2**63 - 1}, {"int": 3}]},
                {"kind": "list", "elem": {"kind": "int"}})
    with pytest.raises(anvil.UserError, match="needs more than 67108864 window taps per plane"):
        import_description(d, tensors, [x])


def test_padding_larger_than_half_the_kernel_is_an_error():
    x = torch.randn(1, 3, 8, 8)
    d, tensors = describe(torch.jit.trace(torch.nn.MaxPool2d(3, padding=1).eval(), x))
    node = nodes_of_kind(d, "aten::max_pool2d")[0]
    set_operand(d, node, 3, {"list": [{"int": 2}, {"int": 1}]},
                {"kind": "list", "elem": {"kind": "int"}})
    with pytest.raises(anvil.UserError, match=r"padding \[2, 1\] must be at most half of "
                       r"kernel_size \[3, 3\]"):
        import_description(d, tensors, [x])


def test_pool_of_the_wrong_rank_is_an_error():
    x = torch.randn(1, 3, 8, 8)
    with pytest.raises(anvil.UserError, match="expects 3-D .unbatched. or 4-D .batched. input"):
        import_module(torch.jit.trace(torch.nn.MaxPool2d(2).eval(), x), [x], shapes=[(8, 8)])


class AllPools(torch.nn.Module):
    def forward(self, x):
        values, indices = F.max_pool2d(x, 3, 2, 1, return_indices=True)
        adaptive, adaptive_indices = F.adaptive_max_pool2d(x, (3, 5), return_indices=True)
        return (values, indices, F.avg_pool2d(x, 3, 2, 1, divisor_override=4),
                F.adaptive_avg_pool2d(x, (3, 5)), F.adaptive_avg_pool2d(x, 2), adaptive,
                adaptive_indices)


def test_symbolic_batch():
    torch.manual_seed(0)
    check_module(AllPools(), [torch.randn(3, 4, 8, 9)], shapes=[("N", 4, 8, 9)])


def test_symbolic_spatial_size_is_an_error():
    x = torch.randn(1, 3, 8, 8)
    m = torch.jit.trace(torch.nn.AdaptiveAvgPool2d((3, 3)).eval(), x)
    with pytest.raises(anvil.UserError, match="needs static spatial dimensions, but dimension 3 "
                       "of the input is the symbolic size W"):
        import_module(m, [x], shapes=[(1, 3, 8, "W")])


class PoolUnpool(torch.nn.Module):
    def __init__(self, nd, kernel, stride, padding):
        super().__init__()
        pool = [torch.nn.MaxPool1d, torch.nn.MaxPool2d, torch.nn.MaxPool3d][nd - 1]
        unpool = [torch.nn.MaxUnpool1d, torch.nn.MaxUnpool2d, torch.nn.MaxUnpool3d][nd - 1]
        self.pool = pool(kernel, stride, padding, return_indices=True)
        self.unpool = unpool(kernel, stride, padding)

    def forward(self, x):
        y, i = self.pool(x)
        return self.unpool(y, i), self.unpool(y, i, output_size=x.size())


@pytest.mark.parametrize("nd,kernel,stride,padding,size", [
    (1, 3, 2, 1, 7), (2, 2, 2, 0, 8), (2, 3, 2, 1, 7), (3, 2, 2, 0, 6), (3, 3, 2, 1, 5),
])
def test_max_unpool(nd, kernel, stride, padding, size):
    torch.manual_seed(0)
    # nn.MaxUnpool*d's forward takes an optional output_size, which scripting keeps as an input.
    check_module(PoolUnpool(nd, kernel, stride, padding), [data(nd, size=size)],
                 modes=("trace",))


class PoolUnpoolUnbatched(PoolUnpool):
    def forward(self, x):
        y, i = self.pool(x)
        return self.unpool(y, i)


def test_max_unpool_unbatched():
    torch.manual_seed(0)
    check_module(PoolUnpoolUnbatched(2, 2, 2, 0), [torch.randn(3, 6, 6)], modes=("trace",))


def test_max_unpool_of_a_symbolic_batch_is_an_error():
    x = torch.randn(2, 3, 6, 6)
    m = torch.jit.trace(PoolUnpool(2, 2, 2, 0).eval(), x)
    with pytest.raises(anvil.UserError, match="aten::max_unpool2d.*the indices has the symbolic "
                       "shape"):
        import_module(m, [x], shapes=[("N", 3, 6, 6)])
