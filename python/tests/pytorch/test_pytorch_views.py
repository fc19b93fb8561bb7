"""In-place writes through views (src/frontend/pytorch/views.h): the tensor viewed changes."""
import pytest
import torch

import anvil
from pt_check import check_module, import_module


class SwinMask(torch.nn.Module):
    """Swin's shifted-window mask: a zeros tensor filled region by region through slices."""

    def forward(self, x):
        mask = x.new_zeros((8, 8))
        count = 0
        for h in ((0, -4), (-4, -2), (-2, None)):
            for w in ((0, -4), (-4, -2), (-2, None)):
                mask[h[0]:h[1], w[0]:w[1]] = count
                count += 1
        return x + mask


class ChainedViews(torch.nn.Module):
    def forward(self, x):
        y = x.clone()
        y[:, 1::2, 0] = 0.5            # slice with a step, then select: copy_ of a number
        y[0].view(-1)[3:6] += 1.0       # select, reshape, slice: add_
        y.transpose(1, 2)[:, 0, :].mul_(2.0)  # permutation, then select
        return y


class CopyTensor(torch.nn.Module):
    def forward(self, x, v):
        y = torch.zeros(2, 5, 4)
        y[:, 1:4] = v                  # copy_ of a tensor, broadcast
        y[1, :, 2].fill_(7.0)
        return y * x


def test_swin_mask():
    check_module(SwinMask(), [torch.randn(8, 8)], modes=("trace",))


def test_chained_views():
    check_module(ChainedViews(), [torch.randn(2, 4, 3)], modes=("trace", "script"))


def test_copy_of_a_tensor_into_a_slice():
    check_module(CopyTensor(), [torch.randn(2, 5, 4), torch.randn(3, 4)],
                 modes=("trace", "script"))


def test_write_through_a_view_of_a_symbolic_shape_is_refused():
    x = torch.randn(2, 4, 3)
    scripted = torch.jit.script(ChainedViews())
    with pytest.raises(anvil.UserError, match="writes into a view"):
        import_module(scripted, [x], shapes=[(-1, 4, 3)])


class WriteThroughAliases(torch.nn.Module):
    def forward(self, x):
        y = x.clone()
        y.contiguous()[0] = 1.0        # contiguous() of a contiguous tensor is the tensor
        y.to(torch.float32)[1, 0] = 2.0  # so is to() of its own dtype
        z = y.to(torch.float64)         # a conversion is a copy: writes do not reach y
        z[2] = 5.0
        return y, z


def test_aliases_are_views_and_conversions_are_copies():
    check_module(WriteThroughAliases(), [torch.randn(3, 4)], modes=("trace", "script"))


class CopiesAreNotViews(torch.nn.Module):
    def forward(self, x):
        y = x.clone()
        z = y[0:2].clone()            # a copy of a slice: writing it leaves y alone
        z.fill_(1.0)
        v = y[1]                      # a view taken before y changes in place
        y.add_(1.0)
        w = y.to(torch.float32, copy=True)  # an explicit copy
        w[0] = 7.0
        return y, z, v, w


def test_copies_are_not_views_and_views_see_in_place_changes():
    check_module(CopiesAreNotViews(), [torch.randn(3, 4)], modes=("trace", "script"))


class WriteThroughReshapeOfTranspose(torch.nn.Module):
    def forward(self, x):
        y = x.clone()
        y.t().reshape(-1)[0] = 1.0    # reshape of a transposed tensor copies in PyTorch
        return y


def test_write_through_a_reshape_of_a_permutation_is_refused():
    x = torch.randn(3, 4)
    with pytest.raises(anvil.UserError, match="writes into a view"):
        import_module(torch.jit.script(WriteThroughReshapeOfTranspose()), [x])


class InPlaceKeepsDtype(torch.nn.Module):
    def forward(self, h, t):
        h = h.clone()
        h.mul_(t)                     # float16 * float32 in place stays float16
        return h


def test_in_place_keeps_the_operand_dtype():
    check_module(InPlaceKeepsDtype(),
                 [torch.randn(2, 3).half(), torch.randn(2, 3)], modes=("trace",))


def test_dropout_in_training_mode_is_refused():
    m = torch.nn.Dropout(0.5).train()
    x = torch.randn(2, 3)
    with pytest.raises(anvil.UserError, match="training mode"):
        import_module(torch.jit.trace(m, x, check_trace=False), [x])
