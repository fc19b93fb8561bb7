"""The PyTorch importer on attention: nn.MultiheadAttention (the composed path and the fused
aten::_native_multi_head_attention), nn.TransformerEncoderLayer / nn.TransformerEncoder (the
composed path and aten::_transformer_encoder_layer_fwd), and
aten::scaled_dot_product_attention (torch 2.x graphs, built here by hand)."""
import json
import math

import numpy as np
import pytest
import torch

import anvil
from anvil import _anvil, frontend
from pt_check import check_module, import_module, run_anvil, assert_close


def graph_kinds(scripted):
    g = scripted.graph.copy()
    torch._C._jit_pass_inline(g)
    kinds = set()

    def visit(block):
        for n in block.nodes():
            kinds.add(n.kind())
            for b in n.blocks():
                visit(b)

    visit(g)
    return kinds


class SelfAttention(torch.nn.Module):
    def __init__(self, mha, average=True):
        super().__init__()
        self.mha = mha
        self.average = average

    def forward(self, x):
        return self.mha(x, x, x, average_attn_weights=self.average)


class SelfAttentionNoWeights(torch.nn.Module):
    def __init__(self, mha):
        super().__init__()
        self.mha = mha

    def forward(self, x):
        return self.mha(x, x, x, need_weights=False)[0]


class SelfAttentionPadded(torch.nn.Module):
    def __init__(self, mha):
        super().__init__()
        self.mha = mha

    def forward(self, x, key_padding_mask):
        return self.mha(x, x, x, key_padding_mask=key_padding_mask)


class CrossAttention(torch.nn.Module):
    def __init__(self, mha):
        super().__init__()
        self.mha = mha

    def forward(self, q, k, v, attn_mask, key_padding_mask):
        return self.mha(q, k, v, attn_mask=attn_mask, key_padding_mask=key_padding_mask)


class CrossAttentionNoMask(torch.nn.Module):
    def __init__(self, mha):
        super().__init__()
        self.mha = mha

    def forward(self, q, k, v):
        return self.mha(q, k, v)


class CrossAttentionNoWeights(torch.nn.Module):
    def __init__(self, mha):
        super().__init__()
        self.mha = mha

    def forward(self, q, k, v):
        return self.mha(q, k, v, need_weights=False)[0]


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("need_weights", [True, False])
def test_self_attention(batch_first, need_weights):
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first)
    m = SelfAttention(mha) if need_weights else SelfAttentionNoWeights(mha)
    check_module(m, [torch.randn(3, 5, 8)])


def test_self_attention_weights_per_head():
    torch.manual_seed(1)
    m = SelfAttention(torch.nn.MultiheadAttention(8, 4, batch_first=True), False)
    check_module(m, [torch.randn(2, 5, 8)])


def test_fast_path_is_the_fused_op():
    m = SelfAttention(torch.nn.MultiheadAttention(8, 2, batch_first=True)).eval()
    with torch.no_grad():
        traced = torch.jit.trace(m, torch.randn(2, 3, 8))
    assert "aten::_native_multi_head_attention" in graph_kinds(traced)
    assert "aten::_native_multi_head_attention" in graph_kinds(torch.jit.script(m))


@pytest.mark.parametrize("dtype", [torch.bool, torch.float32])
def test_self_attention_with_key_padding_mask(dtype):
    torch.manual_seed(2)
    m = SelfAttentionPadded(torch.nn.MultiheadAttention(8, 2, batch_first=True))
    mask = torch.tensor([[False, False, False, True], [False, True, True, True]])
    if dtype == torch.float32:
        mask = mask.float() * -1e4
    check_module(m, [torch.randn(2, 4, 8), mask])


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("mask_dtype", [torch.bool, torch.float32])
@pytest.mark.parametrize("kv_dims", [None, (6, 5)])
def test_cross_attention_with_masks(batch_first, mask_dtype, kv_dims):
    torch.manual_seed(3)
    kdim, vdim = kv_dims or (8, 8)
    mha = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first, kdim=kdim, vdim=vdim)
    batch, tgt, src = 2, 3, 4
    shape = (lambda n, e: (batch, n, e)) if batch_first else (lambda n, e: (n, batch, e))
    q, k = torch.randn(*shape(tgt, 8)), torch.randn(*shape(src, kdim))
    v = torch.randn(*shape(src, vdim))
    attn_mask = torch.tensor([[False, True, True, True], [False, False, True, True],
                              [False, False, False, True]])
    kpm = torch.tensor([[False, False, False, False], [False, False, False, True]])
    if mask_dtype == torch.float32:
        attn_mask = attn_mask.float() * -1e4
    # torch 1.13 cannot script a MultiheadAttention with kdim/vdim (its forward reads
    # in_proj_weight.dtype, which is None then): traced only.
    modes = ("trace",) if kv_dims else ("trace", "script")
    check_module(CrossAttention(mha), [q, k, v, attn_mask, kpm], modes=modes)


def test_cross_attention_with_a_mask_per_head():
    torch.manual_seed(4)
    mha = torch.nn.MultiheadAttention(8, 2)
    q, k = torch.randn(3, 2, 8), torch.randn(4, 2, 8)
    attn_mask = torch.rand(2 * 2, 3, 4) > 0.7
    attn_mask[:, :, 0] = False
    kpm = torch.zeros(2, 4, dtype=torch.bool)
    check_module(CrossAttention(mha), [q, k, k, attn_mask, kpm])


@pytest.mark.parametrize("need_weights", [True, False])
def test_cross_attention_without_masks(need_weights):
    torch.manual_seed(5)
    mha = torch.nn.MultiheadAttention(6, 3, batch_first=True)
    q, kv = torch.randn(2, 3, 6), torch.randn(2, 5, 6)
    m = CrossAttentionNoMask(mha) if need_weights else CrossAttentionNoWeights(mha)
    check_module(m, [q, kv, kv])


class Encoder(torch.nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, x):
        return self.encoder(x)


class EncoderMasked(torch.nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, x, mask, padding):
        return self.encoder(x, mask, padding)


class EncoderPadded(torch.nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, x, padding):
        return self.encoder(x, src_key_padding_mask=padding)


def layer(norm_first, activation, batch_first):
    return torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1, activation=activation,
                                            norm_first=norm_first, batch_first=batch_first)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_layer(norm_first, activation, batch_first):
    torch.manual_seed(6)
    check_module(Encoder(layer(norm_first, activation, batch_first)), [torch.randn(2, 5, 8)])


def test_encoder_layer_fast_path_is_the_fused_op():
    m = Encoder(layer(False, "relu", True)).eval()
    with torch.no_grad():
        traced = torch.jit.trace(m, torch.randn(2, 3, 8))
    assert "aten::_transformer_encoder_layer_fwd" in graph_kinds(traced)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_layer_with_masks(norm_first, batch_first):
    torch.manual_seed(7)
    m = EncoderMasked(layer(norm_first, "gelu", batch_first))
    x = torch.randn(2, 4, 8)
    batch = 2 if batch_first else 4
    length = 4 if batch_first else 2
    mask = torch.nn.Transformer.generate_square_subsequent_mask(length)
    padding = torch.zeros(batch, length, dtype=torch.bool)
    padding[0, -1] = True
    check_module(m, [x, mask, padding])


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_fast_path_with_key_padding_mask(norm_first):
    torch.manual_seed(8)
    m = EncoderPadded(layer(norm_first, "relu", True))
    padding = torch.tensor([[False, False, False, True], [False, False, False, False]])
    check_module(m, [torch.randn(2, 4, 8), padding])


@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_encoder(batch_first):
    torch.manual_seed(9)
    enc = torch.nn.TransformerEncoder(layer(False, "relu", batch_first), 2,
                                      norm=torch.nn.LayerNorm(8))
    check_module(Encoder(enc), [torch.randn(3, 4, 8)])


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder_with_masks(norm_first):
    torch.manual_seed(10)
    enc = torch.nn.TransformerEncoder(layer(norm_first, "gelu", False), 2,
                                      enable_nested_tensor=False)
    x = torch.randn(5, 2, 8)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(5)
    padding = torch.zeros(2, 5, dtype=torch.bool)
    padding[1, 3:] = True
    check_module(EncoderMasked(enc), [x, mask, padding])


def test_transformer_encoder_batch_first_with_padding_without_nested_tensors():
    torch.manual_seed(11)
    enc = torch.nn.TransformerEncoder(layer(False, "relu", True), 2, enable_nested_tensor=False)
    padding = torch.tensor([[False, False, True, True], [False, False, False, False]])
    check_module(EncoderPadded(enc), [torch.randn(2, 4, 8), padding])


@pytest.mark.parametrize("mode", ["trace", "script"])
def test_transformer_encoder_nested_tensor_fast_path_is_a_clear_error(mode):
    enc = torch.nn.TransformerEncoder(layer(False, "relu", True), 2).eval()
    m = EncoderPadded(enc).eval()
    x, padding = torch.randn(2, 4, 8), torch.tensor([[False, False, True, True]] * 2)
    with torch.no_grad():
        scripted = torch.jit.trace(m, (x, padding)) if mode == "trace" else torch.jit.script(m)
    try:
        mod, params = import_module(scripted, [x, padding])
    except anvil.UserError as e:
        assert "enable_nested_tensor=False" in str(e)
        return
    # TorchScript may compile the encoder without its nested path (after a trace of the same
    # class, it does): then the import must match the scripted module itself.
    assert mode == "script"
    with torch.no_grad():
        expected = scripted(x, padding).numpy()
    assert_close(run_anvil(mod, params, [x, padding]), [expected], "scripted")


# --- aten::scaled_dot_product_attention (torch 2.x) ----------------------------------------------

def sdpa_graph(with_mask, causal, scale=None, gqa=None):
    """A TorchScript graph description of one scaled_dot_product_attention node, as a torch 2.x
    save would give it (torch 1.13 has no such op)."""
    nodes, inputs = [], [{"id": 1, "name": "q", "type": {"kind": "tensor"}},
                         {"id": 2, "name": "k", "type": {"kind": "tensor"}},
                         {"id": 3, "name": "v", "type": {"kind": "tensor"}}]
    if with_mask:
        inputs.append({"id": 4, "name": "mask", "type": {"kind": "tensor"}})
    else:
        nodes.append({"kind": "prim::Constant", "inputs": [],
                      "outputs": [{"id": 4, "name": "none", "type": {"kind": "none"}}],
                      "value": {"none": True}})
    consts = [(5, {"float": 0.0}, "float"), (6, {"bool": causal}, "bool"),
              (7, {"float": scale} if scale is not None else {"none": True},
               "float" if scale is not None else "none")]
    if gqa is not None:
        consts.append((8, {"bool": gqa}, "bool"))
    for i, value, kind in consts:
        nodes.append({"kind": "prim::Constant", "inputs": [],
                      "outputs": [{"id": i, "name": f"c{i}", "type": {"kind": kind}}],
                      "value": value})
    args = [1, 2, 3, 4, 5, 6, 7] + ([8] if gqa is not None else [])
    nodes.append({"kind": "aten::scaled_dot_product_attention", "inputs": args,
                  "outputs": [{"id": 9, "name": "y", "type": {"kind": "tensor"}}],
                  "source": "model.py:3: F.scaled_dot_product_attention(q, k, v)"})
    return {"format": "anvil.torchscript-graph", "version": 1, "model": "Sdpa",
            "graph": {"inputs": inputs, "nodes": nodes, "outputs": [9]}}


def sdpa_reference(q, k, v, mask, causal, scale):
    scale = scale if scale is not None else 1.0 / math.sqrt(q.shape[-1])
    if k.shape[-3] != q.shape[-3]:
        rep = q.shape[-3] // k.shape[-3]
        k, v = np.repeat(k, rep, axis=-3), np.repeat(v, rep, axis=-3)
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        s = np.where(np.tril(np.ones((q.shape[-2], k.shape[-2]), bool)), s, -np.inf)
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == np.bool_ else s + mask
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def run_sdpa(q, k, v, mask=None, causal=False, scale=None, gqa=None):
    desc = sdpa_graph(mask is not None, causal, scale, gqa)
    ins = [q, k, v] + ([mask] if mask is not None else [])
    infos = frontend._input_infos(
        [(n, (list(t.shape), str(t.dtype))) for n, t in zip(["q", "k", "v", "mask"], ins)],
        "float32")
    mod, params = _anvil.from_torchscript(json.dumps(desc), {}, infos, "sdpa")
    return run_anvil(mod, params, [torch.from_numpy(t) for t in ins])


@pytest.mark.parametrize("mask", [None, "bool", "float"])
@pytest.mark.parametrize("causal", [False, True])
def test_scaled_dot_product_attention(mask, causal):
    rng = np.random.default_rng(0)
    q = rng.standard_normal((2, 3, 4, 8), dtype=np.float32)
    k = rng.standard_normal((2, 3, 5, 8), dtype=np.float32)
    v = rng.standard_normal((2, 3, 5, 6), dtype=np.float32)
    m = None
    if mask == "bool":
        m = rng.random((4, 5)) > 0.3
        m[:, 0] = True
    elif mask == "float":
        m = rng.standard_normal((2, 1, 4, 5), dtype=np.float32)
    out = run_sdpa(q, k, v, m, causal)
    assert_close(out, [sdpa_reference(q, k, v, m, causal, None).astype(np.float32)], "sdpa")


def test_scaled_dot_product_attention_scale_and_grouped_heads():
    rng = np.random.default_rng(1)
    q = rng.standard_normal((1, 4, 3, 8), dtype=np.float32)
    k = rng.standard_normal((1, 2, 3, 8), dtype=np.float32)
    v = rng.standard_normal((1, 2, 3, 8), dtype=np.float32)
    out = run_sdpa(q, k, v, None, True, 0.25, True)
    assert_close(out, [sdpa_reference(q, k, v, None, True, 0.25).astype(np.float32)], "gqa")
