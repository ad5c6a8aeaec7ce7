"""`torch.compile(model, backend="lamina", options={"target": "cuda:..."})`
routes tensors through the GPU function's DLPack calls; without a GPU it
is tested on the emulation path (`emulate`), CPU tensors in and out: the
compiled function gets the model's tensors themselves (no NumPy arrays in
between), and the outputs match eager PyTorch."""

import warnings

import numpy as np
import pytest
import torch
from torch import nn

from lamina.gpu_emulation import EmulatedCUDAFunction
from lamina.importers.torch_backend import LaminaFallbackWarning


class Block(nn.Module):
    """A pre-norm MLP block with a residual."""

    def __init__(self, dim=64):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return x + self.down(nn.functional.gelu(self.up(self.norm(x))))


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        x = nn.functional.max_pool2d(torch.relu(self.conv(x)), 2)
        return torch.softmax(self.fc(x.flatten(1)), -1)


@pytest.mark.parametrize("model,shape", [(Block, (2, 16, 64)), (ConvNet, (2, 3, 8, 8))])
def test_a_cuda_target_takes_and_returns_tensors(model, shape, monkeypatch):
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = model().eval()
    x = torch.randn(shape)
    given = []
    call = EmulatedCUDAFunction.__call__

    def spy(self, *args):
        given.append(args)
        return call(self, *args)

    monkeypatch.setattr(EmulatedCUDAFunction, "__call__", spy)
    compiled = torch.compile(model, backend="lamina",
                             options={"target": "cuda:sm_90a", "emulate": True})
    with warnings.catch_warnings():
        warnings.simplefilter("error", LaminaFallbackWarning)
        with torch.no_grad():
            outputs = compiled(x)
            expected = model(x)
    assert isinstance(outputs, torch.Tensor) and outputs.shape == expected.shape
    assert given and all(isinstance(a, torch.Tensor) for a in given[0])
    assert any(a.data_ptr() == x.data_ptr() for a in given[0])
    np.testing.assert_allclose(outputs.numpy(), expected.numpy(), rtol=1e-3, atol=1e-4)


def test_cuda_options_are_for_cuda_targets():
    torch._dynamo.reset()
    compiled = torch.compile(nn.Linear(4, 4), backend="lamina",
                             options={"target": "cpu", "emulate": True})
    with pytest.raises(Exception, match="emulate and graphs are for cuda targets, not 'cpu"):
        compiled(torch.randn(2, 4))
