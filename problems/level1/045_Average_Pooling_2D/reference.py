import torch
import torch.nn as nn


class Model(nn.Module):
    """Applies AvgPool2d. stride=None means stride = kernel_size = 11."""

    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0):
        super(Model, self).__init__()
        self.avg_pool = nn.AvgPool2d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.avg_pool(x)


batch_size = 16
channels = 64
height = 2048
width = 2048
kernel_size = 11
padding = 0


def get_inputs():
    x = torch.rand(batch_size, channels, height, width)
    return [x]


def get_init_inputs():
    return [kernel_size, padding]
