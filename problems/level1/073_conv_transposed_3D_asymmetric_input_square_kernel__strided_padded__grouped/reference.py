import torch
import torch.nn as nn


class Model(nn.Module):
    """Transposed 3D convolution, strided and padded. KernelBench quirk: get_init_inputs passes six values, the sixth (groups = 4) binds to output_padding, which the layer does not receive: the layer runs with groups = 1 and output_padding = 0."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0, output_padding: int = 0, groups: int = 1, bias: bool = False):
        super(Model, self).__init__()
        self.conv_transpose3d = nn.ConvTranspose3d(in_channels, out_channels, kernel_size=(kernel_size, kernel_size, kernel_size), stride=stride, padding=padding, groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_transpose3d(x)


batch_size = 4
in_channels = 32
out_channels = 32
kernel_size = 3
stride = 2
padding = 1
groups = 4
depth = 32
height = 64
width = 128


def get_inputs():
    x = torch.rand(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, groups]
