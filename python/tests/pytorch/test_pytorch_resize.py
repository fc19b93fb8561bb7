"""PyTorch upsampling (F.interpolate, nn.Upsample) against eager: nearest and nearest-exact over
1-3 spatial dimensions, linear, bilinear, bicubic and trilinear with align_corners on and off,
by output size or by scale factor, down- and upsampling, and the errors. (Traced, except where
scripting is tested on its own: F.interpolate's scripted code reaches the same aten ops.)"""
import pytest
import torch
import torch.nn.functional as F

import anvil
from pt_check import check_module, import_module
from pt_graph_edit import describe, import_description, nodes_of_kind, set_operand


class Interpolate(torch.nn.Module):
    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.size = size
        self.scale_factor = scale_factor
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, x):
        return F.interpolate(x, size=self.size, scale_factor=self.scale_factor, mode=self.mode,
                             align_corners=self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def __repr__(self):
        return (f"Interpolate(size={self.size}, scale={self.scale_factor}, {self.mode}, "
                f"align_corners={self.align_corners}, recompute={self.recompute_scale_factor})")


def data(nd, size=6, channels=3):
    return torch.randn(2, channels, *([size] * nd))


@pytest.mark.parametrize("m,nd", [
    (Interpolate(scale_factor=2.0), 1),
    (Interpolate(size=11), 1),
    (Interpolate(scale_factor=2.0), 2),
    (Interpolate(scale_factor=1.7), 2),
    (Interpolate(scale_factor=(0.5, 3.0)), 2),
    (Interpolate(size=(4, 9)), 2),
    (Interpolate(size=(13, 5)), 2),
    (Interpolate(scale_factor=(2.0, 1.5, 0.7)), 3),
    (Interpolate(size=(3, 8, 7)), 3),
    (Interpolate(scale_factor=1.7, mode="nearest-exact"), 1),
    (Interpolate(scale_factor=1.7, mode="nearest-exact"), 2),
    (Interpolate(size=(4, 9), mode="nearest-exact"), 2),
    (Interpolate(size=(3, 8, 11), mode="nearest-exact"), 3),
], ids=repr)
def test_nearest(m, nd):
    torch.manual_seed(0)
    check_module(m, [data(nd)], modes=("trace",))


@pytest.mark.parametrize("m,nd", [
    (Interpolate(scale_factor=2.0, mode="linear"), 1),
    (Interpolate(size=13, mode="linear", align_corners=True), 1),
    (Interpolate(size=1, mode="linear"), 1),
    (Interpolate(scale_factor=2.0, mode="bilinear"), 2),
    (Interpolate(scale_factor=1.7, mode="bilinear"), 2),
    (Interpolate(scale_factor=0.4, mode="bilinear"), 2),
    (Interpolate(scale_factor=(1.5, 0.6), mode="bilinear", align_corners=True), 2),
    (Interpolate(size=(4, 11), mode="bilinear"), 2),
    (Interpolate(size=(1, 1), mode="bilinear"), 2),
    (Interpolate(size=(9, 1), mode="bilinear", align_corners=True), 2),
    (Interpolate(scale_factor=2.0, mode="bicubic"), 2),
    (Interpolate(scale_factor=1.3, mode="bicubic"), 2),
    (Interpolate(size=(5, 13), mode="bicubic", align_corners=True), 2),
    (Interpolate(size=(4, 3), mode="bicubic"), 2),
    (Interpolate(scale_factor=2.0, mode="trilinear"), 3),
    (Interpolate(scale_factor=(1.5, 0.7, 2.5), mode="trilinear"), 3),
    (Interpolate(size=(3, 8, 5), mode="trilinear", align_corners=True), 3),
], ids=repr)
def test_interpolating(m, nd):
    torch.manual_seed(0)
    check_module(m, [data(nd)], modes=("trace",))


@pytest.mark.parametrize("m", [
    torch.nn.Upsample(scale_factor=2, mode="nearest"),
    torch.nn.Upsample(size=(9, 7), mode="bilinear", align_corners=False),
    torch.nn.UpsamplingBilinear2d(scale_factor=2),  # align_corners=True
    torch.nn.UpsamplingNearest2d(size=(5, 8)),
], ids=repr)
def test_upsample_modules(m):
    torch.manual_seed(0)
    check_module(m, [data(2)], modes=("trace",))


class ScriptedUpsample(torch.nn.Module):
    def forward(self, x):
        return (F.interpolate(x, size=(12, 5), mode="nearest"),
                F.interpolate(x, size=(5, 7), mode="bilinear", align_corners=True),
                F.interpolate(x, size=(9, 9), mode="bicubic", align_corners=False))


def test_scripted_interpolate():
    torch.manual_seed(0)
    check_module(ScriptedUpsample(), [data(2)], modes=("script",))


def test_float64():
    torch.manual_seed(0)
    check_module(Interpolate(scale_factor=1.5, mode="bilinear"), [data(2).double()],
                 modes=("trace",))


def _upsample_node(m, x):
    d, tensors = describe(torch.jit.trace(m.eval(), x))
    node = [n for n in d["graph"]["nodes"] if n["kind"].startswith("aten::upsample")][0]
    return d, tensors, node


def test_negative_scale_factor_is_an_error():
    x = data(2)
    d, tensors, node = _upsample_node(Interpolate(scale_factor=2.0, mode="bilinear"), x)
    set_operand(d, node, 3, {"list": [{"float": -2.0}, {"float": 2.0}]},
                {"kind": "list", "elem": {"kind": "float"}})
    with pytest.raises(anvil.UserError, match="scale factor -2 must be positive"):
        import_description(d, tensors, [x])


def test_output_size_and_scale_factors_together_are_an_error():
    x = data(2)
    d, tensors, node = _upsample_node(Interpolate(scale_factor=2.0), x)
    set_operand(d, node, 1, {"list": [{"int": 3}, {"int": 3}]},
                {"kind": "list", "elem": {"kind": "int"}})
    with pytest.raises(anvil.UserError, match="exactly one of output_size and scale_factors"):
        import_description(d, tensors, [x])


def test_neither_output_size_nor_scale_factors_is_an_error():
    x = data(2)
    d, tensors, node = _upsample_node(Interpolate(scale_factor=2.0), x)
    set_operand(d, node, 2, {"none": True}, {"kind": "none"})
    with pytest.raises(anvil.UserError, match="either output_size or scale_factors must be given"):
        import_description(d, tensors, [x])


def test_output_size_of_the_wrong_length_is_an_error():
    x = data(2)
    d, tensors, node = _upsample_node(Interpolate(size=(4, 4)), x)
    set_operand(d, node, 1, {"list": [{"int": 3}, {"int": 3}, {"int": 3}]},
                {"kind": "list", "elem": {"kind": "int"}})
    with pytest.raises(anvil.UserError, match=r"output_size \[3, 3, 3\] has 3 values for 2"):
        import_description(d, tensors, [x])


@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_huge_output_is_an_error_not_a_hang(mode):
    x = data(2)
    d, tensors, node = _upsample_node(Interpolate(size=(4, 4), mode=mode), x)
    set_operand(d, node, 1, {"list": [{"int": 2**63 - 1}, {"int": 3}]},
                {"kind": "list", "elem": {"kind": "int"}})
    with pytest.raises(anvil.UserError, match="output extents above 16777216 are not supported"):
        import_description(d, tensors, [x])
    d, tensors, node = _upsample_node(Interpolate(scale_factor=2.0, mode=mode), x)
    index = 3 if mode == "bilinear" else 2
    set_operand(d, node, index, {"list": [{"float": 1e300}, {"float": 2.0}]},
                {"kind": "list", "elem": {"kind": "float"}})
    with pytest.raises(anvil.UserError, match="output extents above 16777216 are not supported"):
        import_description(d, tensors, [x])


class AllModes(torch.nn.Module):
    def forward(self, x2, x1, x3):
        return (F.interpolate(x2, scale_factor=1.5, mode="nearest"),
                F.interpolate(x2, size=(5, 9), mode="bilinear", align_corners=True),
                F.interpolate(x2, scale_factor=2.0, mode="bicubic"),
                F.interpolate(x1, size=9, mode="linear"),
                F.interpolate(x3, scale_factor=(2.0, 1.5, 0.5), mode="trilinear"))


def test_symbolic_batch():
    torch.manual_seed(0)
    check_module(AllModes(), [torch.randn(2, 3, 4, 6), torch.randn(2, 3, 7),
                              torch.randn(2, 2, 3, 4, 6)],
                 modes=("trace",), shapes=[("N", 3, 4, 6), ("N", 3, 7), ("M", "C", 3, 4, 6)])


def test_nearest_of_integer_data():
    x = torch.randint(0, 255, (1, 3, 5, 7), dtype=torch.uint8)
    check_module(Interpolate(scale_factor=(1.5, 2.5)), [x], modes=("trace",))
    check_module(Interpolate(size=(4, 9), mode="nearest-exact"), [x], modes=("trace",))


def test_bilinear_of_integer_data_is_an_error():
    x = torch.randn(1, 3, 4, 4)
    m = torch.jit.trace(Interpolate(scale_factor=2.0, mode="bilinear").eval(), x)
    with pytest.raises(anvil.UserError, match="interpolating upsampling needs a floating-point "
                       "input, got int64"):
        import_module(m, [x.long()])
