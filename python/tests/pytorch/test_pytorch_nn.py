"""PyTorch layers that look up or rearrange, against eager: embedding, pixel_shuffle,
pixel_unshuffle, channel_shuffle; and their errors."""
import pytest
import torch
import torch.nn.functional as F

import anvil
from pt_check import check_module, import_module


@pytest.mark.parametrize("indices", [
    torch.tensor([3, 0, 9, 3]),
    torch.tensor([[1, 2], [8, 0], [5, 5]]),
    torch.tensor(7),
    torch.tensor([[1, 2], [3, 4]], dtype=torch.int32),
], ids=lambda t: f"{tuple(t.shape)}-{t.dtype}")
def test_embedding(indices):
    torch.manual_seed(0)
    check_module(torch.nn.Embedding(10, 4, padding_idx=0), [indices])


class PixelShuffles(torch.nn.Module):
    def forward(self, x):
        up = F.pixel_shuffle(x, 2)
        return up, F.pixel_unshuffle(up, 2), F.pixel_unshuffle(x, 3), F.pixel_shuffle(x, 3)


@pytest.mark.parametrize("shape", [(2, 36, 6, 9), (36, 3, 6), (2, 2, 36, 3, 3)])
def test_pixel_shuffle_and_unshuffle(shape):
    torch.manual_seed(0)
    check_module(PixelShuffles(), [torch.randn(*shape)])


class ChannelShuffle(torch.nn.Module):
    def forward(self, x):
        return F.channel_shuffle(x, 3), torch.nn.functional.channel_shuffle(x, 2)


def test_channel_shuffle():
    torch.manual_seed(0)
    check_module(ChannelShuffle(), [torch.randn(2, 6, 4, 5)])
    check_module(ChannelShuffle(), [torch.randn(1, 12, 3)])


def test_pixel_shuffle_of_indivisible_channels_is_an_error():
    x = torch.randn(1, 8, 3, 3)
    m = torch.jit.trace(torch.nn.PixelShuffle(2), x)
    with pytest.raises(anvil.UserError, match="the 6 channels are not divisible by "
                       "upscale_factor.2 = 4"):
        import_module(m, [x], shapes=[(1, 6, 3, 3)])


def test_pixel_unshuffle_of_indivisible_size_is_an_error():
    x = torch.randn(1, 2, 4, 4)
    m = torch.jit.trace(torch.nn.PixelUnshuffle(2), x)
    with pytest.raises(anvil.UserError, match="spatial size 4x5 is not divisible by "
                       "downscale_factor 2"):
        import_module(m, [x], shapes=[(1, 2, 4, 5)])


def test_channel_shuffle_of_indivisible_channels_is_an_error():
    x = torch.randn(1, 6, 4)
    m = torch.jit.trace(ChannelShuffle(), x)
    with pytest.raises(anvil.UserError, match="the 8 channels are not divisible by groups=3"):
        import_module(m, [x], shapes=[(1, 8, 4)])


def test_embedding_with_float_indices_is_an_error():
    idx = torch.tensor([1, 2])
    m = torch.jit.trace(torch.nn.Embedding(5, 3), idx)
    with pytest.raises(anvil.UserError, match="embedding indices must be int64 or int32, got "
                       "float32"):
        import_module(m, [idx.float()])


def test_symbolic_batch():
    torch.manual_seed(0)
    check_module(PixelShuffles(), [torch.randn(2, 3, 36, 6, 6)], shapes=[("N", "M", 36, 6, 6)])
    check_module(ChannelShuffle(), [torch.randn(2, 6, 4, 5)], shapes=[("N", 6, "H", "W")])


def test_symbolic_channels_of_pixel_shuffle_is_an_error():
    x = torch.randn(1, 8, 3, 3)
    m = torch.jit.trace(torch.nn.PixelShuffle(2), x)
    with pytest.raises(anvil.UserError, match="dimension 1 of the input must be static, got C"):
        import_module(m, [x], shapes=[(1, "C", 3, 3)])
