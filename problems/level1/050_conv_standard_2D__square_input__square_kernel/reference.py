import torch
import torch.nn as nn


class Model(nn.Module):
    """The first convolution of AlexNet: Conv2d(3, 96, kernel_size=11, stride=4, padding=2), with bias."""

    def __init__(self, num_classes: int = 1000):
        super(Model, self).__init__()
        self.conv1 = nn.Conv2d(in_channels=3, out_channels=96, kernel_size=11, stride=4, padding=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv1(x)


batch_size = 256
num_classes = 1000
in_channels = 3
height = 224
width = 224


def get_inputs():
    x = torch.rand(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [num_classes]
