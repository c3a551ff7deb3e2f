import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix multiplication of lower triangular matrices; the result is lower triangular."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.tril(torch.matmul(A, B))


N = 4096


def get_inputs():
    A = torch.tril(torch.rand(N, N))
    B = torch.tril(torch.rand(N, N))
    return [A, B]


def get_init_inputs():
    return []
