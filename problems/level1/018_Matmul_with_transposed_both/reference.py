import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix multiplication with both transposed: C = A.T @ B.T."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A.T, B.T)


K = 8192
M = 2048
N = 4096


def get_inputs():
    A = torch.rand(K, M)
    B = torch.rand(N, K)
    return [A, B]


def get_init_inputs():
    return []
