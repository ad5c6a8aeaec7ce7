"""bf16 models through `from_torch` (`model.to(torch.bfloat16)`): a CNN
(convolution, batch norm folded into it, relu, pooling, linear) and a
transformer encoder layer compile with their bf16 weights as constants and
match eager PyTorch in bf16.

Tolerance: eager rounds every op's result to bf16, the compiled program
only where nn's ops round (fused groups keep f32 inside), so outputs may
differ by a few roundings: at most two bf16 steps (2^-7 relative) at the
largest output's magnitude."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
import torch

import lamina


def _bf16(t: torch.Tensor) -> np.ndarray:
    return t.float().numpy().astype(ml_dtypes.bfloat16)


def _check(module: torch.nn.Module, x: torch.Tensor) -> None:
    with torch.no_grad():
        expected = module(x).float().numpy()
        f = lamina.compile(lamina.from_torch(module, (x,), params="constants"))
    actual = f(_bf16(x))
    assert actual.dtype == ml_dtypes.bfloat16 and actual.shape == expected.shape
    step = 2.0 ** (math.floor(math.log2(np.abs(expected).max())) - 7)
    assert np.abs(actual.astype(np.float32) - expected).max() <= 2 * step


def test_cnn():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
        torch.nn.Conv2d(16, 16, 3, stride=2, padding=1, groups=16), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(16, 10))
    model.eval().to(torch.bfloat16)
    with torch.no_grad():  # batch norm statistics that are not the identity
        model[1].running_mean.uniform_(-0.5, 0.5)
        model[1].running_var.uniform_(0.5, 2.0)
    _check(model, torch.randn(2, 3, 16, 16).to(torch.bfloat16))


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder_layer(norm_first):
    torch.manual_seed(1)
    layer = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True,
                                             norm_first=norm_first)
    _check(layer.eval().to(torch.bfloat16), torch.randn(2, 10, 64).to(torch.bfloat16))
