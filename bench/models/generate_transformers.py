#!/usr/bin/python3
"""The transformer models of the auto-scheduler benchmark (bench/README.md), generated here
rather than committed (tens of megabytes each):

    /usr/bin/python3 bench/models/generate_transformers.py [OUT_DIR [MODEL...]]

OUT_DIR (default bench/models/generated, ignored by git) gets one directory per model (the MODELs
named, else all but the two large ones), in the model-zoo layout tune_compare.py and compare.py
read: model.onnx and test_data_set_0/ with input_0.pb and output_0.pb (PyTorch's output on a
fixed random input).

- encoder_d256_t128: nn.TransformerEncoder, d=256, 4 heads, FFN 1024, 2 layers, 128 tokens
  (the small encoder of the issues' tables).
- bert_base_2l_t128: two layers of BERT-base's shape (d=768, 12 heads, FFN 3072, GELU), 128
  tokens: every kernel shape of BERT-base, a sixth of its time.
- bert_base_t128 (only when named): BERT-base's encoder, 12 layers (440 MB), the transformer
  issue's "BERT-base-style encoder".
- bert_base_2l_dyn (only when named): bert_base_2l_t128 exported with a symbolic sequence length
  ("seq"), its test data at 128 tokens: the dynamic-shape path of dynamic_compare.py.
- vit_s16: a ViT-S/16 (torchvision's VisionTransformer: 224x224 image, 16x16 patches, 12 layers,
  d=384, 6 heads, MLP 1536).
- vit_b16 (only when named): ViT-B/16 (torchvision's vit_b_16: 12 layers, d=768, 12 heads, MLP
  3072; 330 MB), the model of the issues' "percent of the FMA peak" figures.

The weights are random (fixed seeds): the benchmark measures time, not accuracy. None of these
shapes is in the cost model's training set (data/cost_model/generate_workloads.py), so the
pre-trained model is evaluated on kernels it has not seen.
"""
import os
import sys

import numpy as np
import onnx
import torch
import torchvision
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def encoder(d_model, heads, ff, layers, tokens, activation):
    layer = torch.nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=ff, dropout=0.0,
                                             activation=activation, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, layers)
    # TransformerEncoder copies one layer: without new weights per layer, the ONNX exporter
    # stores one set that every layer shares (a model a twelfth of BERT-base's size).
    for m in model.modules():
        if isinstance(m, torch.nn.Linear):
            m.reset_parameters()
        elif isinstance(m, torch.nn.MultiheadAttention):
            m._reset_parameters()
    return model.eval(), torch.randn(1, tokens, d_model)


def vit(num_heads, hidden_dim, mlp_dim):
    model = torchvision.models.VisionTransformer(image_size=224, patch_size=16, num_layers=12,
                                                 num_heads=num_heads, hidden_dim=hidden_dim,
                                                 mlp_dim=mlp_dim)
    # torchvision zero-initializes the classifier, which would make every output 0 and the
    # test data check nothing.
    torch.nn.init.normal_(model.heads.head.weight, std=0.02)
    return model.eval(), torch.randn(1, 3, 224, 224)


MODELS = {
    "encoder_d256_t128": lambda: encoder(256, 4, 1024, 2, 128, "relu"),
    "bert_base_2l_t128": lambda: encoder(768, 12, 3072, 2, 128, "gelu"),
    "bert_base_t128": lambda: encoder(768, 12, 3072, 12, 128, "gelu"),
    "bert_base_2l_dyn": lambda: encoder(768, 12, 3072, 2, 128, "gelu"),
    "vit_s16": lambda: vit(6, 384, 1536),
    "vit_b16": lambda: vit(12, 768, 3072),
}


LARGE = ("bert_base_t128", "vit_b16", "bert_base_2l_dyn")  # made only when named
DYNAMIC = {"bert_base_2l_dyn": {"x": {1: "seq"}}}  # exported with these axes symbolic


def save(out, name, model, x):
    d = os.path.join(out, name)
    data = os.path.join(d, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    # Not under no_grad: PyTorch then runs its fused encoder layer, which has no ONNX export.
    torch.onnx.export(model, (x,), os.path.join(d, "model.onnx"), opset_version=13,
                      input_names=["x"], output_names=["y"], dynamic_axes=DYNAMIC.get(name))
    y = model(x).detach().numpy()
    for stem, value in (("input_0", x.numpy()), ("output_0", y)):
        with open(os.path.join(data, stem + ".pb"), "wb") as f:
            f.write(numpy_helper.from_array(np.ascontiguousarray(value)).SerializeToString())
    print(d)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "generated")
    if out in MODELS:
        sys.exit(f"{out} is a model name: give the output directory first "
                 "(bench/models/generated)")
    names = sys.argv[2:] or [n for n in MODELS if n not in LARGE]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        sys.exit(f"unknown model {', '.join(unknown)}; the models: {', '.join(MODELS)}")
    for name in names:
        make = MODELS[name]
        torch.manual_seed(0)
        model, x = make()
        save(out, name, model, x)


if __name__ == "__main__":
    main()
