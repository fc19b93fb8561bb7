"""The torchvision 0.14 networks the PyTorch importer is tested on, and how to make them.

Weights are random (no download) with batch-norm statistics calibrated on random batches, so that
activations stay in a realistic range and the top-1 class is well defined. Each family has one
member in the CI set (`ci=True`); `scripts/test.sh --full` runs every member.
"""
import torch
import torchvision

# (constructor name, input size, in the CI set)
CLASSIFICATION = [
    ("resnet18", 224, True), ("resnet34", 224, False), ("resnet50", 224, False),
    ("resnet101", 224, False), ("resnet152", 224, False),
    ("resnext50_32x4d", 224, True), ("resnext101_32x8d", 224, False),
    ("resnext101_64x4d", 224, False),
    ("wide_resnet50_2", 224, True), ("wide_resnet101_2", 224, False),
    ("vgg11", 224, True), ("vgg11_bn", 224, False), ("vgg13", 224, False),
    ("vgg13_bn", 224, False), ("vgg16", 224, False), ("vgg16_bn", 224, False),
    ("vgg19", 224, False), ("vgg19_bn", 224, False),
    ("alexnet", 224, True),
    ("densenet121", 224, True), ("densenet161", 224, False), ("densenet169", 224, False),
    ("densenet201", 224, False),
    ("googlenet", 224, True),
    ("inception_v3", 299, True),
    ("mobilenet_v2", 224, True),
    ("mobilenet_v3_small", 224, True), ("mobilenet_v3_large", 224, False),
    ("mnasnet0_5", 224, True), ("mnasnet0_75", 224, False), ("mnasnet1_0", 224, False),
    ("mnasnet1_3", 224, False),
    ("shufflenet_v2_x0_5", 224, True), ("shufflenet_v2_x1_0", 224, False),
    ("shufflenet_v2_x1_5", 224, False), ("shufflenet_v2_x2_0", 224, False),
    ("squeezenet1_0", 224, False), ("squeezenet1_1", 224, True),
    ("efficientnet_b0", 224, True), ("efficientnet_b1", 240, False),
    ("efficientnet_b2", 260, False), ("efficientnet_b3", 300, False),
    ("efficientnet_b4", 380, False), ("efficientnet_b5", 456, False),
    ("efficientnet_b6", 528, False), ("efficientnet_b7", 600, False),
    ("efficientnet_v2_s", 384, True), ("efficientnet_v2_m", 480, False),
    ("efficientnet_v2_l", 480, False),
    ("regnet_x_400mf", 224, True), ("regnet_y_400mf", 224, True),
    ("regnet_x_800mf", 224, False), ("regnet_y_800mf", 224, False),
    ("regnet_x_1_6gf", 224, False), ("regnet_y_1_6gf", 224, False),
    ("regnet_x_3_2gf", 224, False), ("regnet_y_3_2gf", 224, False),
    ("regnet_x_8gf", 224, False), ("regnet_y_8gf", 224, False),
    ("regnet_x_16gf", 224, False), ("regnet_y_16gf", 224, False),
    ("regnet_x_32gf", 224, False), ("regnet_y_32gf", 224, False),
    ("convnext_tiny", 224, True), ("convnext_small", 224, False),
    ("convnext_base", 224, False), ("convnext_large", 224, False),
    ("vit_b_32", 224, True), ("vit_b_16", 224, False), ("vit_l_32", 224, False),
    ("vit_l_16", 224, False),
    ("swin_t", 224, True), ("swin_s", 224, False), ("swin_b", 224, False),
    ("swin_v2_t", 256, False), ("swin_v2_s", 256, False), ("swin_v2_b", 256, False),
    ("maxvit_t", 224, False),
]

# Segmentation networks: the "out" map (and "aux" where the model has one).
SEGMENTATION = [
    ("fcn_resnet50", 224, True), ("fcn_resnet101", 224, False),
    ("deeplabv3_resnet50", 224, False), ("deeplabv3_resnet101", 224, False),
    ("deeplabv3_mobilenet_v3_large", 224, True),
    ("lraspp_mobilenet_v3_large", 224, True),
]


def make(name, size, segmentation=False, seed=0):
    """The network in eval mode with calibrated batch-norm statistics, and an input batch."""
    torch.manual_seed(seed)
    if segmentation:
        model = getattr(torchvision.models.segmentation, name)(
            weights=None, weights_backbone=None, num_classes=21, aux_loss=None)
    else:
        kwargs = {"aux_logits": False, "init_weights": True} if name in (
            "googlenet", "inception_v3") else {}
        model = getattr(torchvision.models, name)(weights=None, **kwargs)
    has_bn = any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm) for m in model.modules())
    if has_bn:
        # Running statistics of random data: without them (mean 0, variance 1) deep networks'
        # activations grow or vanish layer after layer.
        model.train()
        with torch.no_grad():
            model(torch.randn(2, 3, size, size))
    model.eval()
    x = torch.randn(1, 3, size, size)
    return model, x


class OutputOf(torch.nn.Module):
    """A segmentation model's dict output as a tuple (tracing needs tensors or tuples)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        out = self.model(x)
        if "aux" in out:
            return out["out"], out["aux"]
        return out["out"]
