"""Writes the TorchScript models the CLI tests (torchscript_test.cpp) compile, with their inputs
and PyTorch's outputs, into OUT_DIR:

  small.pt            a traced CNN (conv, batch norm, relu, pool, linear), input0: [2, 3, 16, 16]
  small_input.npz     input0 for it;  small_output.npz: PyTorch's output
  two_inputs.pt       a scripted module forward(x: float32[4, 8], n: int64[8]) -> (x + n, x * 2)
  two_inputs_input.npz, two_inputs_output.npz
  batch.pt            a traced linear + relu over x: [batch, 8] (compiled with a symbolic batch)
  batch_input.npz     a batch of 3;  batch_output.npz
  unsupported.pt      a traced module using aten::linalg_inv once and aten::linalg_det twice

usage: python3 torchscript_models.py OUT_DIR
"""
import os
import sys

import numpy as np
import torch


class Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.pool = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        return self.fc(torch.flatten(self.pool(y), 1))


class TwoInputs(torch.nn.Module):
    def forward(self, x, n):
        return x + n, x * 2


class Batch(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        return torch.relu(self.fc(x))


class Unsupported(torch.nn.Module):
    def forward(self, x):
        y = torch.linalg.inv(x)
        return torch.linalg.det(y) + torch.linalg.det(x)


def save(out, name, module, inputs, names, outputs=True):
    module.eval()
    torch.jit.save(module, os.path.join(out, f"{name}.pt"))
    if not outputs:
        return
    np.savez(os.path.join(out, f"{name}_input.npz"),
             **{n: t.numpy() for n, t in zip(names, inputs)})
    with torch.no_grad():
        result = module(*inputs)
    if isinstance(result, torch.Tensor):
        result = (result,)
    np.savez(os.path.join(out, f"{name}_output.npz"),
             **{f"output{i}": r.numpy() for i, r in enumerate(result)})


def main(out):
    torch.manual_seed(0)
    small = Small()
    with torch.no_grad():  # batch-norm statistics that are not the identity
        small.bn.running_mean.uniform_(-0.5, 0.5)
        small.bn.running_var.uniform_(0.5, 2.0)
    small.eval()
    x = torch.randn(2, 3, 16, 16)
    save(out, "small", torch.jit.trace(small, x), [x], ["input0"])

    x, n = torch.randn(4, 8), torch.arange(8)
    save(out, "two_inputs", torch.jit.script(TwoInputs()), [x, n], ["x", "n"])

    batch = Batch().eval()
    save(out, "batch", torch.jit.trace(batch, torch.randn(2, 8)), [torch.randn(3, 8)], ["x"])

    save(out, "unsupported", torch.jit.trace(Unsupported(), torch.randn(2, 3, 3) + 3 * torch.eye(3)),
         [], [], outputs=False)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
