#!/usr/bin/python3
"""Generates the ONNX test models in this folder from PyTorch (Debian's python3-torch and
python3-torchvision), in the ONNX model-zoo layout: NAME/model.onnx and
NAME/test_data_set_0/{input_0.pb, output_0.pb}.

Run by hand when the set changes (the build never runs it): /usr/bin/python3 generate_models.py
(--dynamic writes only the models with symbolic dimensions).
Weights are random (seeded): the models test that Anvil computes what PyTorch computes, not
that a network classifies well. Also writes ../../models/imagenet_classes.txt.
"""
import os
import sys

import numpy as np
import onnx
import torch
import torchvision
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def calibrate(model, make_batch):
    """Sets batch-norm statistics from a few random batches, so that activations keep a useful
    scale through the network: with random weights and identity statistics they vanish or
    explode, and a test on near-zero outputs could not fail."""
    for m in model.modules():
        if isinstance(m, torch.nn.Linear):
            m.reset_parameters()  # torchvision's tiny classifier init would give near-zero logits
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(make_batch())
    model.eval()


def save(name, model, inputs, opset=13):
    model.eval()
    folder = os.path.join(HERE, name)
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    with torch.no_grad():
        outputs = model(*inputs)
    if isinstance(outputs, torch.Tensor):
        outputs = (outputs,)
    for o in outputs:
        assert o.float().std() > 1e-2, f"{name}: degenerate output (std {o.float().std()})"
    path = os.path.join(folder, "model.onnx")
    torch.onnx.export(model, tuple(inputs), path, opset_version=opset,
                      input_names=[f"input_{i}" for i in range(len(inputs))],
                      output_names=[f"output_{i}" for i in range(len(outputs))],
                      do_constant_folding=True)
    onnx.checker.check_model(onnx.load(path))
    for i, t in enumerate(inputs):
        tensor = numpy_helper.from_array(t.numpy(), f"input_{i}")
        with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
            f.write(tensor.SerializeToString())
    for i, t in enumerate(outputs):
        tensor = numpy_helper.from_array(t.numpy(), f"output_{i}")
        with open(os.path.join(data, f"output_{i}.pb"), "wb") as f:
            f.write(tensor.SerializeToString())
    print(f"{name}: {os.path.getsize(path) / 1e6:.1f} MB")


def save_dynamic(name, model, input_sets, dynamic_axes, opset=13):
    """A model with symbolic dimensions (dynamic_axes: input index -> {axis: name}), with one
    test_data_set_K per entry of input_sets, so one compiled library is checked at several
    sizes."""
    model.eval()
    folder = os.path.join(HERE, name)
    first = input_sets[0]
    with torch.no_grad():
        outputs = model(*first)
    if isinstance(outputs, torch.Tensor):
        outputs = (outputs,)
    input_names = [f"input_{i}" for i in range(len(first))]
    output_names = [f"output_{i}" for i in range(len(outputs))]
    axes = {input_names[i]: a for i, a in dynamic_axes.items()}
    for k, o in enumerate(output_names):
        axes[o] = dynamic_axes.get(0, {})
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    torch.onnx.export(model, tuple(first), path, opset_version=opset, input_names=input_names,
                      output_names=output_names, dynamic_axes=axes, do_constant_folding=True)
    onnx.checker.check_model(onnx.load(path))
    for k, inputs in enumerate(input_sets):
        data = os.path.join(folder, f"test_data_set_{k}")
        os.makedirs(data, exist_ok=True)
        with torch.no_grad():
            outs = model(*inputs)
        if isinstance(outs, torch.Tensor):
            outs = (outs,)
        for i, t in enumerate(inputs):
            with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(t.numpy(), f"input_{i}").SerializeToString())
        for i, t in enumerate(outs):
            assert t.float().std() > 1e-2, f"{name}: degenerate output"
            with open(os.path.join(data, f"output_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(t.numpy(), f"output_{i}").SerializeToString())
    print(f"{name}: {os.path.getsize(path) / 1e6:.2f} MB, {len(input_sets)} data sets")


class SmallCNN(torch.nn.Module):
    """Conv, batch norm, pooling and a classifier: the layers of a CNN, small enough to test
    at several batch sizes quickly."""

    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2), torch.nn.Conv2d(8, 16, 3, stride=2), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(16, 10))

    def forward(self, x):
        return self.features(x)


def dynamic_models():
    cnn = SmallCNN()
    calibrate(cnn, lambda: torch.randn(8, 3, 32, 32))
    save_dynamic("cnn_dynamic_batch", cnn,
                 [[torch.randn(b, 3, 32, 32)] for b in (1, 3, 8)], {0: {0: "n"}})
    encoder = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(
        32, 2, dim_feedforward=64, dropout=0.0, batch_first=True), 2)
    save_dynamic("transformer_dynamic_batch_seq", encoder,
                 [[torch.randn(b, s, 32)] for b, s in ((1, 5), (3, 7), (8, 12))],
                 {0: {0: "n", 1: "seq"}})


class Encoder(torch.nn.Module):
    """A BERT-style encoder: token + position embeddings, transformer layers, pooled head."""

    def __init__(self, vocab=500, d_model=64, heads=4, layers=2, seq=16, activation="gelu"):
        super().__init__()
        self.tokens = torch.nn.Embedding(vocab, d_model)
        self.positions = torch.nn.Parameter(torch.randn(1, seq, d_model) * 0.02)
        layer = torch.nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=4 * d_model,
                                                 dropout=0.0, activation=activation,
                                                 batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers)
        self.norm = torch.nn.LayerNorm(d_model)
        self.head = torch.nn.Linear(d_model, 10)

    def forward(self, ids):
        x = self.tokens(ids) + self.positions
        x = self.norm(self.encoder(x))
        return self.head(x[:, 0])


def main():
    torch.manual_seed(0)
    if sys.argv[1:] == ["--dynamic"]:
        return dynamic_models()
    image = torch.randn(1, 3, 224, 224)
    vision = {
        "squeezenet1_1": torchvision.models.squeezenet1_1,
        "mobilenet_v3_small": torchvision.models.mobilenet_v3_small,
        "shufflenet_v2_x0_5": torchvision.models.shufflenet_v2_x0_5,
        "mnasnet0_5": torchvision.models.mnasnet0_5,
        "googlenet": lambda: torchvision.models.googlenet(aux_logits=False, init_weights=True),
        "regnet_x_400mf": torchvision.models.regnet_x_400mf,
    }
    for name, make in vision.items():
        model = make()
        calibrate(model, lambda: torch.randn(4, 3, 224, 224))
        save(name, model, [image])
    ids = torch.randint(0, 500, (1, 16))
    save("bert_tiny_gelu", Encoder(), [ids])
    save("transformer_encoder_relu", torch.nn.Sequential(
        torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(
            32, 2, dim_feedforward=64, dropout=0.0, batch_first=True), 3)),
        [torch.randn(2, 7, 32)])
    from torchvision.models import _meta
    labels = os.path.join(HERE, "..", "..", "models", "imagenet_classes.txt")
    os.makedirs(os.path.dirname(labels), exist_ok=True)
    with open(labels, "w") as f:
        f.write("\n".join(_meta._IMAGENET_CATEGORIES) + "\n")


if __name__ == "__main__":
    sys.exit(main())
