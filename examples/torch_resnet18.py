"""torchvision's resnet18 (random weights, eval mode) through Lamina.

    python examples/torch_resnet18.py

Imports the model with `lamina.from_torch` (torch.export; the weights as
arguments), compiles it for this CPU, then runs it again through
`torch.compile(model, backend="lamina")`, and compares both with PyTorch
eager. Needs the `torch` extra (`pip install 'lamina[torch]'`).
"""

import time

import numpy as np
import torch
import torchvision

import lamina
from lamina.importers.torch_import import weights


def main():
    torch.manual_seed(0)
    model = torchvision.models.resnet18().eval()
    x = torch.randn(1, 3, 64, 64)
    with torch.no_grad():
        expected = model(x).numpy()

    start = time.perf_counter()
    module = lamina.from_torch(model, (x,))
    imported = time.perf_counter()
    f = lamina.compile(module)
    compiled = time.perf_counter()
    y = f(*weights(module, model), x.numpy())
    print(f"from_torch: import {imported - start:.1f} s, compile {compiled - imported:.1f} s, "
          f"max abs error vs eager {np.abs(y - expected).max():.2e}")

    start = time.perf_counter()
    fast = torch.compile(model, backend="lamina")
    with torch.no_grad():
        y = fast(x).numpy()
    print(f"torch.compile(backend='lamina'): first call {time.perf_counter() - start:.1f} s, "
          f"max abs error vs eager {np.abs(y - expected).max():.2e}")
    print(f"top class: {expected.argmax()} (eager), {y.argmax()} (Lamina)")
    assert np.allclose(y, expected, rtol=1e-4, atol=1e-4)


if __name__ == "__main__":
    main()
