"""The PyTorch importer's view/reshape family (convert_shape.cpp) and its splitting and joining
ops (convert_join.cpp), traced and scripted, with static and symbolic input shapes, against
PyTorch eager."""
from typing import List

import pytest
import torch

import anvil
from pt_cases import check_symbolic, module1, module2
from pt_check import check_module, import_module


def x234():
    torch.manual_seed(0)
    return torch.randn(2, 3, 4)


# ---- view / reshape / flatten ---------------------------------------------------------------

def view_batch(x):
    return x.view(x.size(0), -1)


def reshape_forms(x):
    return x.reshape(-1, 4), x.view(2, 3, 2, 2), x.reshape(x.shape[0], x.shape[1] * x.shape[2])


def flatten_forms(x):
    return torch.flatten(x, 1), torch.flatten(x), x.flatten(0, 1), x.flatten(-2, -1)


def unflatten(x):
    return x.unflatten(2, (2, -1)), x.unflatten(-1, (2, 2))


def view_as(x, y):
    return x.view_as(y), x.reshape_as(y)


@pytest.mark.parametrize("fn", [view_batch, reshape_forms, flatten_forms, unflatten])
def test_view_family(fn):
    check_module(module1(fn), [x234()])


def test_view_as():
    check_module(module2(view_as), [x234(), torch.randn(6, 4)])


def flatten_all(x):
    return torch.flatten(x)


def numel_sizes(x):
    # torchvision's Swin V2 splits a bias by numel() // 3.
    return x.reshape(x.numel() // 3, 3) * x.numel(), torch.flatten(x)[: x.numel() // 2]


def scaled_by_numel(x):
    return x * x.numel()


def test_numel_of_static_shapes():
    check_module(module1(numel_sizes), [torch.randn(2, 3, 8)])
    check_module(module1(scaled_by_numel), [torch.tensor(3.0)])


def test_flatten_of_a_0d_tensor():
    check_module(module1(flatten_all), [torch.tensor(3.0)])


# ---- permutations ---------------------------------------------------------------------------

def permutations(x):
    return (x.permute(2, 0, 1), x.permute(0, -1, 1), x.transpose(0, 2), x.transpose(-1, 1),
            x.swapaxes(0, 1), x.swapdims(2, 0))


def movedim(x):
    return (x.movedim(0, 2), torch.movedim(x, [0, 1], [2, 0]), torch.moveaxis(x, -1, 0))


def numpy_t(x):
    return x[0].T


@pytest.mark.parametrize("fn", [permutations, movedim, numpy_t])
def test_permutations(fn):
    check_module(module1(fn), [x234()])


# ---- squeeze / unsqueeze / expand / repeat --------------------------------------------------

def squeezes(x):
    y = x[:, :1]
    return y.squeeze(), y.squeeze(1), y.squeeze(-1), x.unsqueeze(0), x.unsqueeze(-1), y.squeeze(0)


def expands(x, y):
    return x[:, :1].expand(-1, 5, -1), x.expand(2, 2, 3, 4), x[:1].expand_as(y)


def repeats(x):
    return x.repeat(1, 2, 1), x.repeat(2, 1, 1, 3), x.repeat(1, 1, 1)


def repeat_interleave(x):
    return x.repeat_interleave(2, dim=1), x.repeat_interleave(3), x.repeat_interleave(2, -1)


@pytest.mark.parametrize("fn", [squeezes, repeats, repeat_interleave])
def test_squeeze_repeat(fn):
    check_module(module1(fn), [x234()])


def test_expand():
    check_module(module2(expands), [x234(), torch.randn(5, 3, 4)])


def test_repeat_interleave_by_a_constant_tensor():
    class M(torch.nn.Module):
        def forward(self, x):
            return x.repeat_interleave(torch.tensor([2, 2, 2]), dim=1)

    check_module(M(), [x234()], modes=("trace",))


# ---- split / join ---------------------------------------------------------------------------

def chunks(x):
    return x.chunk(2, -1), x.chunk(3, 1), torch.chunk(x, 2)


def splits(x):
    return x.split(1, 0), x.split([1, 2], 1), x.split(3, 2), torch.split(x, [3, 1], -1)


def unbinds(x):
    return x.unbind(1), torch.unbind(x, -1)


def tensor_splits(x):
    return x.tensor_split(3, dim=2), x.tensor_split([1, 3], dim=2), x.tensor_split(2)


def joins(x):
    return (torch.cat([x, x * 2], 1), torch.cat([x, x], -1), torch.cat([x]), torch.stack([x, x], 1),
            torch.stack([x, x + 1, x], -1), torch.cat([x, x.to(torch.int32)], 0))


def stacks(x):
    v = x[0, 0]
    return (torch.hstack([x, x]), torch.hstack([v, v]), torch.vstack([x, x]), torch.vstack([v, v]),
            torch.dstack([v, v]), torch.dstack([x[0], x[0]]), torch.column_stack([v, v]),
            torch.row_stack([v, v]))


@pytest.mark.parametrize("fn", [chunks, splits, unbinds, tensor_splits, joins])
def test_split_join(fn):
    check_module(module1(fn), [x234()])


def test_hstack_vstack_dstack_traced():
    check_module(module1(stacks), [x234()], modes=("trace",))


def flips(x):
    return x.flip(0), x.flip([0, 2]), torch.flip(x, [-1])


def rolls(x):
    return x.roll(1, 2), x.roll(-2, 1), x.roll(5), torch.roll(x, [1, 2], [0, 2])


@pytest.mark.parametrize("fn", [flips, rolls])
def test_flip_roll(fn):
    check_module(module1(fn), [x234()])


# ---- symbolic input dimensions --------------------------------------------------------------

def symbolic_views(x):
    y = x.view(x.size(0), -1)
    z = x.reshape(-1, 8)
    return y, z, torch.flatten(x, 1), x.permute(1, 0, 2), x.unsqueeze(1), x.transpose(0, 1)


def symbolic_expand(x):
    n = x.size(0)
    return x[:, :1].expand(n, 6, 8), x.repeat(2, 1, 1), x.unflatten(2, (2, 4))


def symbolic_split_join(x):
    a, b = x.split([1, 2], 1)
    c = torch.cat([x, x], 0)
    d = torch.stack([x, x], 0)
    return a, b, c, d, x.chunk(2, 2), x.unbind(1), x.flip(0), x.roll(1, 0)


def symbolic_repeat_interleave(x):
    return x.repeat_interleave(2, dim=0), x.repeat_interleave(2)


@pytest.mark.parametrize(
    "fn", [symbolic_views, symbolic_expand, symbolic_split_join, symbolic_repeat_interleave,
           numel_sizes])
def test_symbolic_batch(fn):
    sets = [[torch.randn(n, 3, 8)] for n in (2, 5)]
    check_symbolic(module1(fn), sets, shapes=[("n", 3, 8)])


def test_view_keeps_the_symbolic_batch_in_its_type():
    x = torch.randn(2, 3, 8)
    mod, _ = import_module(torch.jit.trace(module1(view_batch), x), [x], shapes=[("n", 3, 8)])
    assert "-> Tensor[(n, 24), float32]" in str(mod)


# ---- errors ---------------------------------------------------------------------------------

def squeeze_symbolic(x):
    return x.squeeze(0)


def chunk_symbolic(x):
    return x.chunk(2, 0)


def view_wrong(x):
    return x.view(5, -1)


def test_squeeze_of_a_symbolic_dimension_is_an_error():
    x = torch.randn(2, 3)
    with pytest.raises(anvil.UserError, match="symbolic"):
        import_module(torch.jit.script(module1(squeeze_symbolic)), [x], shapes=[("n", 3)])


def test_chunk_of_a_symbolic_dimension_is_an_error():
    x = torch.randn(2, 3)
    with pytest.raises(anvil.UserError, match="symbolic size n"):
        import_module(torch.jit.script(module1(chunk_symbolic)), [x], shapes=[("n", 3)])


def test_view_to_a_wrong_size_is_an_error():
    x = torch.randn(2, 3)
    with pytest.raises(anvil.UserError, match="invalid for an input of 6 elements"):
        import_module(torch.jit.script(module1(view_wrong)), [x])


def test_view_dtype_is_an_error():
    class M(torch.nn.Module):
        def forward(self, x):
            return x.view(torch.int32)

    x = torch.randn(2, 3)
    with pytest.raises(anvil.UserError, match=r"view\(dtype\)"):
        import_module(torch.jit.trace(M(), x), [x])


def split_wrong(x):
    return x.split([1, 1], 1)


def test_split_sizes_must_add_up():
    x = torch.randn(2, 3)
    with pytest.raises(anvil.UserError, match="add up to 2"):
        import_module(torch.jit.script(module1(split_wrong)), [x])


class TokenModel(torch.nn.Module):
    """The shape handling of a vision transformer's embedding, over a symbolic batch."""

    def __init__(self):
        super().__init__()
        self.cls = torch.nn.Parameter(torch.randn(1, 1, 8))
        self.pos = torch.nn.Parameter(torch.randn(1, 5, 8))

    def forward(self, x):
        b = x.size(0)
        t = x.flatten(2).transpose(1, 2)
        t = torch.cat([self.cls.expand(b, -1, -1), t], dim=1) + self.pos
        ids = torch.arange(t.size(1)).unsqueeze(0).expand(b, -1)
        return t[:, 0], t.permute(0, 2, 1).contiguous().view(b, 8, -1), ids


def test_token_shapes_over_a_symbolic_batch():
    torch.manual_seed(0)
    sets = [[torch.randn(n, 8, 2, 2)] for n in (1, 3)]
    check_symbolic(TokenModel(), sets, shapes=[("n", 8, 2, 2)])
