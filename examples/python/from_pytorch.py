"""Walk-through: compile a PyTorch model (TVM's "Compile PyTorch Models" tutorial, in Anvil).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/from_pytorch.py

A torchvision ResNet-18 is traced with torch.jit.trace, imported with
anvil.frontend.from_pytorch, built for the CPU and run with the graph executor; its top-1 class is
printed next to PyTorch's own. Nothing is downloaded: the weights are random, and the batch-norm
layers' running statistics are calibrated on random images first, as training would have set
them (the defaults, mean 0 and variance 1, normalize nothing: the activations' scale drifts from
layer to layer). The class names are torchvision's ImageNet categories, which ship with
torchvision. PyTorch is needed to import the model only; the compiled library runs without it.
"""
import numpy as np
import torch
import torchvision

import anvil
from anvil import frontend


def calibrated_resnet18(seed=0, batches=4, batch_size=8):
    """ResNet-18 with random weights and batch-norm statistics measured on random images."""
    torch.manual_seed(seed)
    model = torchvision.models.resnet18(weights=None)
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.momentum = None  # the running statistics are plain averages over the batches
    model.train()
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn(batch_size, 3, 224, 224))
    return model.eval()


def main(seed=0):
    # 1. The PyTorch model, traced into TorchScript.
    model = calibrated_resnet18(seed)
    input_shape = [1, 3, 224, 224]
    input_data = torch.randn(input_shape)
    scripted_model = torch.jit.trace(model, input_data).eval()

    # 2. Import: the graph becomes a graph IRModule; the weights come back as params, named as
    # in PyTorch's state_dict ("layer1.0.conv1.weight").
    input_name = "input0"
    shape_list = [(input_name, tuple(input_shape))]
    mod, params = frontend.from_pytorch(scripted_model, shape_list)
    print(f"imported {len(params)} weight tensors: {', '.join(list(params)[:3])}, ...")

    # 3. Build: the params are bound to main as constants, then optimized and compiled.
    with anvil.PassContext(opt_level=3):
        lib = anvil.build(mod, target="llvm", params=params)

    # 4. Run with the graph executor.
    dev = anvil.cpu(0)
    m = anvil.runtime.GraphModule(lib["default"](dev))
    img = input_data.numpy()
    m.set_input(input_name, anvil.nd.array(img.astype("float32")))
    m.run()
    anvil_output = m.get_output(0).numpy()

    # 5. Compare with PyTorch.
    with torch.no_grad():
        torch_output = model(torch.from_numpy(img)).numpy()
    categories = torchvision.models.ResNet18_Weights.IMAGENET1K_V1.meta["categories"]
    top1_anvil = int(np.argmax(anvil_output[0]))
    top1_torch = int(np.argmax(torch_output[0]))
    print(f"Anvil top-1 id: {top1_anvil}, class name: {categories[top1_anvil]}")
    print(f"PyTorch top-1 id: {top1_torch}, class name: {categories[top1_torch]}")
    err = float(np.abs(anvil_output - torch_output).max())
    print(f"max abs difference from PyTorch: {err:.3g} (largest |output| "
          f"{float(np.abs(torch_output).max()):.3g})")
    return top1_anvil, top1_torch, anvil_output, torch_output


if __name__ == "__main__":
    main()
