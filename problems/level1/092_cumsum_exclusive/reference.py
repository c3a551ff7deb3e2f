import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    """
    A model that performs an exclusive cumulative sum (does not include the current element).

    Parameters:
        dim (int): The dimension along which to perform the scan operation.
    """

    def __init__(self, dim):
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x):
        exclusive_cumsum = torch.cat((torch.zeros_like(x.select(self.dim, 0).unsqueeze(self.dim)), x), dim=self.dim).narrow(self.dim, 0, x.size(self.dim))
        return torch.cumsum(exclusive_cumsum, dim=self.dim)

batch_size = 32768
length = 32768
input_shape = (length,)
dim = 1

def get_inputs():
    return [torch.rand(batch_size, *input_shape)]

def get_init_inputs():
    return [dim]
