import torch
import torch.nn as nn


class Model(nn.Module):
    """diag(A) @ B: a diagonal matrix (given by its diagonal) times a matrix."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.diag(A) @ B


N = 4096
M = 4096


def get_inputs():
    A = torch.rand(N)
    B = torch.rand(N, M)
    return [A, B]


def get_init_inputs():
    return []
