#!/usr/bin/python3
"""The generated workloads of the cost model's training set (scripts/train_cost_model.sh).

    /usr/bin/python3 data/cost_model/generate_workloads.py OUT_DIR

Transformer encoders and an MLP of sizes other than the benchmark's (bench/README.md evaluates
the pre-trained model on kernels it was not trained on), exported to ONNX with fixed seeds, so
that the same command makes the same models. The CNNs and small transformers of the training
set are the test suite's (tests/models) and ../shared/models.
"""
import os
import sys

import torch


def encoder(d_model, heads, ff, tokens, activation):
    layer = torch.nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=ff, dropout=0.0,
                                             activation=activation, batch_first=True)
    return torch.nn.TransformerEncoder(layer, 1).eval(), torch.randn(1, tokens, d_model)


def mlp():
    model = torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.GELU(),
                                torch.nn.Linear(2048, 512), torch.nn.LayerNorm(512)).eval()
    return model, torch.randn(32, 512)


WORKLOADS = {
    "encoder_d128_t64": lambda: encoder(128, 4, 512, 64, "relu"),
    "encoder_d384_t96": lambda: encoder(384, 6, 1536, 96, "gelu"),
    "mlp_512_2048": mlp,
}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    torch.manual_seed(0)
    for name, make in WORKLOADS.items():
        model, x = make()
        os.makedirs(os.path.join(out, name), exist_ok=True)
        path = os.path.join(out, name, "model.onnx")
        # Not under no_grad: PyTorch then runs its fused encoder layer, which has no ONNX export.
        torch.onnx.export(model, (x,), path, opset_version=13, input_names=["x"],
                          output_names=["y"])
        print(path)


if __name__ == "__main__":
    main()
