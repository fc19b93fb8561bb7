"""PyTorch normalizations against eager: batch norm (1-D, 2-D, 3-D data; affine or not; running
or batch statistics), layer norm over one or several trailing dimensions with and without
weight and bias, group norm, instance norm (with and without running statistics and affine),
the native_* forms, and their errors."""
import pytest
import torch
import torch.nn.functional as F

import anvil
from pt_check import check_module, import_module


def randomized(module):
    """A norm module with non-trivial running statistics and affine parameters."""
    torch.manual_seed(1)
    with torch.no_grad():
        for name, t in module.named_buffers():
            if name == "running_mean":
                t.copy_(torch.randn_like(t))
            elif name == "running_var":
                t.copy_(torch.rand_like(t) + 0.5)
        for p in module.parameters():
            p.copy_(torch.randn_like(p))
    return module


@pytest.mark.parametrize("bn,shape", [
    (torch.nn.BatchNorm1d(4), (3, 4)),
    (torch.nn.BatchNorm1d(4), (3, 4, 7)),
    (torch.nn.BatchNorm1d(4, affine=False), (3, 4, 7)),
    (torch.nn.BatchNorm2d(5, eps=1e-3), (2, 5, 6, 6)),
    (torch.nn.BatchNorm2d(5, affine=False), (2, 5, 6, 6)),
    (torch.nn.BatchNorm3d(3), (2, 3, 4, 5, 6)),
], ids=lambda v: repr(v))
def test_batch_norm(bn, shape):
    torch.manual_seed(0)
    check_module(randomized(bn), [torch.randn(*shape)])


@pytest.mark.parametrize("bn,shape", [
    (torch.nn.BatchNorm1d(4, track_running_stats=False), (3, 4, 7)),
    (torch.nn.BatchNorm2d(5, track_running_stats=False, affine=False), (2, 5, 6, 6)),
    (torch.nn.BatchNorm3d(3, track_running_stats=False), (2, 3, 4, 5, 6)),
], ids=lambda v: repr(v))
def test_batch_norm_with_batch_statistics(bn, shape):
    torch.manual_seed(0)
    check_module(randomized(bn), [torch.randn(*shape) * 3 + 1])


@pytest.mark.parametrize("ln,shape", [
    (torch.nn.LayerNorm(8), (2, 5, 8)),
    (torch.nn.LayerNorm([6, 8]), (2, 3, 6, 8)),
    (torch.nn.LayerNorm([3, 6, 8], eps=1e-3), (2, 3, 6, 8)),
    (torch.nn.LayerNorm(8, elementwise_affine=False), (4, 8)),
    (torch.nn.LayerNorm(8), (8,)),
], ids=lambda v: repr(v))
def test_layer_norm(ln, shape):
    torch.manual_seed(0)
    check_module(randomized(ln), [torch.randn(*shape) * 2 + 0.5])


class FunctionalLayerNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 5))
        self.b = torch.nn.Parameter(torch.randn(4, 5))

    def forward(self, x):
        # Weight without bias, and bias without weight.
        return (F.layer_norm(x, [4, 5], self.w, None), F.layer_norm(x, [5], None, self.b[0]),
                torch.native_layer_norm(x, [4, 5], self.w, self.b, 1e-5))


def test_layer_norm_weight_or_bias_alone_and_native_layer_norm():
    torch.manual_seed(0)
    check_module(FunctionalLayerNorm(), [torch.randn(3, 4, 5)])


class NativeBatchNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.randn(3))
        self.register_buffer("var", torch.rand(3) + 0.5)

    def forward(self, x):
        y, _, _ = torch.native_batch_norm(x, None, None, self.mean, self.var, False, 0.1, 1e-5)
        z, m, s = torch.native_batch_norm(x, None, None, None, None, True, 0.1, 1e-5)
        return y, z, m, s


def test_native_batch_norm():
    torch.manual_seed(0)
    check_module(NativeBatchNorm(), [torch.randn(2, 3, 4, 4)])


@pytest.mark.parametrize("gn,shape", [
    (torch.nn.GroupNorm(2, 6), (2, 6, 5, 5)),
    (torch.nn.GroupNorm(1, 4), (3, 4, 7)),
    (torch.nn.GroupNorm(4, 4, affine=False), (2, 4, 3, 3)),
    (torch.nn.GroupNorm(3, 6, eps=1e-3), (2, 6, 2, 3, 4)),
    (torch.nn.GroupNorm(2, 4), (5, 4)),
], ids=lambda v: repr(v))
def test_group_norm(gn, shape):
    torch.manual_seed(0)
    check_module(randomized(gn), [torch.randn(*shape) * 2 + 1])


@pytest.mark.parametrize("inorm,shape", [
    (torch.nn.InstanceNorm1d(4), (2, 4, 9)),
    (torch.nn.InstanceNorm2d(3, affine=True), (2, 3, 5, 6)),
    (torch.nn.InstanceNorm2d(3, affine=True, track_running_stats=True), (2, 3, 5, 6)),
    (torch.nn.InstanceNorm2d(3, track_running_stats=True), (2, 3, 5, 6)),
    (torch.nn.InstanceNorm3d(2, affine=True), (1, 2, 3, 4, 5)),
], ids=lambda v: repr(v))
def test_instance_norm(inorm, shape):
    torch.manual_seed(0)
    # Scripted, nn.InstanceNorm*d checks the input's size in a loop with aten::__range_length and
    # aten::__derive_index, which the importer does not convert (instance_norm itself is tested
    # scripted in test_functional_group_norm_and_instance_norm).
    check_module(randomized(inorm), [torch.randn(*shape) * 2 + 1], modes=("trace",))


class FunctionalGroupAndInstanceNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(6))
        self.b = torch.nn.Parameter(torch.randn(6))
        self.register_buffer("mean", torch.randn(6))
        self.register_buffer("var", torch.rand(6) + 0.5)

    def forward(self, x):
        return (torch.group_norm(x, 3, self.w, self.b, 1e-5, False),
                torch.group_norm(x, 2, None, self.b, 1e-3, False),
                torch.instance_norm(x, self.w, None, None, None, True, 0.1, 1e-5, False),
                torch.instance_norm(x, None, self.b, self.mean, self.var, False, 0.1, 1e-5,
                                    False))


def test_functional_group_norm_and_instance_norm():
    torch.manual_seed(0)
    check_module(FunctionalGroupAndInstanceNorm(), [torch.randn(2, 6, 4, 5) * 2 + 1])


def test_layer_norm_shape_that_does_not_end_the_input_is_an_error():
    ln = torch.nn.LayerNorm([6, 8]).eval()
    x = torch.randn(2, 6, 8)
    with pytest.raises(anvil.UserError, match=r"normalized_shape \[6, 8\] is not the end of the "
                       r"input's shape"):
        import_module(torch.jit.trace(ln, x), [x], shapes=[(2, 8, 6)])


def test_group_norm_groups_that_do_not_divide_the_channels_is_an_error():
    gn = torch.nn.GroupNorm(2, 4).eval()
    x = torch.randn(2, 4, 3)
    with pytest.raises(anvil.UserError, match="num_groups=2 does not divide the 5 channels"):
        import_module(torch.jit.trace(gn, x), [x], shapes=[(2, 5, 3)])


class Norms(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = randomized(torch.nn.BatchNorm2d(6))
        self.bn_batch = torch.nn.BatchNorm2d(6, track_running_stats=False)
        self.gn = randomized(torch.nn.GroupNorm(3, 6))
        self.ln = randomized(torch.nn.LayerNorm([4, 5]))
        self.inorm = randomized(torch.nn.InstanceNorm2d(6, affine=True))

    def forward(self, x):
        return self.bn(x), self.bn_batch(x), self.gn(x), self.ln(x), self.inorm(x)


def test_symbolic_batch():
    torch.manual_seed(0)
    check_module(Norms(), [torch.randn(3, 6, 4, 5) * 2 + 1], modes=("trace",),
                 shapes=[("N", 6, 4, 5)])
