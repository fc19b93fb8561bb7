"""Writes the seed descriptions of the torchscript_graph fuzz harness (the .json files beside this
script) with the TorchScript reader, python/anvil/_torchscript.py, from small modules:

  cnn.json         traced: conv, batch norm, relu_, max pool, adaptive pool, flatten, linear
  control.json     scripted: a data-dependent if, a loop, lists, a tuple output
  sizes.json       scripted: x.size(0) in a view, int arithmetic, two inputs (one int64)

The harness makes up the tensors (zeros, of the recorded shapes) and gives each input of forward
the shape and dtype its type records, so the seeds record them (a module read by the importer
need not). Rerun after a change of the description format:  python3 make_seeds.py
"""
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "python", "anvil"))
import _torchscript  # noqa: E402


class Cnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.relu = torch.nn.ReLU(inplace=True)
        self.pool = torch.nn.MaxPool2d(2)
        self.avg = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        y = self.pool(self.relu(self.bn(self.conv(x))))
        return self.fc(torch.flatten(self.avg(y), 1))


class Control(torch.nn.Module):
    def forward(self, x):
        outs = [x]
        if bool(x.sum() > 0):
            y = x * 2
        else:
            y = x - 1
        for i in range(3):
            y = y + i
            outs.append(y)
        return y, outs[1]


class Sizes(torch.nn.Module):
    def forward(self, x, n):
        b = x.size(0)
        y = x.view(b, -1) + n
        return y * (b // 2 + 1)


def relative_sources(block):
    """Source lines name this script by its base name, not where the checkout happens to be."""
    for node in block["nodes"]:
        if "source" in node:
            node["source"] = node["source"].replace(os.path.join(HERE, ""), "")
        for b in node.get("blocks", []):
            relative_sources(b)


def write(name, module, inputs):
    description, _ = _torchscript.read_module(module)
    relative_sources(description["graph"])
    for value, (shape, dtype) in zip(description["graph"]["inputs"], inputs):
        value["type"].update(shape=shape, dtype=dtype)
    with open(os.path.join(HERE, f"{name}.json"), "w") as f:
        json.dump(description, f)


def main():
    cnn = Cnn().eval()
    write("cnn", torch.jit.trace(cnn, torch.randn(1, 3, 8, 8)), [([1, 3, 8, 8], "float32")])
    write("control", torch.jit.script(Control()), [([2, 3], "float32")])
    write("sizes", torch.jit.script(Sizes()), [([4, 2, 3], "float32"), ([6], "int64")])


if __name__ == "__main__":
    main()
